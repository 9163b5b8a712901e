"""``ListMcpResources`` and ``ReadMcpResource``: the resources of the connected servers.

Offered only while a connected server has resources (`McpServers.tools`). Listing reads what
the servers announced at their handshake — nothing is sent, so it is read-only. Reading sends
``resources/read`` to the server: it is allowed like a read-only tool for a server configured
with ``"trust": true`` and asks otherwise (a server can do anything when asked).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from ..core.permission_types import PermissionDecision
from ..core.tool import Progress, Tool, ToolResult, ToolUseContext
from . import loop
from .results import map_resource_contents

if TYPE_CHECKING:
    from .servers import McpServers


class ListMcpResourcesInput(BaseModel):
    server: str | None = Field(None, description="Only this server's resources (default: every server's).")


class ReadMcpResourceInput(BaseModel):
    server: str = Field(description="The MCP server's name, as ListMcpResources shows it.")
    uri: str = Field(description="The resource URI, as ListMcpResources shows it.")


class ListMcpResources(Tool[ListMcpResourcesInput]):
    name = "ListMcpResources"
    description = ("List the resources (documents, data, files) that the connected MCP servers offer: "
                   "server, URI, name, type and description of each. Read one with ReadMcpResource.")
    input_model = ListMcpResourcesInput

    def __init__(self, servers: "McpServers") -> None:
        self._servers = servers

    def is_read_only(self, input: ListMcpResourcesInput) -> bool:
        return True

    def is_concurrency_safe(self, input: ListMcpResourcesInput) -> bool:
        return True

    async def call(self, input: ListMcpResourcesInput, ctx: ToolUseContext, progress: Progress) -> Any:
        rows = []
        for name in self._servers.names():
            connection = self._servers.connection(name)
            if connection is None or connection.state != "connected" or not connection.has_resources:
                continue
            if input.server is not None and input.server != name:
                continue
            for r in connection.resources:
                row = {"server": name, "uri": str(r.uri), "name": r.name}
                if r.mime_type:
                    row["mimeType"] = r.mime_type
                if r.description:
                    row["description"] = r.description
                rows.append(row)
        if input.server is not None and not rows:
            return ToolResult(f"No connected MCP server named {input.server!r} has resources.", is_error=True)
        return json.dumps(rows, ensure_ascii=False, indent=1) if rows else "(no resources)"


class ReadMcpResource(Tool[ReadMcpResourceInput]):
    name = "ReadMcpResource"
    description = "Read one resource of a connected MCP server by its URI (see ListMcpResources)."
    input_model = ReadMcpResourceInput
    interrupt_behavior = "cancel"

    def __init__(self, servers: "McpServers") -> None:
        self._servers = servers

    def _trusted(self, input: ReadMcpResourceInput) -> bool:
        connection = self._servers.connection(input.server)
        return connection is not None and connection.config.trust

    def is_read_only(self, input: ReadMcpResourceInput) -> bool:
        return self._trusted(input)

    def is_concurrency_safe(self, input: ReadMcpResourceInput) -> bool:
        return self._trusted(input)

    async def check_permissions(self, input: ReadMcpResourceInput, ctx: ToolUseContext) -> PermissionDecision:
        if self._trusted(input):
            return PermissionDecision.passthrough()
        return PermissionDecision.ask(f"reading {input.uri} sends a request to the MCP server {input.server!r}, "
                                      "which is not trusted (\"trust\": true)", "tool")

    async def call(self, input: ReadMcpResourceInput, ctx: ToolUseContext, progress: Progress) -> Any:
        from ..errors import McpServerGone

        connection = self._servers.connection(input.server)
        if connection is None:
            known = ", ".join(self._servers.names()) or "none"
            return ToolResult(f"No MCP server named {input.server!r} (servers: {known}).", is_error=True)
        try:
            result = await loop.call(connection.read_resource(input.uri))
        except McpServerGone as exc:
            return ToolResult(str(exc), is_error=True)
        except Exception as exc:
            return ToolResult(f"MCP server {input.server!r} could not read {input.uri}: {type(exc).__name__}: {exc}",
                              is_error=True)
        return map_resource_contents(list(result.contents))
