"""The issue's scenario: a stream cut after one complete tool_use (an append to a file) and
inside a second one. The append ran once, the run continued by itself, the cut call got an
error result and never ran, and the next request is valid — through `Agent` and the real SDK
(the nbclient version is in ``test_replay_kernel.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jupyter_toolagent import Agent
from jupyter_toolagent.core.events import NoticeEvent
from jupyter_toolagent.core.pairing import check_pairing
from jupyter_toolagent.models.anthropic import AnthropicModel
from jupyter_toolagent.testing import FakeAnthropicServer
from jupyter_toolagent.testing.validation import request_error

from replay_support import APPEND_TOOL_SOURCE, append_then_cut, blocks_of


def append_tool() -> Any:
    namespace: dict[str, Any] = {}
    exec(APPEND_TOOL_SOURCE, namespace)
    return namespace["append_line"]


@pytest.mark.asyncio
async def test_a_cut_after_one_append_runs_it_once_and_continues_by_itself(tmp_path: Path) -> None:
    target = tmp_path / "log.txt"
    with FakeAnthropicServer(turns=[append_then_cut(str(target)), "Appended the first line; the second was cut."]) as server:
        model = AnthropicModel("claude-replay", api_key="sk-test-0123456789", base_url=server.base_url)
        agent = Agent(model, tools=[append_tool()], allow=["append_line"], continuation_delay=0.05)
        record = await agent.run("append two lines")
        await model.aclose()
        bodies = server.bodies
    assert target.read_text() == "first line\n"  # ran once; the cut call never ran
    assert record.finish_reason == "end_turn" and len(bodies) == 2  # continued by itself
    shown = [e.text for e in record.events if isinstance(e, NoticeEvent)]
    assert any("Continuing automatically" in t and "connection" in t for t in shown), shown
    follow_up = bodies[1]
    assert request_error(follow_up) is None and check_pairing(follow_up["messages"]) == []
    results = {b["tool_use_id"]: b for b in blocks_of(follow_up) if b.get("type") == "tool_result"}
    assert results["toolu_01AppendOne0000000000"].get("is_error") is not True
    cut = results["toolu_01AppendTwo0000000000"]
    assert cut["is_error"] is True and "truncated" in json.dumps(cut["content"])
    assert "cut off" in follow_up["messages"][-1]["content"][-1]["text"]  # the continuation note
