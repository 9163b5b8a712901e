"""`ScriptedModel`: the same raw events as the API path, timing, abort, and script mistakes."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from model_support import collect

from jupyter_toolagent.core.abort import AbortSignal
from jupyter_toolagent.errors import ModelAPIError
from jupyter_toolagent.models import ScriptedModel, ScriptedTurn, text_block, tool_use_block
from jupyter_toolagent.errors import ScriptExhaustedError
from jupyter_toolagent.models.stream_events import message_stream_events

BODY = {"model": "scripted", "max_tokens": 100, "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}


async def play(model: ScriptedModel, body: dict[str, Any] = BODY, abort: AbortSignal | None = None) -> list[dict[str, Any]]:
    return await collect(model.stream(body, abort=abort or AbortSignal()))


@pytest.mark.asyncio
async def test_events_are_the_api_events_of_the_message_it_sent_without_pings() -> None:
    model = ScriptedModel([[text_block("Let me read it."), tool_use_block("Read", {"path": "a.csv"})]])
    events = await play(model)
    assert events[0]["type"] == "_request" and events[0]["request_id"].startswith("req_")
    sent = model.messages_sent[0]
    assert events[1:] == message_stream_events(sent, pings=False)
    assert sent["stop_reason"] == "tool_use"
    assert sent["content"][1]["id"].startswith("toolu_01") and sent["content"][1]["input"] == {"path": "a.csv"}


@pytest.mark.asyncio
async def test_turn_forms_and_stop_reasons() -> None:
    model = ScriptedModel([
        "plain text",
        {"type": "text", "text": "one block"},
        {"content": "message dict", "stop_reason": "max_tokens", "usage": {"input_tokens": 3, "output_tokens": 4}},
        {"content": [text_block("cut short")], "stop_reason": None},
        ScriptedTurn([text_block("stop seq")], stop_reason="stop_sequence", stop_sequence="###"),
    ])
    for _ in range(5):
        await play(model)
    sent = model.messages_sent
    assert [m["content"] for m in sent[:2]] == [[text_block("plain text")], [text_block("one block")]]
    assert [m["stop_reason"] for m in sent] == ["end_turn", "end_turn", "max_tokens", None, "stop_sequence"]
    assert sent[2]["usage"] == {"input_tokens": 3, "output_tokens": 4}
    assert sent[4]["stop_sequence"] == "###"


@pytest.mark.asyncio
async def test_ids_are_fresh_every_time_a_turn_is_played() -> None:
    blocks = [tool_use_block("Read", {"path": "x"})]
    model = ScriptedModel(lambda body: blocks)
    await play(model)
    await play(model)
    first, second = (m["content"][0]["id"] for m in model.messages_sent)
    assert first != second
    assert "id" not in blocks[0]  # the script itself is not modified
    assert model.messages_sent[0]["id"] != model.messages_sent[1]["id"]
    fixed = ScriptedModel([[tool_use_block("Read", {}, id="toolu_fixed")]])
    await play(fixed)
    assert fixed.messages_sent[0]["content"][0]["id"] == "toolu_fixed"


@pytest.mark.asyncio
async def test_turn_functions_see_the_request_and_may_be_async() -> None:
    seen: list[int] = []

    def sync_turn(body: dict[str, Any]) -> Any:
        seen.append(len(body["messages"]))
        return f"{len(body['messages'])} messages"

    async def async_turn(body: dict[str, Any]) -> Any:
        await asyncio.sleep(0)
        return [text_block("from a coroutine")]

    model = ScriptedModel(sync_turn)
    await play(model)
    assert seen == [1] and model.messages_sent[0]["content"] == [text_block("1 messages")]
    model = ScriptedModel(async_turn)
    await play(model)
    assert model.messages_sent[0]["content"] == [text_block("from a coroutine")]
    assert model.requests == [BODY] and model.requests[0] is not BODY


@pytest.mark.asyncio
async def test_running_out_of_turns_is_an_error_unless_when_exhausted() -> None:
    model = ScriptedModel(["only"])
    await play(model)
    with pytest.raises(ScriptExhaustedError) as info:
        await play(model)
    assert isinstance(info.value, ModelAPIError) and info.value.error_type == "script_exhausted"
    assert "1 turn" in str(info.value) and "when_exhausted" in str(info.value)
    model = ScriptedModel(["only"], when_exhausted="Done.")
    await play(model)
    await play(model)
    assert model.messages_sent[-1]["content"] == [text_block("Done.")]
    assert model.messages_sent[-1]["stop_reason"] == "end_turn"


@pytest.mark.parametrize("turn, words", [
    (42, "cannot use int"),
    ([{"text": "no type"}], "block 0"),
    ([{"type": "tool_use", "input": {}}], "without a 'name'"),
    ([{"type": "tool_use", "name": "Read", "input": "path"}], "not a dict"),
    ({"role": "assistant"}, "needs 'content'"),
])
@pytest.mark.asyncio
async def test_a_broken_script_is_an_invalid_script_error(turn: Any, words: str) -> None:
    with pytest.raises(ModelAPIError) as info:
        await play(ScriptedModel([turn]))
    assert info.value.error_type == "invalid_script"
    assert words in str(info.value)


@pytest.mark.asyncio
async def test_a_failing_turn_function_is_an_invalid_script_error() -> None:
    def broken(body: dict[str, Any]) -> Any:
        raise KeyError("tool_result")

    with pytest.raises(ModelAPIError) as info:
        await play(ScriptedModel(broken))
    assert info.value.error_type == "invalid_script" and "KeyError" in str(info.value)


@pytest.mark.asyncio
async def test_delays_are_honoured() -> None:
    turn = ScriptedTurn([text_block("a"), text_block("b"), text_block("c")], delay=0.2, block_delay=0.15)
    model = ScriptedModel([turn])
    stamps: list[tuple[str, float]] = []
    start = time.monotonic()
    async for event in model.stream(BODY, abort=AbortSignal()):
        stamps.append((event["type"], time.monotonic() - start))
    first_event = next(t for kind, t in stamps if kind == "message_start")
    assert first_event >= 0.19
    block_starts = [t for kind, t in stamps if kind == "content_block_start"]
    assert block_starts[1] - block_starts[0] >= 0.14 and block_starts[2] - block_starts[1] >= 0.14
    assert stamps[-1][1] < 2.0  # generous: a busy machine is slow, not this slow

    model = ScriptedModel(["x" * 48], event_delay=0.05, text_chunk=24)
    start = time.monotonic()
    events = await play(model)
    assert len(events) == 8  # _request + 7 API events, each after the first paced by 50 ms
    assert time.monotonic() - start >= 6 * 0.05 * 0.9


@pytest.mark.asyncio
async def test_abort_ends_the_stream_during_a_pause_and_at_the_next_event() -> None:
    abort = AbortSignal()
    model = ScriptedModel([ScriptedTurn([text_block("a"), text_block("b")], block_delay=10.0)])
    events: list[str] = []
    loop = asyncio.get_running_loop()
    loop.call_later(0.2, abort.abort)
    start = time.monotonic()
    async for event in model.stream(BODY, abort=abort):
        events.append(event["type"])
    assert time.monotonic() - start < 0.2 + 0.5
    assert "content_block_start" in events and events.count("content_block_start") == 1
    assert "message_stop" not in events

    abort = AbortSignal()
    model = ScriptedModel(["a" * 100], text_chunk=10)
    seen = 0
    async for event in model.stream(BODY, abort=abort):
        seen += 1
        if event["type"] == "content_block_delta":
            abort.abort()
    assert seen == 4  # _request, message_start, block start, the first delta: then nothing
    assert await play(ScriptedModel(["never"]), abort=abort) == []


@pytest.mark.asyncio
async def test_raw_event_turns_are_streamed_as_written() -> None:
    cut_json = [
        {"type": "message_start", "message": {"id": "msg_raw", "type": "message", "role": "assistant", "model": "m",
                                              "content": [], "stop_reason": None, "stop_sequence": None,
                                              "usage": {"input_tokens": 5, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "tool_use", "id": "toolu_raw", "name": "Write", "input": {}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": '{"path": "a.txt", "text": "unfin'}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "max_tokens", "stop_sequence": None}, "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    ]
    model = ScriptedModel([cut_json, ScriptedTurn(events=cut_json, event_delay=0.01)])
    events = await play(model)
    assert events[1:] == cut_json
    assert model.messages_sent[0]["stop_reason"] == "max_tokens"
    assert model.messages_sent[0]["content"][0]["id"] == "toolu_raw"
    assert (await play(model))[1:] == cut_json
