"""Hooks (SPEC §5.4): the registry, the runner, and how hook results meet the permission rules in
the real `run_tool_use` pipeline. Shell commands here are recorded by a fake tool, never run."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hook_support import PythonLike, call, pipeline_ctx, project_dir, text_of
from recording_shell import RecordingShell

from jupyter_toolagent.core.events import NoticeEvent, PermissionAskedEvent
from jupyter_toolagent.core.permission_types import ApprovalRequest, ApprovalResponse
from jupyter_toolagent.core.tool import Tool, ToolOptions, ToolPool, ToolUseContext
from jupyter_toolagent.core.tool_call import ToolCall
from jupyter_toolagent.errors import ConfigError
from jupyter_toolagent.hooks import (
    HOOK_EVENTS,
    HookEvent,
    HookRegistry,
    HookResult,
    RegistryHookRunner,
    agent_hook,
    default_registry,
)
from jupyter_toolagent.permissions import PermissionContext


@pytest.fixture
def registry() -> HookRegistry:
    return HookRegistry()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return project_dir(tmp_path)


@pytest.fixture
def clean_default_registry() -> Any:
    saved = list(default_registry)
    default_registry.clear()
    yield default_registry
    default_registry.clear()
    for spec in saved:
        default_registry.add(spec.event, spec.func, spec.matcher, timeout=spec.timeout)


def bare_ctx(hook_timeout: float = 5.0, session: Any = None) -> ToolUseContext:
    async def never(*args: Any, **kw: Any) -> Any:
        raise AssertionError("no permission check expected")

    return ToolUseContext(tools=ToolPool(), can_use_tool=never, options=ToolOptions(hook_timeout=hook_timeout),
                          session=session)


def call_of(tool: Tool, input: dict[str, Any], tool_use_id: str) -> ToolCall:
    """The typed call a hook runner receives (its observable input is the input as given)."""
    return ToolCall(tool, tool_use_id, tool.parse_input(input), dict(input))


SHELL = RecordingShell()
PY = PythonLike()


# --- registry -------------------------------------------------------------------------------------------

def test_agent_hook_registers_in_the_default_registry(clean_default_registry: HookRegistry) -> None:
    @agent_hook("PreToolUse", matcher="Bash")
    def check(event: HookEvent) -> None:
        return None

    assert check(HookEvent(event="PreToolUse")) is None  # the function is returned unchanged
    assert [(s.event, s.matcher, s.func) for s in default_registry] == [("PreToolUse", "Bash", check)]


def test_registry_operations(registry: HookRegistry) -> None:
    def a(event: HookEvent) -> None: ...
    def b(event: HookEvent) -> None: ...

    registry.add("PreToolUse", a)
    registry.register("PostToolUse", b, matcher="Read|Grep")
    registry.hook("Stop")(a)
    assert len(registry) == 3
    assert [s.func for s in registry.matching("PreToolUse", "Anything")] == [a]
    assert [s.func for s in registry.matching("PostToolUse", "Grep")] == [b]
    assert registry.matching("PostToolUse", "Bash") == []
    assert [s.func for s in registry.matching("Stop")] == [a]
    assert registry.unregister(a) == 2 and len(registry) == 1
    registry.clear("PostToolUse")
    assert len(registry) == 0
    registry.add("PreToolUse", a)
    registry.clear()
    assert list(registry) == []


@pytest.mark.parametrize(("matcher", "name", "expected"), [
    (None, "Bash", True), ("*", "Read", True), ("Bash", "Bash", True), ("Bash", "BashX", False),
    ("Read|Grep", "Grep", True), ("Read|Grep", "Glob", False), ("mcp__.*", "mcp__db__query", True),
    ("mcp__.*", "Read", False), ("Ba.*", "Bash", True), ("Edit|Write", "Edit2", False),
])
def test_matchers(registry: HookRegistry, matcher: str | None, name: str, expected: bool) -> None:
    spec = registry.add("PreToolUse", lambda e: None, matcher)
    assert spec.matches(name) is expected


@pytest.mark.parametrize(("args", "problem"), [
    (("Before", None, None), "unknown hook event"),
    (("PreToolUse", "([", None), "not a valid regular expression"),
    (("PreToolUse", None, 0), "positive"),
])
def test_bad_registrations(registry: HookRegistry, args: tuple[Any, ...], problem: str) -> None:
    event, matcher, timeout = args
    with pytest.raises(ConfigError, match=problem):
        registry.add(event, lambda e: None, matcher, timeout=timeout)
    with pytest.raises(ConfigError, match="callable"):
        registry.add("PreToolUse", "not a function")  # type: ignore[arg-type]


def test_a_redefined_hook_replaces_the_old_one(registry: HookRegistry) -> None:
    namespace: dict[str, Any] = {"__name__": "__main__"}
    source = "def guard(event):\n    return {'decision': 'deny', 'reason': VERSION}\n"
    exec(compile(source, "<cell>", "exec"), namespace)
    first = namespace["guard"]
    registry.add("PreToolUse", first, "Bash")
    exec(compile(source, "<cell>", "exec"), namespace)  # the cell is run again
    second = namespace["guard"]
    registry.add("PreToolUse", second, "Bash")
    assert [s.func for s in registry] == [second]
    registry.add("PreToolUse", second, "Read")  # another matcher is another hook
    registry.add("PreToolUse", lambda e: None, "Bash")
    registry.add("PreToolUse", lambda e: None, "Bash")  # lambdas never merge
    assert len(registry) == 4


def test_events() -> None:
    assert HOOK_EVENTS == ("PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop")
    event = HookEvent(event="PreToolUse", tool_name="Bash", tool_input={"command": "ls"})
    assert event.input == {"command": "ls"}


# --- the runner ---------------------------------------------------------------------------------------------

@pytest.mark.asyncio
async def test_no_matching_hook_is_an_empty_outcome(registry: HookRegistry) -> None:
    registry.add("PreToolUse", lambda e: {"decision": "deny"}, "Read")
    outcome = await RegistryHookRunner(registry).pre_tool_use(call_of(SHELL, {"command": "ls"}, "t"), bare_ctx())
    assert outcome.decision is None and outcome.error is None


@pytest.mark.asyncio
async def test_hooks_see_the_event_and_cannot_mutate_the_input(registry: HookRegistry) -> None:
    seen: list[HookEvent] = []

    def look(event: HookEvent) -> None:
        seen.append(event)
        event.tool_input["command"] = "changed"

    session = object()
    original = {"command": "ls"}
    await RegistryHookRunner(registry).pre_tool_use(call_of(SHELL, original, "toolu_9"), bare_ctx(session=session))
    registry.add("PreToolUse", look)
    await RegistryHookRunner(registry).pre_tool_use(call_of(SHELL, original, "toolu_9"), bare_ctx(session=session))
    assert len(seen) == 1
    event = seen[0]
    assert (event.event, event.tool_name, event.tool_use_id, event.session) == ("PreToolUse", "Bash", "toolu_9", session)
    assert original == {"command": "ls"}


@pytest.mark.asyncio
async def test_registries_are_read_at_every_call(registry: HookRegistry) -> None:
    runner = RegistryHookRunner(registry)
    assert (await runner.pre_tool_use(call_of(SHELL, {"command": "ls"}, "t"), bare_ctx())).decision is None
    registry.add("PreToolUse", lambda e: {"decision": "ask"})
    assert (await runner.pre_tool_use(call_of(SHELL, {"command": "ls"}, "t"), bare_ctx())).decision == "ask"


@pytest.mark.asyncio
async def test_matching_hooks_run_concurrently_sync_in_threads(registry: HookRegistry) -> None:
    threads: list[int] = []

    def slow_sync(event: HookEvent) -> None:
        threads.append(threading.get_ident())
        time.sleep(0.3)

    async def slow_async(event: HookEvent) -> None:
        threads.append(threading.get_ident())
        await asyncio.sleep(0.3)

    registry.add("PreToolUse", slow_sync)
    registry.add("PreToolUse", slow_async)
    start = time.perf_counter()
    outcome = await RegistryHookRunner(registry).pre_tool_use(call_of(SHELL, {"command": "ls"}, "t"), bare_ctx())
    elapsed = time.perf_counter() - start
    assert outcome.error is None
    assert elapsed < 0.55, elapsed
    assert threads[0] != threading.get_ident() or threads[1] != threading.get_ident()
    assert threading.get_ident() in threads  # the async hook ran on the loop's thread


@pytest.mark.asyncio
@pytest.mark.parametrize(("decisions", "combined"), [
    (["allow"], "allow"), (["allow", "ask"], "ask"), (["ask", "deny", "allow"], "deny"), ([None, "allow"], "allow"),
    ([None], None),
])
async def test_combined_decision(registry: HookRegistry, decisions: list[str | None], combined: str | None) -> None:
    for i, decision in enumerate(decisions):
        registry.add("PreToolUse", lambda e, d=decision, i=i: {"decision": d, "reason": f"r{i}"} if d else None)
    outcome = await RegistryHookRunner(registry).pre_tool_use(call_of(SHELL, {"command": "ls"}, "t"), bare_ctx())
    assert outcome.decision == combined
    if combined:
        assert outcome.reason == "; ".join(f"r{i}" for i, d in enumerate(decisions) if d == combined)


@pytest.mark.asyncio
async def test_results_as_dict_or_dataclass(registry: HookRegistry) -> None:
    registry.add("PreToolUse", lambda e: {"additional_context": "ctx A", "system_message": "note A",
                                          "continue": False, "stop_reason": "enough"})
    registry.add("PreToolUse", lambda e: HookResult(additional_context="ctx B", updated_input={"command": "pwd"}))
    outcome = await RegistryHookRunner(registry).pre_tool_use(call_of(SHELL, {"command": "ls"}, "t"), bare_ctx())
    assert outcome.error is None
    assert outcome.additional_context == ["ctx A", "ctx B"]
    assert outcome.system_messages == ["note A"]
    assert outcome.stop and outcome.stop_reason == "enough"
    assert outcome.updated_input == {"command": "pwd"}


@pytest.mark.asyncio
@pytest.mark.parametrize(("result", "problem"), [
    ({"decison": "deny"}, "decison: unknown field"),
    ({"decision": "maybe"}, "decision"),
    ({"reason": 5}, "reason"),
    ({"updated_input": "ls"}, "updated_input"),
    ("allow", "expected None, a HookResult or a dict, got str"),
    (HookResult(decision="nope"), "decision"),  # type: ignore[arg-type]
])
async def test_invalid_results_are_hook_errors(registry: HookRegistry, result: Any, problem: str) -> None:
    def bad(event: HookEvent) -> Any:
        return result

    registry.add("PreToolUse", bad)
    outcome = await RegistryHookRunner(registry).pre_tool_use(call_of(SHELL, {"command": "ls"}, "t"), bare_ctx())
    assert outcome.error is not None
    assert "bad" in outcome.error and "invalid result" in outcome.error and problem in outcome.error
    assert outcome.decision is None


@pytest.mark.asyncio
async def test_raising_and_timed_out_hooks_are_errors_naming_the_hook(registry: HookRegistry) -> None:
    def explodes(event: HookEvent) -> None:
        raise ValueError("bad input")

    async def hangs(event: HookEvent) -> None:
        await asyncio.sleep(30)

    registry.add("PreToolUse", explodes, "Bash")
    registry.add("PreToolUse", hangs, "RunPython", timeout=0.1)
    runner = RegistryHookRunner(registry)
    raised = await runner.pre_tool_use(call_of(SHELL, {"command": "ls"}, "t"), bare_ctx())
    assert raised.error is not None and "explodes" in raised.error and "ValueError: bad input" in raised.error
    start = time.perf_counter()
    timed_out = await runner.pre_tool_use(call_of(PY, {"code": "x"}, "t"), bare_ctx())
    assert time.perf_counter() - start < 2
    assert timed_out.error is not None and "hangs" in timed_out.error and "timed out after 0.1 s" in timed_out.error


@pytest.mark.asyncio
async def test_the_context_hook_timeout_applies_to_sync_hooks(registry: HookRegistry) -> None:
    registry.add("PreToolUse", lambda e: time.sleep(0.5))
    start = time.perf_counter()
    outcome = await RegistryHookRunner(registry).pre_tool_use(call_of(SHELL, {"command": "ls"}, "t"), bare_ctx(hook_timeout=0.1))
    assert time.perf_counter() - start < 0.4
    assert outcome.error is not None and "timed out" in outcome.error


@pytest.mark.asyncio
async def test_conflicting_input_replacements_are_an_error(registry: HookRegistry) -> None:
    registry.add("PreToolUse", lambda e: {"updated_input": {"command": "a"}})
    registry.add("PreToolUse", lambda e: {"updated_input": {"command": "b"}})
    outcome = await RegistryHookRunner(registry).pre_tool_use(call_of(SHELL, {"command": "ls"}, "t"), bare_ctx())
    assert outcome.error is not None and "different ways" in outcome.error


@pytest.mark.asyncio
async def test_post_hooks(registry: HookRegistry) -> None:
    seen: list[HookEvent] = []

    def after(event: HookEvent) -> dict[str, Any]:
        seen.append(event)
        return {"additional_context": f"saw {event.event}", "continue": event.event != "PostToolUseFailure"}

    def broken(event: HookEvent) -> None:
        raise RuntimeError("oops")

    registry.add("PostToolUse", after)
    registry.add("PostToolUseFailure", after)
    registry.add("PostToolUse", broken)
    runner = RegistryHookRunner(registry)
    result = {"type": "tool_result", "tool_use_id": "t", "content": "ok"}
    ok = await runner.post_tool_use(call_of(SHELL, {"command": "ls"}, "t"), result, bare_ctx(), failed=False)
    failed = await runner.post_tool_use(call_of(SHELL, {"command": "ls"}, "t"), result, bare_ctx(), failed=True)
    assert ok.additional_context == ["saw PostToolUse"] and not ok.stop
    assert any("oops" in m for m in ok.system_messages)
    assert failed.additional_context == ["saw PostToolUseFailure"] and failed.stop
    assert seen[0].result == result and seen[0].result is not result


@pytest.mark.asyncio
async def test_stop_hooks(registry: HookRegistry) -> None:
    reasons: list[str] = []
    registry.add("Stop", lambda e: reasons.append(e.reason) or {"system_message": "bye"}, matcher="Bash")
    outcome = await RegistryHookRunner(registry).stop(bare_ctx(), "end_turn")
    assert reasons == ["end_turn"] and outcome.system_messages == ["bye"]


# --- hooks and rules in the real pipeline -----------------------------------------------------------------------

@pytest.mark.asyncio
async def test_hook_deny_stops_the_call_with_its_reason(registry: HookRegistry, project: Path) -> None:
    registry.add("PreToolUse", lambda e: {"decision": "deny", "reason": "no shell on Fridays"}, "Bash")
    shell = RecordingShell()
    outcome = await call(pipeline_ctx(registry, PermissionContext(cwd=project), shell), "Bash", {"command": "ls"})
    assert outcome.status == "denied" and outcome.is_error
    assert text_of(outcome) == "no shell on Fridays" and shell.recorded == []


@pytest.mark.asyncio
@pytest.mark.parametrize(("rules", "mode", "command", "runs"), [
    ({"deny": ["Bash(rm:*)"]}, "default", "rm x", False),
    ({"deny": ["Bash(rm:*)"]}, "default", "ls; rm x", False),
    ({"ask": ["Bash(rm:*)"]}, "default", "rm x", False),
    ({"ask": ["Bash"]}, "default", "ls", False),
    ({}, "default", "echo x > .git/config", False),
    ({}, "bypassPermissions", "echo x > .git/config", False),
    ({}, "plan", "touch x", False),
    ({}, "default", "touch x", True),
    ({}, "dontAsk", "touch x", True),
    ({"allow": ["Bash(touch:*)"]}, "default", "touch x", True),
])
async def test_hook_allow_never_overrides_rules_or_safety(registry: HookRegistry, project: Path,
                                                           rules: dict[str, list[str]], mode: str, command: str,
                                                           runs: bool) -> None:
    registry.add("PreToolUse", lambda e: {"decision": "allow", "reason": "hook says fine"}, "Bash")
    shell = RecordingShell()
    perms = PermissionContext(cwd=project, mode=mode, **rules)
    outcome = await call(pipeline_ctx(registry, perms, shell), "Bash", {"command": command})
    assert (shell.recorded == [command]) is runs, text_of(outcome)
    assert outcome.status == ("done" if runs else "denied")


@pytest.mark.asyncio
async def test_hook_ask_puts_a_read_only_call_to_the_person(registry: HookRegistry, project: Path) -> None:
    registry.add("PreToolUse", lambda e: {"decision": "ask", "reason": "looks at logs"}, "Bash")
    requests: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> ApprovalResponse:
        requests.append(request)
        return ApprovalResponse("allow", always=True)

    events: list[Any] = []
    shell = RecordingShell()
    perms = PermissionContext(cwd=project)
    outcome = await call(pipeline_ctx(registry, perms, shell, approver=approver, events=events), "Bash",
                         {"command": "ls"})
    assert outcome.status == "done" and shell.recorded == ["ls"]
    assert "looks at logs" in requests[0].reason and requests[0].suggested_rule is None
    assert any(isinstance(e, PermissionAskedEvent) for e in events)
    assert perms.session_rules == []  # no rule can skip a hook's ask
    headless = await call(pipeline_ctx(registry, perms, shell), "Bash", {"command": "ls"}, id="toolu_2")
    assert headless.status == "denied" and shell.recorded == ["ls"]


@pytest.mark.asyncio
async def test_the_rules_judge_the_input_a_hook_supplied(registry: HookRegistry, project: Path) -> None:
    registry.add("PreToolUse", lambda e: {"updated_input": {"command": "rm -rf build"}}, "Bash")
    shell = RecordingShell()
    perms = PermissionContext(cwd=project, deny=["Bash(rm:*)"])
    outcome = await call(pipeline_ctx(registry, perms, shell), "Bash", {"command": "ls"})
    assert outcome.status == "denied" and "Bash(rm:*)" in text_of(outcome) and shell.recorded == []

    other = HookRegistry()
    other.add("PreToolUse", lambda e: {"updated_input": {"command": "ls -la"}}, "Bash")
    shell2 = RecordingShell()
    outcome = await call(pipeline_ctx(other, PermissionContext(cwd=project), shell2), "Bash", {"command": "rm x"})
    assert outcome.status == "done" and shell2.recorded == ["ls -la"]


@pytest.mark.asyncio
async def test_a_failing_hook_stops_the_call(registry: HookRegistry, project: Path) -> None:
    def broken(event: HookEvent) -> None:
        raise KeyError("missing")

    registry.add("PreToolUse", broken)
    tool = PythonLike()
    perms = PermissionContext(cwd=project, allow=["RunPython"])
    outcome = await call(pipeline_ctx(registry, perms, tool), "RunPython", {"code": "1"})
    assert outcome.is_error and tool.ran == []
    assert "Hook error" in text_of(outcome) and "broken" in text_of(outcome) and "KeyError" in text_of(outcome)


@pytest.mark.asyncio
async def test_context_messages_and_stop_reach_the_run(registry: HookRegistry, project: Path) -> None:
    registry.add("PreToolUse", lambda e: {"additional_context": "the data is synthetic",
                                          "system_message": "checked by policy", "continue": False,
                                          "stop_reason": "one call is enough"})
    events: list[Any] = []
    tool = PythonLike(read_only=True)
    outcome = await call(pipeline_ctx(registry, PermissionContext(cwd=project), tool, events=events),
                         "RunPython", {"code": "1"})
    assert outcome.status == "done" and tool.ran == ["1"]
    assert "[additional context] the data is synthetic" in text_of(outcome)
    assert any(isinstance(e, NoticeEvent) and e.text == "checked by policy" for e in events)
    assert outcome.stop_run and outcome.stop_reason == "one call is enough"


@pytest.mark.asyncio
async def test_session_wiring_uses_the_default_registry_and_the_rule_engine(clean_default_registry: HookRegistry,
                                                                           project: Path) -> None:
    from jupyter_toolagent.agent import Agent
    from jupyter_toolagent.models import ScriptedModel, text_block, tool_use_block

    @agent_hook("PreToolUse", matcher="RunPython")
    def approve_python(event: HookEvent) -> dict[str, str]:
        return {"decision": "allow", "reason": "python is fine here"}

    shell, python = RecordingShell(), PythonLike()
    turns = [[text_block("working"),
              tool_use_block("RunPython", {"code": "1 + 1"}, id="toolu_py"),
              tool_use_block("Bash", {"command": "ls; rm -rf x"}, id="toolu_rm"),
              tool_use_block("Bash", {"command": "git push"}, id="toolu_push")],
             "done"]
    agent = Agent(ScriptedModel(turns), tools=[shell, python], deny=["Bash(rm:*)"], cwd=project)
    record = await agent.run("go")
    results = {b["tool_use_id"]: b for m in agent.messages if m["role"] == "user" and isinstance(m["content"], list)
               for b in m["content"] if b.get("type") == "tool_result"}
    assert python.ran == ["1 + 1"] and not results["toolu_py"].get("is_error")
    assert results["toolu_rm"]["is_error"] and "Bash(rm:*)" in str(results["toolu_rm"]["content"])
    assert results["toolu_push"]["is_error"] and "allow=[\"Bash(git push:*)\"]" in str(results["toolu_push"]["content"])
    assert shell.recorded == []
    perms = agent.session.permissions
    assert [(d.tool_use_id, d.behavior, d.decided_by) for d in perms.decisions] == [
        ("toolu_py", "allow", "hook"), ("toolu_rm", "deny", "rule"), ("toolu_push", "deny", "policy")]
    assert perms.entries("deny") == []  # the run's rules lasted for that run only
    assert record.finish_reason == "end_turn"
