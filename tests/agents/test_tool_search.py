"""Deferred tools and ``ToolSearch`` through `Agent` and the fake server (real SDK): which tools
are deferred, the names-only listing, loading by search, the hint for an unloaded tool."""

from __future__ import annotations

import json

import pytest
from agent_support import make_agent, result_text, tool_results
from fake_tools import SERVERS, VERBS, FakeMcpTool, hundred_tools
from hypothesis import given, settings, strategies as st

from jupyter_toolagent.core.deferred_tools import AUTO_THRESHOLD, DeferredTools, choose_deferred
from jupyter_toolagent.core.tool_search import search
from jupyter_toolagent.models import tool_use_block

TARGET = "mcp__jira__archive_item"


def first_text(body: dict) -> str:
    return "".join(b.get("text", "") for b in body["messages"][0]["content"] if b.get("type") == "text")


def sent_names(body: dict) -> set[str]:
    return {t["name"] for t in body["tools"]}


def test_hundred_mcp_tools_are_deferred_and_listed_by_name(server) -> None:
    server.set_turns(["hi"])
    tools = hundred_tools()
    agent = make_agent(server, tools=tools, subagents=False)
    agent.run_sync("hello")
    [body] = server.bodies
    assert not any(n.startswith("mcp__") for n in sent_names(body))
    assert "ToolSearch" in sent_names(body)
    listing = first_text(body)
    assert all(t.name in listing for t in tools)
    assert "hello" in listing  # the prompt follows the listing in the same message
    assert agent.messages[0]["content"] == [{"type": "text", "text": "hello"}]  # transcript unchanged


def test_deferred_tool_called_before_and_after_its_search(server) -> None:
    tools = hundred_tools()
    target = next(t for t in tools if t.name == TARGET)
    server.set_turns([
        [tool_use_block(TARGET, {"item_id": "J-1"}, id="toolu_before")],
        [tool_use_block("ToolSearch", {"query": f"select:{TARGET}"}, id="toolu_search")],
        [tool_use_block(TARGET, {"item_id": "J-2"}, id="toolu_after")],
        "archived",
    ])
    agent = make_agent(server, tools=tools, subagents=False)
    record = agent.run_sync("archive J-2")
    assert record.finish_reason == "end_turn"
    results = tool_results(agent.messages)
    before = result_text(results["toolu_before"])
    assert results["toolu_before"]["is_error"]
    assert "deferred" in before and f"select:{TARGET}" in before and "no tool named" not in before
    found = result_text(results["toolu_search"])
    assert TARGET in found and '"item_id"' in found
    assert result_text(results["toolu_after"]) == f"{TARGET} ran on J-2"
    assert target.calls == [{"item_id": "J-2"}]
    bodies = server.bodies
    assert TARGET not in sent_names(bodies[1])
    assert TARGET in sent_names(bodies[2]) and TARGET in sent_names(bodies[3])  # loaded from the next request
    schema = next(t for t in bodies[2]["tools"] if t["name"] == TARGET)["input_schema"]
    assert schema["required"] == ["item_id"]
    # the listing is byte-identical in every request, loading included (a stable prompt prefix)
    firsts = {json.dumps([{k: v for k, v in block.items() if k != "cache_control"}
                          for block in b["messages"][0]["content"]]) for b in bodies}
    assert len(firsts) == 1
    # a new run of the session keeps it loaded
    server.set_turns([[tool_use_block(TARGET, {"item_id": "J-3"}, id="toolu_again")], "ok"])
    agent.run_sync("again")
    assert TARGET in sent_names(server.bodies[-1])


def test_keyword_search_and_required_words(server) -> None:
    server.set_turns([
        [tool_use_block("ToolSearch", {"query": "archive +slack", "max_results": 3}, id="toolu_s")],
        "found",
    ])
    agent = make_agent(server, tools=hundred_tools(), subagents=False)
    agent.run_sync("find")
    text = result_text(tool_results(agent.messages)["toolu_s"])
    assert "mcp__slack__archive_item" in text
    assert "mcp__jira__archive_item" not in text  # +slack is required
    assert "mcp__slack__archive_item" in sent_names(server.bodies[-1])


def test_search_is_allowed_in_a_headless_run_with_no_rules(server) -> None:
    server.set_turns([[tool_use_block("ToolSearch", {"query": "select:mcp__drive__copy_item"}, id="toolu_s")], "ok"])
    agent = make_agent(server, tools=hundred_tools(), subagents=False, mode="default")
    agent.run_sync("go")
    assert not tool_results(agent.messages)["toolu_s"].get("is_error")


@pytest.mark.parametrize("count, mode, expect_deferred", [
    (AUTO_THRESHOLD, "auto", False), (AUTO_THRESHOLD + 1, "auto", True),
    (3, "always", True), (100, "never", False),
])
def test_which_tools_are_deferred(server, count: int, mode: str, expect_deferred: bool) -> None:
    server.set_turns(["hi"])
    tools = hundred_tools()[:count]
    agent = make_agent(server, tools=tools, subagents=False, defer_tools=mode)
    agent.run_sync("hello")
    [body] = server.bodies
    sent_mcp = {n for n in sent_names(body) if n.startswith("mcp__")}
    assert sent_mcp == (set() if expect_deferred else {t.name for t in tools})
    assert ("ToolSearch" in sent_names(body)) == expect_deferred


def test_per_server_preference_wins_over_the_default(server) -> None:
    tools = hundred_tools()
    kept = [FakeMcpTool("pinned", "get", defer=False)]
    forced = [FakeMcpTool("small", "get", defer=True)]
    server.set_turns(["hi"])
    agent = make_agent(server, tools=[*tools, *kept, *forced], subagents=False)
    agent.run_sync("hello")
    names = sent_names(server.bodies[0])
    assert "mcp__pinned__get_item" in names and "mcp__small__get_item" not in names
    assert "mcp__small__get_item" in choose_deferred(forced, "auto")  # wanted even when few
    assert not choose_deferred([*tools, *forced], "never")


def test_ordinary_tools_are_never_deferred(server) -> None:
    from jupyter_toolagent import tool

    @tool
    def plain(x: int) -> int:
        """A notebook function."""
        return x

    server.set_turns(["hi"])
    agent = make_agent(server, tools=[plain, *hundred_tools()], subagents=False)
    agent.run_sync("hello")
    assert "plain" in sent_names(server.bodies[0])


# --- the search itself, over a generated family of tool sets -----------------------------------

def _pool(names: list[tuple[str, str]]) -> DeferredTools:
    tools = [FakeMcpTool(s, v) for s, v in names]
    return DeferredTools(all={t.name: t for t in tools}, unloaded={t.name: t for t in tools})


pairs = st.lists(st.tuples(st.sampled_from(SERVERS), st.sampled_from(VERBS)), min_size=1, max_size=40, unique=True)


@settings(max_examples=60, deadline=None)
@given(pairs, st.data())
def test_select_returns_exactly_the_named_tools(names, data) -> None:
    deferred = _pool(names)
    chosen = data.draw(st.lists(st.sampled_from(sorted(deferred.all)), min_size=1, max_size=5, unique=True))
    found, missing = search(deferred, "select:" + ", ".join(chosen + ["mcp__nowhere__x"]))
    assert [t.name for t in found] == chosen and missing == ["mcp__nowhere__x"]


@settings(max_examples=60, deadline=None)
@given(pairs, st.sampled_from(VERBS), st.sampled_from(SERVERS), st.integers(1, 10))
def test_required_word_filters_and_max_results_bounds(names, verb, srv, limit) -> None:
    deferred = _pool(names)
    found, _ = search(deferred, f"{verb} +{srv}", limit)
    assert len(found) <= limit
    assert all(f"mcp__{srv}__" in t.name for t in found)
    expected = f"mcp__{srv}__{verb}_item"
    if expected in deferred.all:
        assert found and found[0].name == expected  # the exact name match ranks first


def test_a_sub_agent_loads_a_deferred_tool_with_its_own_search(server) -> None:
    from agent_support import ByConversation

    tools = hundred_tools()
    target = next(t for t in tools if t.name == TARGET)
    script = ByConversation({
        "main": [[tool_use_block("Agent", {"description": "archive", "prompt": "SUB archive J-9",
                                           "subagent_type": "explore"}, id="toolu_agent")], "ok"],
        "SUB archive J-9": [
            [tool_use_block(TARGET, {"item_id": "J-9"}, id="toolu_early")],
            [tool_use_block("ToolSearch", {"query": f"select:{TARGET}"}, id="toolu_s")],
            [tool_use_block(TARGET, {"item_id": "J-9"}, id="toolu_ok")],
            "archived J-9",
        ],
    })
    server.set_turns(script)
    agent = make_agent(server, tools=tools)
    record = agent.run_sync("main")
    [sub] = record.subruns
    inner = tool_results(sub.messages)
    assert "select:" in result_text(inner["toolu_early"]) and inner["toolu_early"]["is_error"]
    assert result_text(inner["toolu_ok"]) == f"{TARGET} ran on J-9"
    sub_bodies = script.bodies_of("SUB archive J-9")
    assert TARGET not in sent_names(sub_bodies[1]) and TARGET in sent_names(sub_bodies[2])
    assert TARGET in first_text(sub_bodies[0])  # the sub-agent gets the names listing too
    assert TARGET not in agent.session.loaded_tools  # loading in the sub-agent leaves the parent's requests as they were
    assert target.calls == [{"item_id": "J-9"}]
