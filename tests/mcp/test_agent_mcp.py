"""MCP tools through `Agent`: the real `anthropic` SDK over HTTP+SSE to the fake server, the real
`mcp` SDK to the product's demo server (a child process over stdio, or streamable HTTP on
127.0.0.1). Each test checks the transcript the API would receive is valid (`check_pairing`)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from mcp_support import agent_on, alive, demo, http_demo, tool_names
from transcript_blocks import result_text, tool_results

from jupyter_toolagent import AbortSignal, check_pairing
from jupyter_toolagent.core.events import NoticeEvent, ToolProgressEvent, ToolStartedEvent
from jupyter_toolagent.errors import ConfigError
from jupyter_toolagent.testing import FakeAnthropicServer
from jupyter_toolagent.models import text_block, tool_use_block


def run(agent: Any, prompt: str = "go") -> Any:
    record = agent.run_sync(prompt)
    assert check_pairing(agent.messages) == []
    return record


def notices(record: Any) -> list[str]:
    return [e.text for e in record.events if isinstance(e, NoticeEvent)]


def test_the_servers_tools_are_offered_with_its_description_and_schema_and_called(server: FakeAnthropicServer) -> None:
    server.set_turns([[tool_use_block("mcp__demo__add", {"a": 2, "b": 40}, id="toolu_add")], "42."])
    with agent_on(server, {"demo": demo()}, allow=["mcp__demo__add"]) as agent:
        run(agent)
        tools = {t["name"]: t for t in server.bodies[0]["tools"]}
        assert tools["mcp__demo__add"]["description"] == "Add two integers."
        schema = tools["mcp__demo__add"]["input_schema"]
        assert schema["required"] == ["a", "b"] and schema["properties"]["a"]["type"] == "integer"
        assert {"mcp__demo__echo", "mcp__demo__sleep", "ListMcpResources", "ReadMcpResource"} <= set(tools)
        assert tool_results(agent.messages)["toolu_add"] == {"type": "tool_result", "tool_use_id": "toolu_add",
                                                             "content": "42"}


def test_mcp_tools_ask_by_default_and_headless_asks_are_denied_naming_the_rule(server: FakeAnthropicServer) -> None:
    server.set_turns([[tool_use_block("mcp__demo__echo", {"text": "hi"}, id="toolu_e")], "ok"])
    with agent_on(server, {"demo": demo()}) as agent:
        run(agent)
        result = tool_results(agent.messages)["toolu_e"]
        assert result["is_error"] is True
        assert "mcp__demo__echo" in result_text(result) and "MCP tools ask unless allowed" in result_text(result)


@pytest.mark.parametrize("rule, allowed", [
    ("mcp__demo", {"echo", "delete_everything"}),
    ("mcp__demo__*", {"echo", "delete_everything"}),
    ("mcp__demo__echo", {"echo"}),
    ("mcp__other", set()),
])
def test_server_and_tool_rules(server: FakeAnthropicServer, rule: str, allowed: set[str]) -> None:
    server.set_turns([[tool_use_block("mcp__demo__echo", {"text": "a"}, id="toolu_1"),
                       tool_use_block("mcp__demo__delete_everything", {"target": "/tmp/x"}, id="toolu_2")], "ok"])
    with agent_on(server, {"demo": demo()}, allow=[rule]) as agent:
        run(agent)
        results = tool_results(agent.messages)
        ran = {name for name, tid in (("echo", "toolu_1"), ("delete_everything", "toolu_2"))
               if not results[tid].get("is_error")}
        assert ran == allowed


def test_a_server_deny_rule_removes_its_tools_from_the_request(server: FakeAnthropicServer) -> None:
    server.set_turns(["nothing to do"])
    with agent_on(server, {"demo": demo("--tools", "add,echo"), "other": demo("--tools", "add")},
                  deny=["mcp__demo"]) as agent:
        run(agent)
        names = tool_names(server.bodies[0])
        assert "mcp__other__add" in names and not [n for n in names if n.startswith("mcp__demo__")]


def test_read_only_hint_is_trusted_only_with_trust(server: FakeAnthropicServer) -> None:
    turns = [[tool_use_block("mcp__demo__add", {"a": 1, "b": 1}, id="toolu_ro"),
              tool_use_block("mcp__demo__delete_everything", {"target": "x"}, id="toolu_rw")], "ok"]
    server.set_turns(list(turns))
    with agent_on(server, {"demo": demo()}) as agent:
        run(agent)
        results = tool_results(agent.messages)
        assert results["toolu_ro"]["is_error"] is True
        assert "not trusted" in result_text(results["toolu_ro"])
    server.set_turns(list(turns))
    with agent_on(server, {"demo": demo(trust=True)}) as agent:
        run(agent)
        results = tool_results(agent.messages)
        assert results["toolu_ro"]["content"] == "2"  # read-only hint believed: allowed
        assert results["toolu_rw"]["is_error"] is True  # trust does not allow a destructive tool
        assert "DESTRUCTIVE" in result_text(results["toolu_rw"]) and "OPEN WORLD" in result_text(results["toolu_rw"])


def test_ten_trusted_read_only_calls_share_one_batch(server: FakeAnthropicServer) -> None:
    server.set_turns([[tool_use_block("mcp__demo__sleep", {"seconds": 0.3}, id=f"toolu_{i}") for i in range(10)],
                      "ok"])
    with agent_on(server, {"demo": demo(trust=True)}, streaming_tools=False) as agent:
        record = run(agent)
        batches = {e.batch for e in record.events if isinstance(e, ToolStartedEvent)}
        assert len(batches) == 1 and None not in batches
        starts = [i for i, e in enumerate(record.events) if isinstance(e, ToolStartedEvent)]
        first_finish = next(i for i, e in enumerate(record.events) if e.kind == "tool_finished")
        assert max(starts) < first_finish  # all ten were running before the first finished
        assert all(r["content"] == "slept 0.3 s" for r in tool_results(agent.messages).values())


def test_progress_notifications_become_progress_events(server: FakeAnthropicServer) -> None:
    server.set_turns([[tool_use_block("mcp__demo__count_slowly", {"steps": 4, "delay": 0.01}, id="toolu_p")], "ok"])
    with agent_on(server, {"demo": demo(trust=True)}) as agent:
        record = run(agent)
        progress = [e for e in record.events if isinstance(e, ToolProgressEvent) and e.tool_use_id == "toolu_p"]
        assert [e.fraction for e in progress] == [0.25, 0.5, 0.75, 1.0]
        assert progress[-1].message == "step 4 of 4"
        assert tool_results(agent.messages)["toolu_p"]["content"] == "counted to 4"


def test_an_image_result_is_an_image_block_and_is_error_maps_to_is_error(server: FakeAnthropicServer) -> None:
    server.set_turns([[tool_use_block("mcp__demo__chart", {"color": "blue"}, id="toolu_img"),
                       tool_use_block("mcp__demo__fail", {"message": "boom"}, id="toolu_fail")], "ok"])
    with agent_on(server, {"demo": demo()}, allow=["mcp__demo"]) as agent:
        run(agent)
        results = tool_results(agent.messages)
        image = results["toolu_img"]["content"][0]
        assert image["type"] == "image" and image["source"]["media_type"] == "image/png"
        assert results["toolu_fail"]["is_error"] is True


def test_a_result_over_the_size_budget_is_cut_and_kept(server: FakeAnthropicServer) -> None:
    server.set_turns([[tool_use_block("mcp__demo__echo", {"text": "abcdefghij", "times": 20_000}, id="toolu_big")],
                      "ok"])
    with agent_on(server, {"demo": demo()}, allow=["mcp__demo"]) as agent:
        run(agent)
        text = result_text(tool_results(agent.messages)["toolu_big"])
        assert len(text) < 60_000 and "ReadToolOutput" in text
        assert agent.session.outputs is not None


@pytest.mark.parametrize("input, expected", [
    ({"a": 1}, ["missing required parameter `b`"]),
    ({"a": "1", "b": 2}, ['`a`: expected integer, got string "1"']),
    ({"a": 1, "b": 2, "c": 3}, ["unexpected parameter `c`"]),
])
def test_invalid_input_gets_field_level_errors_and_never_reaches_the_server(
        server: FakeAnthropicServer, input: dict[str, Any], expected: list[str]) -> None:
    server.set_turns([[tool_use_block("mcp__demo__add", input, id="toolu_bad")], "ok"])
    with agent_on(server, {"demo": demo()}, allow=["mcp__demo"]) as agent:
        run(agent)
        text = result_text(tool_results(agent.messages)["toolu_bad"])
        assert text.startswith("InputValidationError: the input for tool mcp__demo__add does not match its schema")
        assert [line[2:] for line in text.splitlines() if line.startswith("- ")] == expected


def test_a_server_that_exits_mid_call_gives_an_error_result_and_loses_its_tools(server: FakeAnthropicServer) -> None:
    server.set_turns([[tool_use_block("mcp__demo__crash", {"code": 7}, id="toolu_crash")],
                      [tool_use_block("mcp__demo__add", {"a": 1, "b": 2}, id="toolu_after")], "ok"])
    with agent_on(server, {"demo": demo(), "spare": demo("--tools", "echo")}, allow=["mcp__demo"]) as agent:
        run(agent)
        results = tool_results(agent.messages)
        crash = result_text(results["toolu_crash"])
        assert results["toolu_crash"]["is_error"] and "'demo'" in crash and "exited with code 7" in crash
        assert "crashing with exit code 7" in crash  # the last stderr lines say why
        second = tool_names(server.bodies[1])
        assert "mcp__spare__echo" in second and not [n for n in second if n.startswith("mcp__demo__")]
        after = tool_results(agent.messages)["toolu_after"]
        assert after["is_error"] and "no tool named 'mcp__demo__add'" in result_text(after)
        row = {s.name: s for s in agent.mcp.status()}["demo"]
        assert row.status == "failed" and "exited with code 7" in (row.error or "")
        assert any("crashing with exit code 7" in line for line in row.stderr_tail)


def test_a_call_to_a_server_that_died_after_the_request_was_built_names_the_server(
        server: FakeAnthropicServer) -> None:
    # Both calls are in one response: the crash ends the server while the second call waits its turn.
    server.set_turns([[tool_use_block("mcp__demo__crash", {"code": 5}, id="toolu_c"),
                       tool_use_block("mcp__demo__echo", {"text": "x"}, id="toolu_late")], "ok"])
    with agent_on(server, {"demo": demo()}, allow=["mcp__demo"]) as agent:
        run(agent)
        late = tool_results(agent.messages)["toolu_late"]
        assert late["is_error"] and "MCP server 'demo'" in result_text(late)
        assert "exited with code 5" in result_text(late)


def test_a_server_added_between_two_requests_of_one_run_is_in_the_next_request(server: FakeAnthropicServer) -> None:
    from jupyter_toolagent import tool
    from jupyter_toolagent.mcp import parse_server

    holder: dict[str, Any] = {}

    @tool
    async def connect_demo() -> str:
        """Connect the demo MCP server."""
        agent = holder["agent"]
        agent.mcp.configure(parse_server("late", demo("--tools", "add")))
        connection = await agent.mcp.start("late")
        return f"connected, {len(connection.tools)} tool(s)"

    server.set_turns([[tool_use_block("connect_demo", {}, id="toolu_conn")],
                      [tool_use_block("mcp__late__add", {"a": 3, "b": 4}, id="toolu_late_add")], "ok"])
    with agent_on(server, {}, tools=[connect_demo], allow=["connect_demo", "mcp__late"]) as agent:
        holder["agent"] = agent
        run(agent)
        assert "mcp__late__add" not in tool_names(server.bodies[0])
        assert "mcp__late__add" in tool_names(server.bodies[1])
        assert tool_results(agent.messages)["toolu_late_add"]["content"] == "7"


def test_per_server_timeout_cancels_the_call_and_says_so(server: FakeAnthropicServer) -> None:
    server.set_turns([[tool_use_block("mcp__demo__sleep", {"seconds": 30}, id="toolu_slow")], "ok"])
    with agent_on(server, {"demo": demo(timeout=0.5)}, allow=["mcp__demo"]) as agent:
        run(agent)
        result = tool_results(agent.messages)["toolu_slow"]
        assert result["is_error"] and "within its timeout (0.5 s)" in result_text(result)
        connection = agent.mcp.connection("demo")
        assert connection is not None and connection.state == "connected"  # the server lives on
        _wait_for(lambda: any("was cancelled by the client" in line for line in connection.process.stderr))


def test_stop_during_a_call_sends_cancelled_and_the_result_says_interrupted(server: FakeAnthropicServer) -> None:
    server.set_turns([[tool_use_block("mcp__demo__sleep", {"seconds": 30}, id="toolu_stop")], "ok"])
    with agent_on(server, {"demo": demo()}, allow=["mcp__demo"]) as agent:
        abort = AbortSignal()

        async def go() -> Any:
            loop = asyncio.get_running_loop()

            def on_event(event: Any) -> None:
                if isinstance(event, ToolStartedEvent):  # Stop once the call is running on the server
                    loop.call_later(0.3, abort.abort, "stopped")

            return await agent.run("go", abort=abort, on_event=on_event)

        asyncio.run(go())
        assert check_pairing(agent.messages) == []
        text = result_text(tool_results(agent.messages)["toolu_stop"])
        assert text.startswith("Interrupted") and "mcp__demo__sleep" in text
        connection = agent.mcp.connection("demo")
        _wait_for(lambda: any("was cancelled by the client" in line for line in connection.process.stderr))


@pytest.mark.parametrize("config, problem", [
    (demo("--exit-at-start", "4"), "exited with code 4 before the handshake completed"),
    (demo("--hang-start", startTimeout=1), "did not complete within its start timeout (1 s)"),
    ({"command": "/nonexistent/mcp-server"}, "command not found: '/nonexistent/mcp-server'"),
    ({"type": "http", "url": "http://127.0.0.1:9/mcp", "startTimeout": 5}, "cannot connect to http://127.0.0.1:9/mcp"),
])
def test_a_server_that_cannot_start_is_one_line_and_the_rest_works(server: FakeAnthropicServer, config: dict[str, Any],
                                                                    problem: str) -> None:
    server.set_turns([[tool_use_block("mcp__good__add", {"a": 1, "b": 1}, id="toolu_g")], "ok"])
    with agent_on(server, {"bad": config, "good": demo("--tools", "add")}, allow=["mcp__good"]) as agent:
        record = run(agent)
        lines = [n for n in notices(record) if "'bad'" in n]
        assert len(lines) == 1 and problem in lines[0] and "\n" not in lines[0]
        assert tool_results(agent.messages)["toolu_g"]["content"] == "2"
        assert record.finish_reason == "end_turn"


@pytest.mark.parametrize("entry, problem", [
    ({"command": "x", "argz": []}, "unknown key 'argz'"),
    ({"args": ["x"]}, "missing 'command'"),
    ({"type": "http", "url": "ftp://x"}, "'url' must be an http:// or https:// URL"),
    ({"command": "x", "timeout": -1}, "'timeout' must be a positive number"),
])
def test_bad_configuration_in_agent_is_one_clear_error(server: FakeAnthropicServer, entry: dict[str, Any],
                                                        problem: str) -> None:
    with pytest.raises(ConfigError) as info:
        agent_on(server, {"broken": entry}).__enter__()
    assert "'broken'" in str(info.value) and problem in str(info.value) and "\n" not in str(info.value)


def test_streamable_http_server_with_headers(server: FakeAnthropicServer) -> None:
    server.set_turns([[tool_use_block("mcp__web__echo", {"text": "over http", "times": 2}, id="toolu_h"),
                       tool_use_block("mcp__web__count_slowly", {"steps": 2, "delay": 0.01}, id="toolu_hp")], "ok"])
    with http_demo() as (url, _proc):
        with agent_on(server, {"web": {"type": "http", "url": url, "headers": {"X-Demo": "1"}}},
                      allow=["mcp__web"]) as agent:
            record = run(agent)
            results = tool_results(agent.messages)
            assert results["toolu_h"]["content"] == "over httpover http"
            assert results["toolu_hp"]["content"] == "counted to 2"
            assert [e.fraction for e in record.events if isinstance(e, ToolProgressEvent)] == [0.5, 1.0]


def test_resources_are_listed_and_read(server: FakeAnthropicServer) -> None:
    server.set_turns([[tool_use_block("ListMcpResources", {}, id="toolu_list"),
                       tool_use_block("ReadMcpResource", {"server": "demo", "uri": "demo://readme"}, id="toolu_text"),
                       tool_use_block("ReadMcpResource", {"server": "demo", "uri": "demo://logo.png"}, id="toolu_png")],
                      "ok"])
    with agent_on(server, {"demo": demo(trust=True), "plain": demo("--no-resources", "--tools", "add")}) as agent:
        run(agent)
        results = tool_results(agent.messages)
        listing = result_text(results["toolu_list"])
        assert '"uri": "demo://readme"' in listing and '"server": "demo"' in listing
        assert "The jupyter_toolagent demo MCP server" in result_text(results["toolu_text"])
        assert results["toolu_png"]["content"][0]["type"] == "image"


def test_no_resource_tools_without_resources(server: FakeAnthropicServer) -> None:
    server.set_turns(["ok"])
    with agent_on(server, {"plain": demo("--no-resources", "--tools", "add")}) as agent:
        run(agent)
        assert "ListMcpResources" not in tool_names(server.bodies[0])


def test_project_mcp_json_servers_start_only_when_allowed(server: FakeAnthropicServer, tmp_path: Any) -> None:
    import json

    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": demo("--tools", "add")}}))
    server.set_turns(["ok"])
    with agent_on(server, cwd=tmp_path) as agent:
        record = run(agent)
        assert not [n for n in tool_names(server.bodies[-1]) if n.startswith("mcp__")]
        assert any("'proj'" in n and "needs approval" in n for n in notices(record))
        assert agent.mcp.pids() == []  # nothing was started
    server.set_turns(["ok"])
    with agent_on(server, cwd=tmp_path, allow=["mcp__proj"]) as agent:
        run(agent)
        assert "mcp__proj__add" in tool_names(server.bodies[-1])


def test_settings_file_servers_and_enable_project_servers(server: FakeAnthropicServer, tmp_path: Any) -> None:
    import json

    (tmp_path / ".toolagent").mkdir()
    (tmp_path / ".toolagent" / "settings.json").write_text(json.dumps(
        {"mcpServers": {"fromsettings": demo("--tools", "echo"), "broken": {"command": "x", "bogus": 1}},
         "enableProjectMcpServers": True}))
    server.set_turns(["ok"])
    with agent_on(server, cwd=tmp_path) as agent:
        record = run(agent)
        assert "mcp__fromsettings__echo" in tool_names(server.bodies[-1])
        assert any("'broken'" in n and "unknown key 'bogus'" in n for n in notices(record))


def test_close_stops_every_server_process_by_pid(server: FakeAnthropicServer) -> None:
    import time

    server.set_turns(["ok"])
    with agent_on(server, {"a": demo("--tools", "add"), "b": demo("--tools", "add")}) as agent:
        run(agent)
        pids = agent.mcp.pids()
        assert len(pids) == 2 and all(alive(p) for p in pids)
        started = time.monotonic()
        agent.close()
        assert time.monotonic() - started < 5.0
        assert not [p for p in pids if alive(p)]


def _wait_for(predicate: Any, timeout: float = 5.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.02)
