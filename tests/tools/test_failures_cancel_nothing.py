"""A failed call cancels nothing (SPEC §4.2), through `Agent` + the real SDK + the fake server.

One assistant message asks for four Bash calls: a ``grep`` without a match (exit 1, a "no"),
an ``ls`` of a missing path (exit 2, a real failure), a slow ``sleep 0.5; echo done`` beside
them, and a write queued after them (not read-only, so it waits for the three). Nothing is
cancelled; each result says what happened; the no-match result is not an error. Both with
tools started while the message streams and with tools run after the stream.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jupyter_toolagent import Agent, check_pairing
from jupyter_toolagent.core.events import ToolFinishedEvent, ToolQueuedEvent, ToolStartedEvent
from jupyter_toolagent.models.anthropic import AnthropicModel
from jupyter_toolagent.testing import FakeAnthropicServer
from jupyter_toolagent.models import ScriptedTurn, tool_use_block
from jupyter_toolagent.testing.validation import request_error

KEY = "sk-ant-api03-" + "Zt4" * 10

CALLS = [
    ("toolu_grep", "grep zzz notes.txt"),
    ("toolu_ls", "ls missing_dir"),
    ("toolu_slow", "sleep 0.5; echo done"),
    ("toolu_write", "echo written > out.txt"),
]


def results_in(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    last = body["messages"][-1]
    return {b["tool_use_id"]: b for b in last["content"] if b.get("type") == "tool_result"}


def text(result: dict[str, Any]) -> str:
    content = result["content"]
    return content if isinstance(content, str) else "\n".join(b.get("text", "") for b in content)


@pytest.mark.parametrize("streaming", [True, False], ids=["while-streaming", "after-the-stream"])
@pytest.mark.asyncio
async def test_no_match_real_failure_slow_call_and_a_write_all_run(tmp_path: Path, no_real_api: None,
                                                                   streaming: bool) -> None:
    (tmp_path / "notes.txt").write_text("revenue is up\n")
    turns = [
        ScriptedTurn([tool_use_block("Bash", {"command": command}, id=tid) for tid, command in CALLS],
                     block_delay=0.1),
        "All four ran.",
    ]
    with FakeAnthropicServer(turns=turns) as server:
        model = AnthropicModel("claude-sonnet-5-5", base_url=server.base_url, api_key=KEY)
        agent = Agent(model, builtin_tools=True, cwd=tmp_path, allow=["Bash(echo written > out.txt)"],
                      streaming_tools=streaming)
        events: list[Any] = []
        record = await agent.run("Look around, then write.", on_event=events.append)
        bodies = server.bodies
    assert record.finish_reason == "end_turn", record.error
    assert len(bodies) == 2 and request_error(bodies[1]) is None
    assert check_pairing(agent.messages) == []
    results = results_in(bodies[1])
    assert list(results) == [tid for tid, _ in CALLS]  # one result each, in block order

    grep = results["toolu_grep"]
    assert grep.get("is_error") is not True and text(grep) == "(exit code 1: no match)"
    ls = results["toolu_ls"]
    assert ls["is_error"] is True and text(ls).startswith("Exit code 2") and "missing_dir" in text(ls)
    slow = results["toolu_slow"]
    assert slow.get("is_error") is not True and text(slow) == "done"
    write = results["toolu_write"]
    assert write.get("is_error") is not True and (tmp_path / "out.txt").read_text() == "written\n"
    for result in results.values():
        assert "ancel" not in text(result) and "nterrupt" not in text(result), text(result)

    finished = {e.tool_use_id: e for e in events if isinstance(e, ToolFinishedEvent)}
    assert {tid: finished[tid].status for tid, _ in CALLS} == {
        "toolu_grep": "done", "toolu_ls": "error", "toolu_slow": "done", "toolu_write": "done"}
    order = [e for e in events if isinstance(e, (ToolQueuedEvent, ToolStartedEvent, ToolFinishedEvent))]
    position = {(type(e).__name__, e.tool_use_id): i for i, e in enumerate(order)}
    started_early = position[("ToolStartedEvent", "toolu_grep")] < position[("ToolQueuedEvent", "toolu_write")]
    assert started_early is streaming  # while streaming, grep starts before the last block has arrived
    write_started = position[("ToolStartedEvent", "toolu_write")]
    assert all(position[("ToolFinishedEvent", tid)] < write_started for tid, _ in CALLS[:3])
