"""What the core needs from hooks: a runner with one method per event.

The registry and the `@agent_hook` decorator live in `jupyter_toolagent.hooks`; the core only
calls a `HookRunner`, so a run without hooks costs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from .tool import ToolUseContext
    from .tool_call import ToolCall


@dataclass
class PreToolUseOutcome:
    """The combined result of every PreToolUse hook that matched one call.

    ``error`` set means a hook raised or timed out: the call stops with an error result.
    ``decision`` is the combined proposal (deny > ask > allow) or ``None``.
    ``stop`` asks the run to end after the current batch.
    """

    decision: Literal["allow", "deny", "ask"] | None = None
    reason: str = ""
    updated_input: dict[str, Any] | None = None
    additional_context: list[str] = field(default_factory=list)
    system_messages: list[str] = field(default_factory=list)
    stop: bool = False
    stop_reason: str = ""
    error: str | None = None


@dataclass
class PostToolUseOutcome:
    additional_context: list[str] = field(default_factory=list)
    system_messages: list[str] = field(default_factory=list)
    stop: bool = False
    stop_reason: str = ""


class HookRunner(Protocol):
    """Runs the hooks that match one call. The call is the typed `ToolCall` the permission
    check also receives: hooks see its ``observable`` input and never a re-parsed one."""

    async def pre_tool_use(self, call: "ToolCall", ctx: "ToolUseContext") -> PreToolUseOutcome: ...

    async def post_tool_use(
        self, call: "ToolCall", result: dict[str, Any], ctx: "ToolUseContext", *, failed: bool
    ) -> PostToolUseOutcome: ...

    async def stop(self, ctx: "ToolUseContext", reason: str) -> PostToolUseOutcome: ...
