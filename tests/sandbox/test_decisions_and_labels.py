"""Why a command was allowed reaches its sandbox, and the card says which sandbox it got — through
`Agent` + `AnthropicModel` (the real SDK) + `FakeAnthropicServer`. Where the sandbox is missing
(simulated with the ``TOOLAGENT_SANDBOX`` knob, as a user can), no Bash command is auto-allowed
and every card says "not sandboxed"."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sandbox_support import GIT_CONFIG

from jupyter_toolagent import Agent
from jupyter_toolagent.core.events import ToolProgressEvent
from jupyter_toolagent.core.tool import ToolPool, ToolUseContext
from jupyter_toolagent.models.anthropic import AnthropicModel
from jupyter_toolagent.notebook.static_render import card_text
from jupyter_toolagent.notebook.view_state import RunViewState, apply_event
from jupyter_toolagent.core.tool_call import ToolCall
from jupyter_toolagent.permissions import PermissionContext, RuleBasedPermissions
from jupyter_toolagent.permissions.engine import decide_input
from jupyter_toolagent.testing import FakeAnthropicServer
from jupyter_toolagent.models import text_block, tool_use_block
from jupyter_toolagent.tools import Bash

SNEAK = "python3 -c \"import os; open(os.path.join('.g' + 'it', 'conf' + 'ig'), 'a').write('x')\""
EVERYDAY_READS = ["ls", "ls -la", "cat data.csv", "head -1 data.csv", "wc -l data.csv", "pwd", "echo {1..3}",
                  "grep -c a data.csv", "sort data.csv", "ls data.{csv,txt}"]
JOINERS = [" && ", " | ", "; "]


@pytest.fixture
def server() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as srv:
        yield srv


def labels(events: list[Any]) -> dict[str, str]:
    return {e.tool_use_id: e.label for e in events if isinstance(e, ToolProgressEvent) and e.label}


def results(messages: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {b["tool_use_id"]: b for m in messages if m["role"] == "user" and isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_result"}


def model(server: FakeAnthropicServer) -> AnthropicModel:
    return AnthropicModel("claude-test", base_url=server.base_url, api_key="sk-test-sandbox-0000000000")


@pytest.mark.asyncio
async def test_an_agent_run_labels_each_bash_card_with_its_sandbox(server: FakeAnthropicServer, project: Path) -> None:
    server.set_turns([
        [text_block("Looking."),
         tool_use_block("Bash", {"command": "cat data.csv"}, id="toolu_read"),
         tool_use_block("Bash", {"command": "touch made.txt"}, id="toolu_touch")],
        [tool_use_block("Bash", {"command": SNEAK}, id="toolu_sneak")],
        "Done.",
    ])
    agent = Agent(model(server), builtin_tools=True, cwd=project, allow=["Bash(touch:*)", "Bash(python3:*)"])
    record = await agent.run("look at the data")
    assert record.finish_reason == "end_turn", record.error
    seen = labels(record.events)
    assert seen["toolu_read"] == "sandbox: read-only, no network"
    assert seen["toolu_touch"] == f"sandbox: writes to {project}"
    out = results(agent.messages)
    assert not out["toolu_read"].get("is_error") and "a,b" in out["toolu_read"]["content"]
    assert (project / "made.txt").exists()
    # A rule allowed python3, and the path is built at run time, so no check saw `.git/config`:
    # the sandbox, not the classifier, stopped the write.
    decided = {d.tool_use_id: d for d in agent.session.permissions.decisions}
    assert (decided["toolu_sneak"].behavior, decided["toolu_sneak"].decided_by) == ("allow", "rule")
    assert out["toolu_sneak"]["is_error"] and f"[sandbox: writes to {project}]" in out["toolu_sneak"]["content"]
    assert "Read-only file system" in out["toolu_sneak"]["content"]
    assert (project / ".git" / "config").read_text() == GIT_CONFIG
    state = RunViewState(started_at=0.0)
    for event in record.events:
        apply_event(state, event)
    assert state.cards["toolu_read"].label == "sandbox: read-only, no network"
    assert "[sandbox: read-only, no network]" in card_text(state.cards["toolu_read"])
    assert server.bodies and all("sk-test-sandbox" not in json.dumps(b) for b in server.bodies)


@pytest.mark.asyncio
async def test_without_a_sandbox_no_bash_command_is_auto_allowed_and_cards_say_not_sandboxed(
        server: FakeAnthropicServer, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLAGENT_SANDBOX", "off")
    server.set_turns([
        [tool_use_block("Bash", {"command": "cat data.csv"}, id="toolu_read"),
         tool_use_block("Bash", {"command": "touch made.txt"}, id="toolu_touch")],
        "Done.",
    ])
    agent = Agent(model(server), builtin_tools=True, cwd=project, allow=["Bash(touch:*)"])
    record = await agent.run("look")
    assert record.finish_reason == "end_turn", record.error
    out = results(agent.messages)
    assert out["toolu_read"]["is_error"] and "no sandbox works on this machine" in out["toolu_read"]["content"]
    assert labels(record.events) == {"toolu_touch": "not sandboxed"}  # the rule-allowed one ran, unconfined
    assert (project / "made.txt").exists()


def _ctx(perms: PermissionContext) -> ToolUseContext:
    return ToolUseContext(tools=ToolPool([Bash()]), can_use_tool=RuleBasedPermissions(), permissions=perms)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(st.sampled_from(EVERYDAY_READS), min_size=1, max_size=3), joiner=st.sampled_from(JOINERS))
@pytest.mark.asyncio
async def test_read_only_commands_are_auto_allowed_only_where_a_sandbox_works(
        project: Path, monkeypatch: pytest.MonkeyPatch, parts: list[str], joiner: str) -> None:
    command = joiner.join(parts)
    perms = PermissionContext(cwd=project)
    monkeypatch.delenv("TOOLAGENT_SANDBOX", raising=False)
    assert (await decide_input(Bash(), {"command": command}, _ctx(perms))).decided_by == "read_only"
    monkeypatch.setenv("TOOLAGENT_SANDBOX", "off")
    asked = await decide_input(Bash(), {"command": command}, _ctx(perms))
    assert asked.behavior == "ask" and "no sandbox works" in asked.message
    opted_out = PermissionContext(cwd=project)
    (project / ".toolagent").mkdir(exist_ok=True)
    (project / ".toolagent" / "settings.json").write_text(json.dumps({"sandbox": {"required": False}}))
    opted_out.load_settings(project / ".toolagent" / "settings.json")
    assert (await decide_input(Bash(), {"command": command}, _ctx(opted_out))).decided_by == "read_only"
    ruled = PermissionContext(cwd=project, allow=["Bash"])
    assert (await decide_input(Bash(), {"command": command}, _ctx(ruled))).decided_by == "rule"  # rules still allow


@pytest.mark.asyncio
async def test_a_persons_approval_of_a_safety_ask_is_recorded_as_such(project: Path) -> None:
    from jupyter_toolagent.core.permission_types import ApprovalResponse

    async def approve(request: Any) -> ApprovalResponse:
        return ApprovalResponse("allow")

    perms = PermissionContext(cwd=project)
    ctx = ToolUseContext(tools=ToolPool([Bash()]), can_use_tool=RuleBasedPermissions(approve), permissions=perms)
    safety = await ctx.can_use_tool(ToolCall.of(Bash(), {"command": "echo x >> .git/config"}, ctx, "t1"), ctx, hook_decision=None)
    plain = await ctx.can_use_tool(ToolCall.of(Bash(), {"command": "make"}, ctx, "t2"), ctx, hook_decision=None)
    assert (safety.behavior, safety.decided_by, safety.asked) == ("allow", "user", "safety")
    assert (plain.behavior, plain.asked) == ("allow", "default")
