"""`Agent`: the engine without magics, synchronous entry point in plain Python and inside a
running event loop (a notebook cell)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from jupyter_toolagent import Agent, tool
from jupyter_toolagent.models import ScriptedModel, tool_use_block

from runtime_support import StubHooks, allow_all, assert_valid_transcript, tool_results


def make_agent(model: Any = None, **kw: Any) -> tuple[Agent, list[int]]:
    threads: list[int] = []

    def add(a: int, b: int) -> int:
        """Add two numbers.

        Args:
            a: The first.
            b: The second.
        """
        threads.append(threading.get_ident())
        return a + b

    model = model or ScriptedModel([[tool_use_block("add", {"a": 2, "b": 3}, id="toolu_add")], "The sum is 5."])
    kw.setdefault("tools", [add])
    return Agent(model, can_use_tool=allow_all, hooks=StubHooks(), **kw), threads


def test_run_sync_in_plain_python() -> None:
    agent, threads = make_agent()
    record = agent.run_sync("add 2 and 3")
    assert record.finish_reason == "end_turn"
    assert tool_results(agent.messages)["toolu_add"]["content"] == "5"
    assert agent.messages[-1]["content"] == [{"type": "text", "text": "The sum is 5."}]
    assert agent.usage.requests == 2
    assert agent.last_finish is not None and agent.last_finish.reason == "end_turn"
    assert len(threads) == 1
    assert_valid_transcript(agent.messages)


@pytest.mark.asyncio
async def test_run_sync_inside_a_running_event_loop() -> None:
    asyncio.get_running_loop()  # as in a notebook cell
    agent, _ = make_agent()
    record = agent.run_sync("add 2 and 3")
    assert record.finish_reason == "end_turn"
    assert tool_results(agent.messages)["toolu_add"]["content"] == "5"
    assert_valid_transcript(agent.messages)


@pytest.mark.asyncio
async def test_run_sync_inside_a_loop_reraises_errors() -> None:
    agent, _ = make_agent()
    with pytest.raises(TypeError):
        agent.run_sync("x", unexpected_keyword=True)


def test_agent_conversation_continues_across_runs() -> None:
    model = ScriptedModel(["first answer", "second answer"])
    agent, _ = make_agent(model)
    agent.run_sync("one")
    agent.run_sync("two")
    assert [m["role"] for m in agent.messages] == ["user", "assistant", "user", "assistant"]
    assert model.requests[1]["messages"][0]["content"][0]["text"] == "one"


def test_agent_finds_tool_functions_in_its_namespace() -> None:
    ns: dict[str, Any] = {}

    @tool(read_only=True)
    def shout(text: str) -> str:
        return text.upper()

    ns["shout"] = shout
    model = ScriptedModel([[tool_use_block("shout", {"text": "hi"}, id="toolu_s")], "done"])
    agent, _ = make_agent(model, tools=[], namespace=ns)
    agent.run_sync("shout")
    assert tool_results(agent.messages)["toolu_s"]["content"] == "HI"
