"""MCP servers as tools (SPEC §11): the official ``mcp`` SDK as the client, stdio and
streamable HTTP, every server's tools offered fresh at every request.

`McpServers` is the `ToolSource` a session or an `Agent` uses; `McpServerConfig` /
`parse_server` read Claude Code's ``mcpServers`` entries; `McpTool` is one server tool as a core
`Tool`. Connections live on one background event loop (`loop`), so neither a server's start nor a
long call blocks the kernel.
"""

from typing import Any

from .config import McpServerConfig, parse_server, parse_servers, project_servers
from .servers import McpServers, ServerStatus


def __getattr__(name: str) -> Any:
    if name == "McpTool":  # imports jsonschema: only when asked for
        from .tool import McpTool

        return McpTool
    raise AttributeError(name)


__all__ = [
    "McpServerConfig",
    "McpServers",
    "McpTool",
    "ServerStatus",
    "parse_server",
    "parse_servers",
    "project_servers",
]
