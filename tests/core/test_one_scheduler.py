"""One scheduler interface, one typed call (SPEC §3, §4).

* Whichever scheduler handled a message (while streaming or after the stream), a call that did
  not run gets the same sentence: cut-off input, a failed stream.
* A call's input is parsed once: the scheduler's safety check, hooks, the permission engine and
  the "Always allow" grant all use that one parse.
* A PreToolUse hook's deny is decided in one place: no permission policy is asked, and the
  session's decision log still records it.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, model_validator

from jupyter_toolagent import Agent
from jupyter_toolagent.core import result_texts
from jupyter_toolagent.core.permission_types import ApprovalRequest, ApprovalResponse, PermissionDecision
from jupyter_toolagent.core.run_tool_use import run_tool_use
from jupyter_toolagent.core.session import Session
from jupyter_toolagent.core.tool import Progress, Tool, ToolPool, ToolUseContext
from jupyter_toolagent.core.tool_call import ToolCall
from jupyter_toolagent.hooks import HookRegistry, RegistryHookRunner
from jupyter_toolagent.models.anthropic import AnthropicModel
from jupyter_toolagent.permissions import PermissionContext, RuleBasedPermissions
from jupyter_toolagent.models import tool_use_block
from jupyter_toolagent.testing import FakeAnthropicServer

from runtime_support import Probe, RawModel, Raise, message_events, result_text, run, run_config, tool_results
from test_streaming_runs import cut_tool_use_turn

KEY = "sk-ant-test-one-scheduler"


# --- the same sentence on both paths -----------------------------------------------------------

def _results_of(turn: list[Any], streaming: bool, *tools: Tool) -> dict[str, str]:
    async def play() -> dict[str, str]:
        session = Session()
        model = RawModel([turn, message_events([{"type": "text", "text": "ok"}], "end_turn")])
        await run(session, "go", run_config(model, *tools, streaming=streaming, continuation_delay=0))
        return {i: result_text(r) for i, r in tool_results(session.messages).items()}

    return asyncio.run(play())


@settings(max_examples=12, deadline=None)
@given(st.text(alphabet="abc xyz\"\\{}:,0123456789", max_size=24))
def test_a_cut_off_input_reads_the_same_on_both_paths(tail: str) -> None:
    """A generated family of unfinished JSON inputs: both schedulers answer with the one text."""
    raw_json = '{"tag": "' + tail
    try:
        json.loads(raw_json)
        return  # a complete object is the model's whole request, not a cut-off one
    except ValueError:
        pass
    write = Probe("Write", safe=False)
    streaming = _results_of(cut_tool_use_turn(raw_json), True, write)
    after = _results_of(cut_tool_use_turn(raw_json), False, write)
    assert streaming == after
    assert write.calls == []  # never executed, on either path
    assert streaming["toolu_cut"].startswith("Error: the input of this Write call was truncated, so it was not "
                                             "executed: ")


def test_a_complete_input_runs_on_both_paths() -> None:
    """The everyday counterpart: a complete block runs, whichever path handles it."""
    for streaming in (True, False):
        write = Probe("Write", safe=False)
        turn = message_events([tool_use_block("Write", {"tag": "x"}, id="toolu_w")])
        assert _results_of(turn, streaming, write) == {"toolu_w": "Write x done"}
        assert write.calls == ["x"]


def test_a_failed_stream_reads_the_same_on_both_paths() -> None:
    events = message_events([tool_use_block("Edit", {"tag": "edit"}, id="toolu_edit"),
                             tool_use_block("Read", {"tag": "read"}, id="toolu_read")])
    stop = max(i for i, e in enumerate(events) if e["type"] == "content_block_stop")
    turn = [*events[:stop + 1], Raise(ConnectionResetError("connection reset by peer"))]
    texts = [_results_of(turn, streaming, Probe("Edit", safe=False, delay=0.2), Probe("Read"))["toolu_read"]
             for streaming in (True, False)]
    assert texts[0] == texts[1] == result_texts.stream_failed_before_start(None)


# --- parsed once ---------------------------------------------------------------------------------

class Counted(BaseModel):
    """Counts how often an input is validated (a strict parse of the model's input included)."""

    path: str
    parses: ClassVar[int] = 0

    @model_validator(mode="after")
    def _count(self) -> "Counted":
        Counted.parses += 1
        return self


class CountedTool(Tool):
    """A safe tool (so the scheduler checks it), asked about by default (so the grant runs)."""

    name = "Counted"
    description = "Touches a path."
    input_model = Counted

    def is_concurrency_safe(self, input: BaseModel) -> bool:
        return True

    def observable_input(self, input: BaseModel, ctx: ToolUseContext) -> dict[str, Any]:
        return {**input.model_dump(mode="json"), "derived": "a field the schema does not declare"}

    async def call(self, input: BaseModel, ctx: ToolUseContext, progress: Progress) -> Any:
        return f"touched {input.path}"  # type: ignore[attr-defined]


def _looking_hook_registry(seen: list[dict[str, Any]]) -> HookRegistry:
    registry = HookRegistry()

    async def look(event: Any) -> None:
        seen.append(event.tool_input)

    registry.add("PreToolUse", look, matcher="Counted")
    return registry


@pytest.mark.asyncio
async def test_the_input_is_parsed_once_over_the_real_sdk(tmp_path: Path, no_real_api: None) -> None:
    """Two calls in one message, through the SDK and the fake server: scheduler, hook, rule
    engine and "Always allow" all see the one parse of each call."""
    Counted.parses = 0
    seen: list[dict[str, Any]] = []
    asked: list[ApprovalRequest] = []

    async def always(request: ApprovalRequest) -> ApprovalResponse:
        asked.append(request)
        return ApprovalResponse("allow", always=True)

    turns = [[tool_use_block("Counted", {"path": "a.txt"}, id="toolu_a"),
              tool_use_block("Counted", {"path": "b.txt"}, id="toolu_b")], "Both touched."]
    with FakeAnthropicServer(turns=turns) as server:
        model = AnthropicModel("claude-sonnet-5-5", base_url=server.base_url, api_key=KEY)
        agent = Agent(model, tools=[CountedTool()], cwd=tmp_path, approver=always,
                      hooks=RegistryHookRunner(_looking_hook_registry(seen)))
        record = await agent.run("touch both")
    assert record.finish_reason == "end_turn", record.error
    assert Counted.parses == 2  # one per call
    assert [s["path"] for s in seen] == ["a.txt", "b.txt"] and all(s["derived"] for s in seen)
    assert asked and asked[0].suggested_rule == "Counted"  # the grant was computed from the same call
    assert agent.session.permissions is not None
    assert [(d.tool_use_id, d.behavior) for d in agent.session.permissions.decisions] == [
        ("toolu_a", "allow"), ("toolu_b", "allow")]


@pytest.mark.parametrize("streaming", [True, False], ids=["streaming", "after-stream"])
def test_the_input_is_parsed_once_on_both_paths(streaming: bool, tmp_path: Path) -> None:
    Counted.parses = 0
    perms = PermissionContext(cwd=tmp_path, allow=["Counted"])
    turn = message_events([tool_use_block("Counted", {"path": p}, id=f"toolu_{p}") for p in ("a", "b", "c")])

    async def play() -> dict[str, str]:
        session = Session(permissions=perms)
        model = RawModel([turn, message_events([{"type": "text", "text": "ok"}], "end_turn")])
        config = run_config(model, CountedTool(), streaming=streaming, can_use_tool=RuleBasedPermissions(),
                            hooks=RegistryHookRunner(_looking_hook_registry([])))
        await run(session, "go", config)
        return {i: result_text(r) for i, r in tool_results(session.messages).items()}

    assert asyncio.run(play()) == {"toolu_a": "touched a", "toolu_b": "touched b", "toolu_c": "touched c"}
    assert Counted.parses == 3


# --- a hook deny, in one place ----------------------------------------------------------------------

@pytest.mark.asyncio
async def test_a_hook_deny_asks_no_policy_and_is_logged_once(tmp_path: Path) -> None:
    consulted: list[ToolCall] = []

    async def policy(call: ToolCall, ctx: ToolUseContext, *, hook_decision: PermissionDecision | None) -> Any:
        consulted.append(call)
        return PermissionDecision.allow("test")  # would allow: the hook's deny must still stand

    registry = HookRegistry()
    registry.add("PreToolUse", lambda event: {"decision": "deny", "reason": "not on Fridays"}, matcher="Counted")
    perms = PermissionContext(cwd=tmp_path)
    ctx = ToolUseContext(tools=ToolPool([CountedTool()]), can_use_tool=policy, permissions=perms,
                         hooks=RegistryHookRunner(registry))
    outcome = await run_tool_use(tool_use_block("Counted", {"path": "x"}, id="toolu_x"), ctx)
    assert (outcome.status, outcome.result["content"]) == ("denied", "not on Fridays")
    assert consulted == []
    assert [(d.tool_use_id, d.behavior, d.decided_by, d.message) for d in perms.decisions] == [
        ("toolu_x", "deny", "hook", "not on Fridays")]
    assert perms.decisions[0].input["derived"]  # the observable input the hook saw


@pytest.mark.asyncio
async def test_a_hook_that_only_looks_leaves_the_decision_to_the_rules(tmp_path: Path) -> None:
    """The everyday counterpart: a hook returning nothing; the allow rule decides and is logged."""
    perms = PermissionContext(cwd=tmp_path, allow=["Counted"])
    ctx = ToolUseContext(tools=ToolPool([CountedTool()]), can_use_tool=RuleBasedPermissions(), permissions=perms,
                         hooks=RegistryHookRunner(_looking_hook_registry([])))
    outcome = await run_tool_use(tool_use_block("Counted", {"path": "x"}, id="toolu_x"), ctx)
    assert outcome.status == "done"
    assert [(d.behavior, d.decided_by, d.rule) for d in perms.decisions] == [("allow", "rule", "Counted")]
