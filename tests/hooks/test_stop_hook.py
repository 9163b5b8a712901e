"""Stop hooks run once when a run ends, see how it ended, and speak to the person only."""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_toolagent.core.events import NoticeEvent, RunFinishedEvent
from jupyter_toolagent.core.permission_types import PermissionDecision
from jupyter_toolagent.core.session import RunConfig, Session
from jupyter_toolagent.hooks import HookEvent, HookRegistry, RegistryHookRunner
from jupyter_toolagent.models import ScriptedModel


async def _allow(call: Any, ctx: Any, *, hook_decision: Any) -> PermissionDecision:
    return PermissionDecision.allow("test")


async def _run(registry: HookRegistry, turns: list[Any], **config: Any) -> tuple[Session, list[Any]]:
    session = Session()
    cfg = RunConfig(model=ScriptedModel(turns), can_use_tool=_allow, hooks=RegistryHookRunner(registry), **config)
    events = [event async for event in session.run("hello", cfg)]
    return session, events


@pytest.mark.asyncio
async def test_stop_hook_runs_once_with_the_finish_reason() -> None:
    registry = HookRegistry()
    seen: list[str] = []

    @registry.hook("Stop")
    def on_stop(event: HookEvent) -> dict[str, str]:
        seen.append(event.reason)
        return {"system_message": f"run ended: {event.reason}"}

    session, events = await _run(registry, ["Hi."])
    assert seen == ["end_turn"]
    notices = [e.text for e in events if isinstance(e, NoticeEvent)]
    assert "run ended: end_turn" in notices
    assert isinstance(events[-1], RunFinishedEvent) and events[-1].reason == "end_turn"
    assert all("run ended" not in str(m) for m in session.messages)  # never sent to the model


@pytest.mark.asyncio
async def test_stop_hook_is_not_run_for_a_dry_run() -> None:
    registry = HookRegistry()
    seen: list[str] = []
    registry.hook("Stop")(lambda event: seen.append(event.reason))
    await _run(registry, ["Hi."], dry_run=True)
    assert seen == []


@pytest.mark.asyncio
async def test_a_hook_denial_is_in_the_sessions_decision_log() -> None:
    from jupyter_toolagent.defaults import default_plugins
    from jupyter_toolagent.models import tool_use_block
    from jupyter_toolagent.tools.function_tool import tool

    @tool
    def shout(text: str) -> str:
        return text.upper()

    registry = HookRegistry()
    registry.hook("PreToolUse", matcher="shout")(lambda event: {"decision": "deny", "reason": "too loud"})
    session = Session()
    cfg = RunConfig(model=ScriptedModel([[tool_use_block("shout", {"text": "hi"})], "ok"]),
                    tool_provider=lambda: [shout], hooks=RegistryHookRunner(registry), plugins=default_plugins())
    _ = [event async for event in session.run("go", cfg)]
    decisions = session.permissions.decisions
    assert [(d.tool_name, d.behavior, d.decided_by, d.message) for d in decisions] == [
        ("shout", "deny", "hook", "too loud")]
