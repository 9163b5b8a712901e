"""``%agent agents``, ``transcript --agent`` and ``schedule --agent`` in an IPython shell, on a
session whose run started two explore sub-agents through the fake server."""

from __future__ import annotations

import asyncio
from typing import Any, Iterator

import pytest
from agent_support import ByConversation, make_agent

from jupyter_toolagent import tool
from jupyter_toolagent.models import tool_use_block


@tool(read_only=True)
async def peek(key: str) -> str:
    """Peek at a key."""
    await asyncio.sleep(0.05)
    return f"peeked {key}"


@pytest.fixture
def shell_with_subruns(server) -> Iterator[Any]:
    from IPython.testing.globalipapp import get_ipython

    from jupyter_toolagent.notebook.sessions import registry_for

    shell = get_ipython()
    shell.run_line_magic("load_ext", "jupyter_toolagent")
    call = lambda p, i: tool_use_block("Agent", {"description": p.lower(), "prompt": p, "subagent_type": "explore"}, id=i)
    server.set_turns(ByConversation({
        "main": [[call("One", "toolu_s1"), call("Two", "toolu_s2")], "ok"],
        "One": [[tool_use_block("peek", {"key": "1"}, id="toolu_p1")], "one"],
        "Two": [[tool_use_block("peek", {"key": "2"}, id="toolu_p2")], "two"],
    }))
    session = registry_for(shell).use(None)
    agent = make_agent(server, tools=[peek], session=session)
    agent.run_sync("main")
    try:
        yield shell
    finally:
        shell.run_line_magic("unload_ext", "jupyter_toolagent")
        registry_for(shell).clear()


def test_agents_lists_definitions_and_sub_runs(shell_with_subruns) -> None:
    text = repr(shell_with_subruns.run_line_magic("agent", "agents"))
    assert "general-purpose" in text and "explore" in text
    assert "toolu_s1  explore: one" in text and "toolu_s2  explore: two" in text


def test_transcript_and_schedule_of_one_sub_agent(shell_with_subruns) -> None:
    view = shell_with_subruns.run_line_magic("agent", "transcript --agent toolu_s2")
    text = view._repr_mimebundle_()["text/plain"]
    assert "Two" in text and "peeked 2" in text and "peeked 1" not in text
    schedule = shell_with_subruns.run_line_magic("agent", "schedule --agent toolu_s1")
    assert "1 tool call(s)" in repr(schedule)
    whole = shell_with_subruns.run_line_magic("agent", "schedule")
    assert "2 tool call(s) in 1 group(s)" in repr(whole)  # the two Agent calls ran together


def test_unknown_sub_agent_id_is_a_usage_error(shell_with_subruns) -> None:
    from IPython.core.error import UsageError

    with pytest.raises(UsageError, match="no sub-agent run started by 'toolu_nope'"):
        shell_with_subruns.run_line_magic("agent", "transcript --agent toolu_nope")
