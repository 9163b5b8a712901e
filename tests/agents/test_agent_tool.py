"""The ``Agent`` tool through `Agent` and the fake server (real SDK over HTTP+SSE): nested runs
with their own transcripts, tool sets, permissions, parallelism, depth limit, abort and usage."""

from __future__ import annotations

import asyncio
import time

import pytest
from agent_support import ByConversation, make_agent, result_text, tool_results

from jupyter_toolagent import AbortSignal, subagent, tool
from jupyter_toolagent.agents import remove_subagent
from jupyter_toolagent.core.events import SubagentEvent, ToolFinishedEvent, ToolStartedEvent
from jupyter_toolagent.models import tool_use_block

CALLS: list[tuple[str, float, float]] = []


@tool(read_only=True)
async def lookup(key: str) -> str:
    """Look a key up (takes half a second)."""
    started = time.monotonic()
    await asyncio.sleep(0.5)
    CALLS.append((key, started, time.monotonic()))
    return f"value of {key}"


@tool(read_only=True)
async def wait_long(key: str) -> str:
    """Wait a long time."""
    await asyncio.sleep(30)
    return "late"


@tool
def write_note(text: str) -> str:
    """Write a note (changes things)."""
    return "written"


def agent_call(prompt: str, kind: str | None, *, id: str, description: str = "task") -> dict:
    data = {"description": description, "prompt": prompt}
    if kind is not None:
        data["subagent_type"] = kind
    return tool_use_block("Agent", data, id=id)


def test_sub_agent_runs_a_tool_and_returns_its_text(server) -> None:
    script = ByConversation({
        "main": [[agent_call("SUB look up a", "general-purpose", id="toolu_agent1")], "The sub-agent found it."],
        "SUB look up a": [[tool_use_block("lookup", {"key": "a"}, id="toolu_in1")], "The value is: value of a."],
    })
    server.set_turns(script)
    agent = make_agent(server, tools=[lookup, write_note], allow=["write_note"])
    record = agent.run_sync("main")

    assert record.finish_reason == "end_turn"
    result = tool_results(agent.messages)["toolu_agent1"]
    text = result_text(result)
    assert not result.get("is_error")
    assert text.startswith("The value is: value of a.")
    assert "[sub-agent general-purpose: 1 tool call(s), 2 request(s)" in text
    [sub] = record.subruns
    assert sub.tool_use_id == "toolu_agent1" and sub.depth == 1
    assert sub.session.check_pairing() == [] and agent.session.check_pairing() == []
    assert tool_results(sub.messages)["toolu_in1"]["content"] == "value of a"
    sub_body = script.bodies_of("SUB look up a")[0]
    assert "sub-agent" in str(sub_body["system"])
    # general-purpose has the parent's tools, Agent included (level 1 < 2)
    assert {t["name"] for t in sub_body["tools"]} >= {"lookup", "write_note", "Agent"}
    # no card of the inner call is lost: forwarded, tagged with the Agent call
    inner = [e for e in record.events if isinstance(e, SubagentEvent)]
    assert any(isinstance(e.event, ToolFinishedEvent) and e.event.tool_use_id == "toolu_in1"
               and e.parent_tool_use_id == "toolu_agent1" for e in inner)


def test_usage_rolls_up_into_the_parent_run(server) -> None:
    script = ByConversation({
        "main": [[agent_call("SUB", "explore", id="toolu_a")], "ok"],
        "SUB": [[tool_use_block("lookup", {"key": "k"}, id="toolu_l")], "found"],
    })
    server.set_turns(script)
    agent = make_agent(server, tools=[lookup])
    record = agent.run_sync("main")
    [sub] = record.subruns
    responses = server.responses if hasattr(server, "responses") else None
    assert sub.record.usage.requests == 2
    assert record.usage.requests == 4
    assert record.usage.input_tokens == sub.record.usage.input_tokens + sum(
        e.usage.input_tokens for e in record.events if e.kind == "request_finished")
    assert record.finished.usage == record.usage
    assert f"{sub.record.usage.input_tokens} input" in result_text(tool_results(agent.messages)["toolu_a"])
    del responses


def test_explore_gets_only_read_only_tools(server) -> None:
    script = ByConversation({
        "main": [[agent_call("SUB", "explore", id="toolu_a")], "ok"],
        "SUB": ["nothing to do"],
    })
    server.set_turns(script)
    agent = make_agent(server, tools=[lookup, write_note], builtin_tools=True)
    agent.run_sync("main")
    names = {t["name"] for t in script.bodies_of("SUB")[0]["tools"]}
    assert "lookup" in names and "ReadToolOutput" in names
    assert "write_note" not in names and "Agent" not in names and "Bash" not in names
    parent_names = {t["name"] for t in script.bodies_of("main")[0]["tools"]}
    assert {"write_note", "Bash", "Agent"} <= parent_names


def test_two_explore_agents_run_in_parallel(server) -> None:
    CALLS.clear()
    script = ByConversation({
        "main": [[agent_call("SUB one", "explore", id="toolu_a1"), agent_call("SUB two", "explore", id="toolu_a2")],
                 "both done"],
        "SUB one": [[tool_use_block("lookup", {"key": "one"}, id="toolu_l1")], "one found"],
        "SUB two": [[tool_use_block("lookup", {"key": "two"}, id="toolu_l2")], "two found"],
    })
    server.set_turns(script)
    agent = make_agent(server, tools=[lookup])
    record = agent.run_sync("main")
    assert record.finish_reason == "end_turn"
    assert sorted(k for k, _, _ in CALLS) == ["one", "two"]
    (_, s1, e1), (_, s2, e2) = CALLS
    assert max(s1, s2) < min(e1, e2), "the two sub-agents' tool calls did not overlap"
    assert [s.tool_use_id for s in sorted(record.subruns, key=lambda s: s.tool_use_id)] == ["toolu_a1", "toolu_a2"]
    results = tool_results(agent.messages)
    assert result_text(results["toolu_a1"]).startswith("one found")
    assert result_text(results["toolu_a2"]).startswith("two found")


def test_general_purpose_is_not_concurrency_safe_when_a_tool_writes(server) -> None:
    from jupyter_toolagent.agents import AgentInput

    agent = make_agent(server, tools=[lookup, write_note])
    [source] = [s for s in agent.config.tool_sources if hasattr(s, "tool")]
    assert source.tool.is_concurrency_safe(AgentInput(description="d", prompt="p", subagent_type="explore"))
    assert not source.tool.is_concurrency_safe(AgentInput(description="d", prompt="p"))


def test_depth_limit_two_levels(server) -> None:
    script = ByConversation({
        "main": [[agent_call("L1", "general-purpose", id="toolu_l1")], "top done"],
        "L1": [[agent_call("L2", "general-purpose", id="toolu_l2")], "level one done"],
        "L2": [[agent_call("L3", "general-purpose", id="toolu_l3")], "level two done"],
    })
    server.set_turns(script)
    agent = make_agent(server, tools=[lookup])
    record = agent.run_sync("main")
    assert record.finish_reason == "end_turn"
    assert "Agent" in {t["name"] for t in script.bodies_of("L1")[0]["tools"]}
    assert "Agent" not in {t["name"] for t in script.bodies_of("L2")[0]["tools"]}
    [level1] = record.subruns
    [level2] = level1.record.subruns
    assert level2.depth == 2 and level2.record.subruns == []
    refused = tool_results(level2.messages)["toolu_l3"]
    assert refused["is_error"]
    assert level2.session.check_pairing() == []
    assert record.usage.requests == 6


def test_unknown_subagent_type_lists_the_names(server) -> None:
    subagent("reviewer", "Reviews code", system="Review.", tools=["lookup"])
    try:
        server.set_turns(ByConversation({"main": [[agent_call("SUB", "nosuch", id="toolu_x")], "ok"]}))
        agent = make_agent(server, tools=[lookup])
        agent.run_sync("main")
        result = tool_results(agent.messages)["toolu_x"]
        text = result_text(result)
        assert result["is_error"]
        assert "nosuch" in text
        for name in ("explore", "general-purpose", "reviewer"):
            assert name in text
    finally:
        remove_subagent("reviewer")


def test_user_definition_restricts_tools_and_sets_the_system_prompt(server) -> None:
    subagent("noter", "Writes notes", system="You write notes.", tools=["write_note"], max_turns=2)
    try:
        script = ByConversation({
            "main": [[agent_call("SUB", "noter", id="toolu_n")], "ok"],
            "SUB": [[tool_use_block("write_note", {"text": "x"}, id="toolu_w")],
                    [tool_use_block("write_note", {"text": "y"}, id="toolu_w2")]],
        })
        server.set_turns(script)
        agent = make_agent(server, tools=[lookup, write_note], allow=["write_note"])
        record = agent.run_sync("main")
        body = script.bodies_of("SUB")[0]
        assert {t["name"] for t in body["tools"]} == {"write_note", "ReadToolOutput"}
        assert "You write notes." in str(body["system"])
        [sub] = record.subruns
        assert sub.record.finish_reason == "max_turns"  # its own max_turns, not the parent's 30
        assert sub.session.check_pairing() == []
    finally:
        remove_subagent("noter")


def test_settings_agents_section_defines_a_sub_agent(server, tmp_path) -> None:
    (tmp_path / ".toolagent").mkdir()
    (tmp_path / ".toolagent" / "settings.json").write_text(
        '{"agents": {"counter": {"description": "Counts", "system": "Count things.", "tools": ["lookup"]}}}')
    script = ByConversation({
        "main": [[agent_call("SUB", "counter", id="toolu_c")], "ok"],
        "SUB": ["counted"],
    })
    server.set_turns(script)
    agent = make_agent(server, tools=[lookup, write_note], cwd=tmp_path)
    agent.run_sync("main")
    body = script.bodies_of("SUB")[0]
    assert {t["name"] for t in body["tools"]} == {"lookup", "ReadToolOutput"}
    assert "Count things." in str(body["system"])


def test_inner_ask_is_denied_headless_naming_the_sub_agent(server) -> None:
    script = ByConversation({
        "main": [[agent_call("SUB", "general-purpose", id="toolu_g", description="make notes")], "ok"],
        "SUB": [[tool_use_block("write_note", {"text": "x"}, id="toolu_w")], "could not write"],
    })
    server.set_turns(script)
    agent = make_agent(server, tools=[write_note])
    record = agent.run_sync("main")
    # the Agent call itself was not asked about
    assert not tool_results(agent.messages)["toolu_g"].get("is_error")
    [sub] = record.subruns
    denied = tool_results(sub.messages)["toolu_w"]
    assert denied["is_error"]
    assert "sub-agent general-purpose: make notes" in result_text(denied)
    decisions = [e.event for e in record.events if isinstance(e, SubagentEvent) and e.event.kind == "permission_decided"]
    assert decisions and decisions[0].behavior == "deny"


def test_inner_ask_reaches_the_parents_approver_labelled(server) -> None:
    from jupyter_toolagent import ApprovalResponse

    asked = []

    async def approver(request):
        asked.append(request)
        return ApprovalResponse("allow")

    script = ByConversation({
        "main": [[agent_call("SUB", "general-purpose", id="toolu_g", description="make notes")], "ok"],
        "SUB": [[tool_use_block("write_note", {"text": "x"}, id="toolu_w")], "written"],
    })
    server.set_turns(script)
    agent = make_agent(server, tools=[write_note], approver=approver)
    record = agent.run_sync("main")
    assert [r.tool_name for r in asked] == ["write_note"]
    assert asked[0].agent == "general-purpose: make notes"
    assert tool_results(record.subruns[0].messages)["toolu_w"]["content"] == "written"


def test_abort_during_two_parallel_sub_agents_leaves_every_transcript_valid(server) -> None:
    script = ByConversation({
        "main": [[agent_call("SUB one", "explore", id="toolu_a1"), agent_call("SUB two", "explore", id="toolu_a2")]],
        "SUB one": [[tool_use_block("wait_long", {"key": "one"}, id="toolu_w1")]],
        "SUB two": [[tool_use_block("wait_long", {"key": "two"}, id="toolu_w2")]],
    })
    server.set_turns(script)
    agent = make_agent(server, tools=[wait_long])
    abort = AbortSignal()
    started: set[str] = set()

    def on_event(event) -> None:
        if isinstance(event, SubagentEvent) and isinstance(event.event, ToolStartedEvent):
            started.add(event.event.tool_use_id)
            if started == {"toolu_w1", "toolu_w2"}:
                abort.abort("stopped by user")

    began = time.monotonic()
    record = agent.run_sync("main", abort=abort, on_event=on_event)
    assert time.monotonic() - began < 20, "the abort did not stop the sub-agents' calls"
    assert record.finish_reason == "aborted"
    assert agent.session.check_pairing() == []
    assert len(record.subruns) == 2
    for sub in record.subruns:
        assert sub.record.finish_reason == "aborted"
        assert sub.session.check_pairing() == []
        inner = tool_results(sub.messages)
        assert len(inner) == 1 and next(iter(inner.values()))["is_error"]
    assert set(tool_results(agent.messages)) == {"toolu_a1", "toolu_a2"}


def test_a_bad_agents_entry_in_settings_is_refused_before_anything_is_sent(server, tmp_path) -> None:
    from jupyter_toolagent import SettingsFileError

    (tmp_path / ".toolagent").mkdir()
    (tmp_path / ".toolagent" / "settings.json").write_text('{"agents": {"x": {"tools": "everything", "colour": 1}}}')
    server.set_turns(["never sent"])
    agent = make_agent(server, tools=[lookup], cwd=tmp_path)
    with pytest.raises(SettingsFileError):
        agent.run_sync("main")
    assert server.bodies == []


def test_a_definition_added_between_runs_is_offered_in_the_next_request(server) -> None:
    server.set_turns(["one", "two"])
    agent = make_agent(server, tools=[lookup])
    agent.run_sync("first")
    subagent("latecomer", "Arrives late", tools=["lookup"])
    try:
        agent.run_sync("second")
    finally:
        remove_subagent("latecomer")
    described = [next(t["description"] for t in b["tools"] if t["name"] == "Agent") for b in server.bodies]
    assert "latecomer" not in described[0] and "latecomer" in described[1]


def test_agent_offers_sub_agents_by_default_as_a_cell_does_and_can_leave_them_out(server) -> None:
    server.set_turns(["on", "off"])
    make_agent(server, tools=[lookup]).run_sync("default")
    make_agent(server, tools=[lookup], subagents=False).run_sync("switched off")
    default, off = ({t["name"] for t in body["tools"]} for body in server.bodies)
    assert "Agent" in default and "lookup" in default
    assert "Agent" not in off and "lookup" in off
