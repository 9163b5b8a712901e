"""`McpTool`: one tool of an MCP server, as a core `Tool`.

Its name, description and schema are plain attributes taken from the server's listing (cheap to
read: a deferred-tools source can list names without building anything). Input is checked
against the server's JSON Schema (`schema`); permissions ask by default — a server's
``readOnlyHint`` is believed only when its configuration says ``"trust": true`` (then the tool is
read-only, concurrency-safe and allowed like any read-only tool), and ``destructiveHint`` /
``openWorldHint`` are named in the approval's reason. The call goes to the server's connection
on the MCP loop; progress notifications become the card's progress bar, and a Stop cancels the
call (the SDK sends ``notifications/cancelled``).
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Callable

from pydantic import BaseModel, ConfigDict

from ..core.permission_types import PermissionDecision
from ..core.tool import Progress, Tool, ToolResult, ToolUseContext
from . import loop
from .results import map_call_result
from .schema import check_input

if TYPE_CHECKING:
    from .connection import McpConnection


class McpArguments(BaseModel):
    """A call's arguments as the server's schema allowed them (all kept as extra fields)."""

    model_config = ConfigDict(extra="allow")


class McpTool(Tool[McpArguments]):
    """A tool ``mcp__<server>__<tool>`` backed by a live server connection."""

    input_model = McpArguments
    interrupt_behavior = "cancel"

    def __init__(self, *, name: str, server: str, mcp_name: str, description: str, schema: dict[str, Any],
                 validator: Any, annotations: Any, trust: bool, timeout: float, rule_group: str,
                 connection: Callable[[], "McpConnection | None"]) -> None:
        self.name = name
        self.server = server
        self.mcp_name = mcp_name
        self.description = description
        self.schema = schema
        self.rule_group = rule_group
        self._validator = validator
        self.read_only_hint = bool(getattr(annotations, "read_only_hint", None))
        self.destructive_hint = getattr(annotations, "destructive_hint", None)
        self.open_world_hint = getattr(annotations, "open_world_hint", None)
        self.trusted = trust
        self.timeout = timeout
        self._connection = connection

    # --- what the model sees ------------------------------------------------------------------
    def input_schema(self) -> dict[str, Any]:
        return copy.deepcopy(self.schema)

    def parse_input(self, raw: Any) -> McpArguments:
        return McpArguments.model_validate(check_input(self._validator, self.schema, raw))

    # --- safety -------------------------------------------------------------------------------
    def is_read_only(self, input: McpArguments) -> bool:
        return self.trusted and self.read_only_hint

    def is_concurrency_safe(self, input: McpArguments) -> bool:
        return self.trusted and self.read_only_hint

    async def check_permissions(self, input: McpArguments, ctx: ToolUseContext) -> PermissionDecision:
        if self.is_read_only(input):
            return PermissionDecision.passthrough()
        return PermissionDecision.ask(self.approval_reason(), "tool")

    def approval_reason(self) -> str:
        """Why this call asks, with the server's hints, for the approval card."""
        notes = []
        if self.destructive_hint and not self.read_only_hint:
            notes.append("the server marks it DESTRUCTIVE (it may delete or overwrite data)")
        if self.open_world_hint:
            notes.append("it reaches the OPEN WORLD (outside this machine)")
        if self.read_only_hint and not self.trusted:
            notes.append("the server says it is read-only, but the server is not trusted (\"trust\": true)")
        base = f"{self.name} is a tool of the MCP server {self.server!r}; MCP tools ask unless allowed"
        return base + (": " + "; ".join(notes) if notes else "")

    # --- the call -----------------------------------------------------------------------------
    async def call(self, input: McpArguments, ctx: ToolUseContext, progress: Progress) -> ToolResult:
        connection = self._connection()
        if connection is None:
            return ToolResult(f"MCP server {self.server!r} was removed; {self.name} is no longer available.",
                              is_error=True)
        arguments = input.model_dump(mode="json")

        def on_progress(value: float, total: float | None, message: str | None) -> None:
            fraction = min(max(value / total, 0.0), 1.0) if total else None
            progress(message or (f"{value:g} of {total:g}" if total else f"{value:g}"), fraction)

        from ..errors import McpServerGone

        try:
            result = await loop.call(connection.call_tool(self.mcp_name, arguments, loop.in_caller_loop(on_progress),
                                                          self.timeout))
        except McpServerGone as exc:
            return ToolResult(f"{exc}. The call to {self.name} did not complete.", is_error=True)
        except TimeoutError as exc:
            return ToolResult(str(exc), is_error=True)
        except Exception as exc:
            return ToolResult(_call_problem(self, exc), is_error=True)
        content, is_error = map_call_result(result)
        return ToolResult(content, is_error=is_error)


def _call_problem(tool: McpTool, exc: Exception) -> str:
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        return (f"MCP server {tool.server!r} sent a malformed result for {tool.mcp_name} "
                f"({exc.error_count()} problem(s), first: {exc.errors()[0].get('msg', '')}).")
    return f"MCP server {tool.server!r} answered {tool.mcp_name} with an error: {type(exc).__name__}: {exc}"
