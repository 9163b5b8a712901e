"""One sub-agent run: a nested query loop on its own transcript (SPEC §12).

The sub-agent shares the parent's permission context, rule engine, approver, hooks and abort
signal, and nothing else: it has its own `Session` (transcript, tool-output store), its own
system prompt, tool selection and ``max_turns``. Its events go to the parent's ``emit`` wrapped
in `SubagentEvent`, tagged with the ``Agent`` call's id, so a front end can draw them inside
that call's card. The finished run is kept in the parent run's ``subruns``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ..core.deferred_tools import TOOL_SEARCH_NAME, DeferredTools
from ..core.events import AgentEvent, SubagentEvent, TextDeltaEvent
from ..core.permission_types import CanUseTool, PermissionDecision
from ..core.session import RunConfig, RunRecord, Session
from ..core.tool import Progress, ToolPool, ToolUseContext
from ..core.tool_call import ToolCall
from .definitions import AGENT_TOOL_NAME, SubagentDefinition

MAX_DEPTH = 2
"""Levels of sub-agents below the cell's own run; ``Agent`` is not offered at the last one."""


@dataclass(frozen=True)
class SubagentOptions:
    """What a sub-agent's calls carry about it (``ctx.options.plugins``)."""

    depth: int = 0
    """Levels of sub-agents above these calls: 0 in the cell's own run."""


@dataclass
class SubRun:
    """A sub-agent's run as the parent keeps it (``session.runs[-1].subruns``)."""

    tool_use_id: str
    agent: str
    description: str
    depth: int
    session: Session
    record: RunRecord = field(default_factory=lambda: RunRecord(prompt=""))

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.session.messages

    def final_text(self) -> str:
        for message in reversed(self.session.messages):
            if message.get("role") != "assistant":
                continue
            texts = [b.get("text", "") for b in message.get("content") or [] if b.get("type") == "text"]
            if any(t.strip() for t in texts):
                return "\n".join(t for t in texts if t.strip())
        return ""

    def tool_calls(self) -> int:
        return sum(1 for m in self.session.messages if m.get("role") == "assistant"
                   for b in m.get("content") or [] if b.get("type") == "tool_use")

    def facts(self) -> str:
        u = self.record.usage
        return (f"[sub-agent {self.agent}: {self.tool_calls()} tool call(s), {u.requests} request(s), "
                f"{u.input_tokens} input + {u.output_tokens} output tokens; ended: {self.record.finish_reason}]")


def depth_of(ctx: ToolUseContext) -> int:
    return ctx.options.plugins.get(SubagentOptions).depth


class _LabelledPermissions:
    """The parent's permission callable; a denial says which sub-agent's call it was."""

    def __init__(self, inner: CanUseTool, label: str) -> None:
        self.inner, self.label = inner, label

    async def __call__(self, call: ToolCall, ctx: ToolUseContext, *,
                       hook_decision: PermissionDecision | None = None) -> PermissionDecision:
        decision = await self.inner(call, ctx, hook_decision=hook_decision)
        if decision.behavior == "deny":
            decision = replace(decision, message=f"{decision.message} (call made by sub-agent {self.label})")
        return decision


def _subrun_config(parent: ToolUseContext, **settings: Any) -> RunConfig:
    """The sub-run's settings: its own model, turns and prompt; the parent run's loop settings
    (streaming, continuations) and plug-in options."""
    run = parent.options.run
    inherited: dict[str, Any] = {} if run is None else {
        "streaming_tools": run.streaming_tools, "defer_tools": run.defer_tools,
        "max_continuations": run.max_continuations, "continuation_delay": run.continuation_delay}
    return RunConfig(**settings, **inherited, plugin_options=parent.options.plugins)


def _resolve_model(definition: SubagentDefinition, parent_model: Any) -> Any:
    if definition.model is None:
        return parent_model
    if isinstance(definition.model, str):
        with_model = getattr(parent_model, "with_model", None)
        if with_model is not None:
            return with_model(definition.model)
        from ..models.anthropic import AnthropicModel

        return AnthropicModel(model=definition.model)
    return definition.model


async def run_subagent(definition: SubagentDefinition, prompt: str, description: str, parent: ToolUseContext,
                       progress: Progress, *, model: Any, max_tokens: int = 8192) -> SubRun:
    """Run the sub-agent to its end and return it (registered with the parent's run first, so
    an interrupted run is still reachable)."""
    from ..core.query import drive_run

    depth = depth_of(parent) + 1
    label = f"{definition.name}: {description}" if description else definition.name
    parent_session = parent.session
    child = Session(name=f"{getattr(parent_session, 'name', 'session')}/{definition.name}",
                    cwd=parent.options.cwd, permissions=parent.permissions)
    sub = SubRun(progress.tool_use_id, definition.name, description, depth, child, RunRecord(prompt=prompt))
    child.runs.append(sub.record)
    if parent_session is not None and getattr(parent_session, "runs", None):
        parent_session.runs[-1].subruns.append(sub)

    parent_tools = list(parent.tools)
    chosen = [t for t in definition.tool_selection(parent_tools)
              if not (t.name == AGENT_TOOL_NAME and depth >= MAX_DEPTH) and t.name != TOOL_SEARCH_NAME]
    # the deferred tools it may use stay deferred: it loads them with its own ToolSearch
    parent_deferred = parent.deferred
    deferred_all = {n: t for n, t in (parent_deferred.all.items() if parent_deferred else ()) if definition.selects(t)}
    chosen_names = {t.name for t in chosen}
    search = next((t for t in parent_tools if t.name == TOOL_SEARCH_NAME), None)
    options = replace(parent.options, agent_label=label,
                      plugins=parent.options.plugins.with_options(SubagentOptions(depth=depth)))
    can_use_tool = _LabelledPermissions(parent.can_use_tool, label)

    def emit(event: AgentEvent) -> None:
        sub.record.events.append(event)
        if isinstance(event, TextDeltaEvent) and event.snapshot:
            progress(event.snapshot.strip().splitlines()[-1][:200] if event.snapshot.strip() else "")
        parent.emit(SubagentEvent(parent_tool_use_id=progress.tool_use_id, agent=label, depth=depth, event=event))

    def build_context() -> ToolUseContext:
        loaded = [t for n, t in deferred_all.items() if n in child.loaded_tools and n not in chosen_names]
        sent = {t.name for t in chosen} | {t.name for t in loaded}
        deferred = DeferredTools(all=deferred_all, unloaded={n: t for n, t in deferred_all.items() if n not in sent})
        extra_search = [search] if search is not None and deferred_all else []
        return parent.replace(tools=ToolPool([*chosen, *loaded, *extra_search]), messages=list(child.messages),
                              emit=emit, session=child, can_use_tool=can_use_tool, options=options,
                              outputs=child.outputs, deferred=deferred if deferred_all else None)

    config = _subrun_config(parent, model=_resolve_model(definition, model), max_turns=definition.max_turns,
                            max_tokens=max_tokens, system=definition.system)
    await drive_run(child, prompt, config, parent.abort, emit, build_context)
    return sub


def iter_subruns(session: Any) -> list[SubRun]:
    """Every sub-run of every run of ``session``, depth first (a sub-run's own sub-runs follow it)."""
    found: list[SubRun] = []

    def walk(subs: list[SubRun]) -> None:
        for sub in subs:
            found.append(sub)
            walk(sub.record.subruns)

    for run in getattr(session, "runs", []):
        walk(run.subruns)
    return found


def find_subrun(session: Any, tool_use_id: str) -> SubRun | None:
    """The sub-run started by the ``Agent`` call ``tool_use_id`` (the newest, if repeated)."""
    matches = [s for s in iter_subruns(session) if s.tool_use_id == tool_use_id]
    return matches[-1] if matches else None
