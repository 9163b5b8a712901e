"""The core's query loop driven by `AnthropicModel` over the SDK and the fake server."""

from __future__ import annotations

import time
from typing import Any

import pytest
from model_support import TimedModel, make_model, run_loop

from jupyter_toolagent.core.events import RequestFinishedEvent, RunFinishedEvent, ToolStartedEvent
from jupyter_toolagent.tools.function_tool import FunctionTool
from jupyter_toolagent.core.pairing import check_pairing
from jupyter_toolagent.core.request_body import cache_prefix_bytes
from jupyter_toolagent.models.stream_events import new_message_id
from jupyter_toolagent.testing import FakeAnthropicServer, Fault
from jupyter_toolagent.models import ScriptedTurn, text_block, tool_use_block
from jupyter_toolagent.testing.validation import request_error


def lookup_tool(calls: list[tuple[str, float]]) -> FunctionTool:
    async def lookup(key: str) -> str:
        """Look a key up.

        Args:
            key: The key.
        """
        calls.append((key, time.monotonic()))
        return f"value of {key}"

    return FunctionTool(lookup, read_only=True)


def finished(events: list[Any]) -> RunFinishedEvent:
    assert isinstance(events[-1], RunFinishedEvent), events[-1]
    return events[-1]


def assistant_turns(body: dict[str, Any]) -> int:
    return sum(1 for m in body["messages"] if m["role"] == "assistant")


@pytest.mark.asyncio
async def test_ten_requests_each_reuse_the_previous_requests_prefix(server: FakeAnthropicServer) -> None:
    def chain(body: dict[str, Any]) -> Any:
        done = assistant_turns(body)
        if done == 9:
            return f"Finished after {done} lookups."
        return [text_block(f"Step {done}."), tool_use_block("lookup", {"key": f"k{done}"})]

    server.set_turns(chain)
    calls: list[tuple[str, float]] = []
    session, events = await run_loop(make_model(server), "Look up ten keys.", lookup_tool(calls),
                                     system="Be brief.")
    assert finished(events).reason == "end_turn"
    bodies = server.bodies
    assert len(bodies) == 10 and [key for key, _ in calls] == [f"k{n}" for n in range(9)]
    for prev, nxt in zip(bodies, bodies[1:]):
        assert cache_prefix_bytes(nxt).startswith(cache_prefix_bytes(prev))
    for body in bodies:
        assert request_error(body) is None
        assert body["tools"] == bodies[0]["tools"]  # same tools, same order, every request
    assert sorted(t["name"] for t in bodies[0]["tools"]) == ["ReadToolOutput", "lookup"]
    assert check_pairing(session.messages) == []
    finished_requests = [e for e in events if isinstance(e, RequestFinishedEvent)]
    assert [e.request_id for e in finished_requests] == [r.request_id for r in server.requests]
    assert finished(events).usage.requests == 10
    assert finished(events).usage.input_tokens == sum(m["usage"]["input_tokens"] for m in server.responses)


@pytest.mark.asyncio
async def test_a_safe_tool_starts_well_before_message_stop(server: FakeAnthropicServer) -> None:
    server.set_turns([
        ScriptedTurn([tool_use_block("lookup", {"key": "early"}), tool_use_block("lookup", {"key": "late"})],
                     block_delay=0.6),
        "Both looked up.",
    ])
    calls: list[tuple[str, float]] = []
    model = TimedModel(make_model(server))
    _, events = await run_loop(model, "Look up two keys.", lookup_tool(calls))
    assert finished(events).reason == "end_turn"
    early_start = dict(calls)["early"]
    message_stop = next(t for kind, t in model.times if kind == "message_stop")
    assert message_stop - early_start >= 0.3
    started = [e for e in events if isinstance(e, ToolStartedEvent)]
    assert len(started) == 2


@pytest.mark.asyncio
async def test_an_error_event_mid_run_keeps_complete_blocks_and_the_run_continues(server: FakeAnthropicServer) -> None:
    turn = [text_block("I'll look."), tool_use_block("lookup", {"key": "a"}), tool_use_block("lookup", {"key": "b"})]
    server.set_turns([turn, "Now both are done."])
    # events: message_start, block 0 (start, ping, delta, stop), block 1 (start, "", json, stop), block 2 start
    server.inject(Fault.error_event("overloaded_error", after_events=10))
    calls: list[tuple[str, float]] = []
    session, events = await run_loop(make_model(server), "Look up a and b.", lookup_tool(calls),
                                     continuation_delay=0)
    run = finished(events)
    assert run.reason == "end_turn" and run.error is None
    [notice] = [e.text for e in events if getattr(e, "text", "").startswith("The response stream broke")]
    assert "overloaded_error" in notice and server.requests[0].request_id in notice
    assistant = session.messages[1]
    # b started but never finished: kept with empty input, so that its error result answers a call
    assert [b.get("input") for b in assistant["content"]] == [None, {"key": "a"}, {}]
    results = [b for b in session.messages[2]["content"] if b["type"] == "tool_result"]
    assert [r["tool_use_id"] for r in results] == [assistant["content"][1]["id"], assistant["content"][2]["id"]]
    assert results[1]["is_error"] is True and "truncated" in str(results[1]["content"])
    assert "cut off" in session.messages[2]["content"][-1]["text"]
    assert check_pairing(session.messages) == []
    for body in server.bodies:
        assert request_error(body) is None
    # the continuation went out by itself: the server played the broken turn again, then the answer
    assert len(server.bodies) == 3 and [key for key, _ in calls][-2:] == ["a", "b"]


@pytest.mark.asyncio
async def test_max_tokens_inside_a_tool_input_is_never_executed(server: FakeAnthropicServer) -> None:
    start = {"type": "message_start", "message": {
        "id": new_message_id(), "type": "message", "role": "assistant", "model": "m", "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 20, "output_tokens": 1}}}
    cut_in_json = [
        start,
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "tool_use", "id": "toolu_01cutcutcutcutcutcutcutc", "name": "lookup", "input": {}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": '{"key": "drop tab'}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "max_tokens", "stop_sequence": None}, "usage": {"output_tokens": 4096}},
        {"type": "message_stop"},
    ]
    server.set_turns([cut_in_json, "I will ask with a shorter input."])
    calls: list[tuple[str, float]] = []
    session, events = await run_loop(make_model(server), "Go.", lookup_tool(calls))
    assert calls == []  # the SDK would have handed over {"key": ...}-less input; it never ran
    assert finished(events).reason == "end_turn"
    result = server.bodies[1]["messages"][2]["content"][0]
    assert result["tool_use_id"] == "toolu_01cutcutcutcutcutcutcutc" and result["is_error"] is True
    text = result["content"] if isinstance(result["content"], str) else result["content"][0]["text"]
    assert "truncated" in text
    assert check_pairing(session.messages) == []
