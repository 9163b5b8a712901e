"""`message_stream_events` reproduces the API's stream habits, and folds back to the message."""

from __future__ import annotations

import copy
import json
import re

from jupyter_toolagent.core.accumulator import MessageAccumulator
from jupyter_toolagent.models.stream_events import (
    estimate_tokens,
    events_without_pings,
    message_stream_events,
    new_message_id,
    new_request_id,
    new_tool_use_id,
)

INPUT = {"path": 'data/"quoted" \\ file.csv', "limit": 10, "nested": {"é": [1, 2.5, None]}}


def message(*content: dict, stop_reason: str | None = "tool_use") -> dict:
    return {"id": new_message_id(), "model": "m", "content": list(content), "stop_reason": stop_reason,
            "usage": {"input_tokens": 11, "output_tokens": 7, "cache_read_input_tokens": 3}}


def _inside_string(prefix: str) -> bool:
    """Whether JSON text ``prefix`` ends inside a string literal."""
    inside = escaped = False
    for char in prefix:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = inside
        elif char == '"':
            inside = not inside
    return inside


def fold(events: list[dict]) -> dict:
    acc = MessageAccumulator()
    for event in events:
        acc.feed(event)
    assert acc.stopped
    return {"content": acc.assistant_message()["content"], "stop_reason": acc.stop_reason, "usage": acc.usage}


def test_blocks_open_empty_and_are_filled_by_deltas() -> None:
    msg = message({"type": "text", "text": "Looking at the file now."},
                  {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": INPUT})
    events = message_stream_events(msg, text_chunk=5, json_chunk=4)
    starts = [e["content_block"] for e in events if e["type"] == "content_block_start"]
    assert starts == [{"type": "text", "text": ""}, {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}]
    tool_deltas = [e["delta"] for e in events if e["type"] == "content_block_delta" and e["index"] == 1]
    assert tool_deltas[0] == {"type": "input_json_delta", "partial_json": ""}
    assert "".join(d["partial_json"] for d in tool_deltas) == json.dumps(INPUT, ensure_ascii=False)
    assert fold(events)["content"] == msg["content"]


def test_json_chunks_split_inside_strings_and_escapes() -> None:
    raw = json.dumps(INPUT, ensure_ascii=False)
    events = message_stream_events(message({"type": "tool_use", "id": "t", "name": "Read", "input": INPUT}), json_chunk=3)
    pieces = [e["delta"]["partial_json"] for e in events if e["type"] == "content_block_delta"][1:]
    assert len(pieces) == -(-len(raw) // 3)
    # some boundary falls inside a string literal, and one right after a backslash
    boundaries = [sum(map(len, pieces[:i])) for i in range(1, len(pieces))]
    assert any(_inside_string(raw[:b]) for b in boundaries)
    assert any(piece.endswith("\\") for piece in pieces)


def test_event_order_ping_and_message_delta() -> None:
    msg = message({"type": "text", "text": "a"}, {"type": "text", "text": "b"}, stop_reason="end_turn")
    events = message_stream_events(msg)
    types = [e["type"] for e in events]
    assert types == ["message_start", "content_block_start", "ping", "content_block_delta", "content_block_stop",
                     "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"]
    start = events[0]["message"]
    assert start["content"] == [] and start["stop_reason"] is None and start["usage"]["input_tokens"] == 11
    assert start["usage"]["cache_read_input_tokens"] == 3
    assert events[-2]["delta"] == {"stop_reason": "end_turn", "stop_sequence": None}
    assert events[-2]["usage"] == {"output_tokens": 7}
    assert events_without_pings(events) == [e for e in events if e["type"] != "ping"]
    assert "ping" not in [e["type"] for e in message_stream_events(msg, pings=False)]


def test_thinking_streams_thinking_then_signature_and_whole_blocks_arrive_whole() -> None:
    redacted = {"type": "redacted_thinking", "data": "opaque=="}
    future = {"type": "some_future_block", "payload": {"x": 1}}
    msg = message({"type": "thinking", "thinking": "Let me think about this carefully.", "signature": "sig=="},
                  redacted, future, {"type": "text", "text": "Answer."}, stop_reason="end_turn")
    events = message_stream_events(msg, text_chunk=10)
    thinking = [e["delta"] for e in events if e["type"] == "content_block_delta" and e["index"] == 0]
    assert [d["type"] for d in thinking] == ["thinking_delta"] * 4 + ["signature_delta"]
    assert thinking[-1]["signature"] == "sig=="
    for index, block in ((1, redacted), (2, future)):
        assert [e for e in events if e.get("index") == index and e["type"] == "content_block_delta"] == []
        assert next(e for e in events if e.get("index") == index)["content_block"] == block
    assert fold(events)["content"] == msg["content"]


def test_input_message_is_not_modified_and_usage_is_estimated_when_missing() -> None:
    msg = message({"type": "tool_use", "id": "t", "name": "Read", "input": INPUT})
    before = copy.deepcopy(msg)
    message_stream_events(msg)
    assert msg == before
    bare = {"model": "m", "content": [{"type": "text", "text": "x" * 40}], "stop_reason": "end_turn"}
    events = message_stream_events(bare)
    assert events[-2]["usage"]["output_tokens"] == estimate_tokens(bare["content"])
    assert re.fullmatch(r"msg_01[A-Za-z0-9]{22}", events[0]["message"]["id"])


def test_id_helpers_and_token_estimate() -> None:
    assert re.fullmatch(r"toolu_01[A-Za-z0-9]{22}", new_tool_use_id())
    assert re.fullmatch(r"req_011C[A-Za-z0-9]{20}", new_request_id())
    assert len({new_tool_use_id() for _ in range(100)}) == 100
    assert estimate_tokens("abcd" * 25) == 25
    assert estimate_tokens("") == 1
    assert estimate_tokens({"a": "b" * 100}) > 25
