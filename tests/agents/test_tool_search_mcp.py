"""Deferral with a real MCP server (the product's demo server over stdio, on the mcp SDK): the
server's ``"defer": true`` defers its tools, and ``ToolSearch`` loads one for the next request."""

from __future__ import annotations

import os
import sys

from agent_support import result_text, tool_results

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "mcp"))

from mcp_support import agent_on, demo  # noqa: E402

from jupyter_toolagent.models import tool_use_block  # noqa: E402


def test_a_real_servers_defer_setting_defers_its_tools(server) -> None:
    server.set_turns([
        [tool_use_block("mcp__demo__add", {"a": 1, "b": 2}, id="toolu_early")],
        [tool_use_block("ToolSearch", {"query": "select:mcp__demo__add"}, id="toolu_s")],
        [tool_use_block("mcp__demo__add", {"a": 2, "b": 40}, id="toolu_add")],
        "42.",
    ])
    with agent_on(server, {"demo": demo(defer=True)}, allow=["mcp__demo"]) as agent:
        record = agent.run_sync("add")
    assert record.finish_reason == "end_turn"
    bodies = server.bodies
    first = {t["name"] for t in bodies[0]["tools"]}
    assert "ToolSearch" in first and not any(n.startswith("mcp__demo__") for n in first)
    assert "mcp__demo__add" in bodies[0]["messages"][0]["content"][0]["text"]
    results = tool_results(agent.messages)
    assert "select:mcp__demo__add" in result_text(results["toolu_early"])
    assert "mcp__demo__add" in {t["name"] for t in bodies[2]["tools"]}
    assert "42" in result_text(results["toolu_add"])
