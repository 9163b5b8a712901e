"""The ``Agent`` tool (Claude Code 2.1's name and input): starts a sub-agent (SPEC §12).

The call itself needs no approval (`check_permissions` allows it): each of the sub-agent's own
calls goes through the same rules and approver as the parent's. A call is concurrency-safe
when every tool its definition allows is read-only, so several ``explore`` agents run at once.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional, Sequence

from pydantic import BaseModel, Field

from ..core.permission_types import PermissionDecision
from ..core.tool import Progress, Tool, ToolResult, ToolUseContext
from .definitions import AGENT_TOOL_NAME, SubagentDefinition, all_definitions
from .subrun import MAX_DEPTH, depth_of, run_subagent


class AgentInput(BaseModel):
    description: str = Field(description="A short (3-5 word) description of the task")
    prompt: str = Field(description="The task for the sub-agent to perform")
    subagent_type: Optional[str] = Field(default=None, description="The kind of sub-agent to use")


class AgentTool(Tool[AgentInput]):
    """``model_provider`` gives the parent's model; ``tools_provider`` the tools the parent has
    now (to decide whether a definition is read-only); ``settings_provider`` the settings file."""

    name = AGENT_TOOL_NAME
    input_model = AgentInput
    interrupt_behavior = "block"  # it sees the abort itself and leaves its transcript valid

    def __init__(self, model_provider: Callable[[], Any], *, tools_provider: Callable[[], Sequence[Tool]] = list,
                 settings_provider: Callable[[], Any] = lambda: None, max_tokens: int = 8192) -> None:
        self._model = model_provider
        self._tools = tools_provider
        self._settings = settings_provider
        self._max_tokens = max_tokens

    @property
    def description(self) -> str:  # type: ignore[override]  # read-only on purpose: computed on every read
        """Lists the definitions as they are now (a ``subagent(...)`` call between requests counts)."""
        return self._describe()

    def definitions(self) -> dict[str, SubagentDefinition]:
        return all_definitions(self._settings())

    def _describe(self) -> str:
        kinds = "\n".join(f"- {d.name}: {d.description}" for d in self.definitions().values())
        return ("Launch a sub-agent to handle a task on its own, with its own conversation. Its final "
                "message comes back as this tool's result. Several read-only (explore) agents can run "
                "in parallel: put several Agent calls in one message.\nAvailable subagent_type values "
                f"(default general-purpose):\n{kinds}")

    def _definition(self, input: AgentInput) -> SubagentDefinition | None:
        return self.definitions().get(getattr(input, "subagent_type", None) or "general-purpose")

    def is_concurrency_safe(self, input: AgentInput) -> bool:
        definition = self._definition(input)
        return definition is not None and definition.tools is not None and definition.is_read_only(self._tools())

    def is_read_only(self, input: AgentInput) -> bool:
        return self.is_concurrency_safe(input)

    async def check_permissions(self, input: AgentInput, ctx: ToolUseContext) -> PermissionDecision:
        return PermissionDecision.allow("tool", message="starting a sub-agent needs no approval")

    async def validate_input(self, input: AgentInput, ctx: ToolUseContext) -> str | None:
        if self._definition(input) is None:
            names = ", ".join(sorted(self.definitions()))
            return f"Unknown subagent_type {input.subagent_type!r}. Available: {names}."
        if depth_of(ctx) >= MAX_DEPTH:
            return f"Sub-agents cannot start further sub-agents beyond {MAX_DEPTH} levels."
        return None

    async def call(self, input: AgentInput, ctx: ToolUseContext, progress: Progress) -> ToolResult:
        definition = self._definition(input)
        assert definition is not None
        sub = await run_subagent(definition, input.prompt, input.description, ctx, progress,
                                 model=self._model(), max_tokens=self._max_tokens)
        text = sub.final_text() or "(the sub-agent gave no final text)"
        failed = sub.record.finish_reason in ("api_error", "error")
        return ToolResult(f"{text}\n\n{sub.facts()}", is_error=failed)


class SubagentSource:
    """A `ToolSource` offering the ``Agent`` tool."""

    def __init__(self, tool: AgentTool) -> None:
        self.tool = tool

    @classmethod
    def for_parent(cls, model: Callable[[], Any], tools: Callable[[], Iterable[Tool]], session: Any, *,
                   max_tokens: int = 8192) -> "SubagentSource":
        """The ``Agent`` tool of a parent run (`Agent` or a ``%%agent`` cell): the parent's model,
        its tools *now* (as `Tool` objects — the caller turns plain functions into tools, so
        read-only definitions can be told apart) and the settings file of the session's
        permissions, all read when a sub-agent starts rather than when the source is made."""

        def current_tools() -> list[Tool]:
            return list(tools())

        def settings() -> Any:
            return session.permissions.settings if session.permissions is not None else None

        return cls(AgentTool(model, tools_provider=current_tools, settings_provider=settings, max_tokens=max_tokens))

    def tools(self) -> list[Tool]:
        return [self.tool]
