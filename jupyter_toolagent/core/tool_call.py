"""One tool call, read once: `ToolUseRequest` (the block as the model sent it, looked up and
schema-checked) and `ToolCall` (the typed call hooks and permissions receive).

The input of a tool_use is parsed exactly once, when the block reaches a scheduler: the
scheduler's concurrency-safety check, `run_tool_use`, the PreToolUse hooks, the permission
engine and the "Always allow" grant all use that one parsed model. Nothing downstream
re-validates a dict — re-validating the *observable* input (which carries derived fields such
as an absolute path) had to be lenient, and a lenient second parse can disagree with the strict
first one about what the call is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from ..errors import InputSchemaError

if TYPE_CHECKING:
    from .tool import Tool, ToolUseContext

__all__ = ["ToolCall", "ToolUseRequest", "observable_input"]


def observable_input(tool: "Tool", parsed: BaseModel, ctx: "ToolUseContext") -> dict[str, Any]:
    """Stage 5: what hooks and permission checks see — a copy with derived fields filled in
    (the plain dump when the tool's own mapping fails: a broken mapping must not end the call)."""
    try:
        return tool.observable_input(parsed, ctx)
    except Exception:
        return parsed.model_dump(mode="json")


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call that passed schema and semantic validation (SPEC §3 stages 3–5).

    ``input`` is the parsed model `Tool.call` receives; ``observable`` the dict hooks and
    permission checks see (a copy with derived fields: changing it changes nothing — a hook or an
    approval replaces the input through ``updated_input``, which makes a new `ToolCall`)."""

    tool: "Tool"
    tool_use_id: str
    input: BaseModel
    observable: dict[str, Any]

    @property
    def name(self) -> str:
        return self.tool.name

    @classmethod
    def of(cls, tool: "Tool", raw: Any, ctx: "ToolUseContext", tool_use_id: str = "") -> "ToolCall":
        """Parse ``raw`` strictly, as the pipeline does (raises pydantic's ``ValidationError`` or
        `InputSchemaError`): for callers that hold a raw input, such as a direct rule check."""
        parsed = tool.parse_input(raw)
        return cls(tool, tool_use_id, parsed, observable_input(tool, parsed, ctx))

    def with_input(self, parsed: BaseModel, ctx: "ToolUseContext") -> "ToolCall":
        """The same call with a replaced (already validated) input."""
        return ToolCall(self.tool, self.tool_use_id, parsed, observable_input(self.tool, parsed, ctx))


class ToolUseRequest:
    """A ``tool_use`` block looked up in the pool and parsed against the tool's schema, once.

    A block whose tool is unknown or whose input fails the schema is still a request: it gets
    its error result from `run_tool_use`, at the stage the SPEC orders (an abort before the
    call still reads "cancelled", whatever the input)."""

    __slots__ = ("block", "id", "name", "tool", "parsed", "error", "_safe")

    def __init__(self, block: dict[str, Any], ctx: "ToolUseContext") -> None:
        self.block = block
        self.id: str = block["id"]
        self.name: str = block.get("name", "")
        """The name the model used (an alias, or a tool that does not exist)."""
        self.tool: Tool | None = ctx.tools.find(self.name)
        self.parsed: BaseModel | None = None
        self.error: ValidationError | InputSchemaError | None = None
        self._safe: bool | None = None
        if self.tool is not None:
            self._parse(self.tool)

    def _parse(self, tool: "Tool") -> None:
        try:
            self.parsed = tool.parse_input(self.block.get("input"))
        except (ValidationError, InputSchemaError) as exc:
            self.error = exc

    def for_context(self, ctx: "ToolUseContext") -> "ToolUseRequest":
        """This request as seen by ``ctx``: re-read only if a context modifier changed which tool
        the name means since the block was queued (an identity check otherwise)."""
        if ctx.tools.find(self.name) is self.tool:
            return self
        return ToolUseRequest(self.block, ctx)

    def concurrency_safe(self) -> bool:
        """May share a batch (SPEC §4.1): the tool exists, the input parses and the tool says this
        input is safe. A safety check that raises counts as unsafe (fail closed)."""
        if self._safe is None:
            safe = False
            if self.tool is not None and self.parsed is not None:
                try:
                    safe = bool(self.tool.is_concurrency_safe(self.parsed))
                except Exception:
                    safe = False
            self._safe = safe
        return self._safe

    @property
    def interrupt_behavior(self) -> str:
        return self.tool.interrupt_behavior if self.tool is not None else "cancel"
