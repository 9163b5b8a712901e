"""What each fault does to a stream (pure), the API's 400 texts, and the quickstart script."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from server_support import MODEL, body, user

from jupyter_toolagent.core.pairing import check_pairing
from jupyter_toolagent.models.turns import timed_events
from jupyter_toolagent.models.stream_events import message_stream_events
from jupyter_toolagent.testing import Fault, quickstart_turns
from jupyter_toolagent.models import text_block, tool_use_block
from jupyter_toolagent.testing.faults import plan_stream
from jupyter_toolagent.testing.validation import request_error

MESSAGE = {"id": "msg_fixed", "model": MODEL, "stop_reason": "tool_use", "content": [
    text_block("Reading."), tool_use_block("Read", {"path": "data/sales.csv", "limit": 100}, id="toolu_x")]}


def steps() -> list[tuple[float, dict[str, Any]]]:
    return timed_events(message_stream_events(MESSAGE, json_chunk=8), event_delay=0.01)


def kinds(plan_steps: list[tuple[float, dict[str, Any]]]) -> list[str]:
    return [e["type"] for _, e in plan_steps]


def test_no_fault_and_http_faults_leave_the_stream_alone() -> None:
    assert plan_stream(steps(), None).steps == steps()
    plan = plan_stream(steps(), Fault.rate_limit())
    assert plan.steps == steps() and plan.ending == "end" and not plan.broken


def test_error_event_after_n_events_breaks_the_turn() -> None:
    plan = plan_stream(steps(), Fault.error_event("overloaded_error", after_events=4, message="Overloaded"))
    assert len(plan.steps) == 4 and plan.ending == "error" and plan.broken
    assert plan.error == {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    late = plan_stream(steps(), Fault.error_event(after_events=10_000))
    assert "message_stop" not in kinds(late.steps)


@pytest.mark.parametrize("after", [0, 1, 2, 3])
def test_cut_in_tool_use_stops_inside_the_first_tool_input(after: int) -> None:
    plan = plan_stream(steps(), Fault.cut_in_tool_use(after_json_deltas=after))
    assert plan.ending == "cut" and plan.broken
    tool_events = [e for _, e in plan.steps if e.get("index") == 1]
    assert tool_events[0]["type"] == "content_block_start"
    assert [e["type"] for e in tool_events[1:]] == ["content_block_delta"] * after
    assert ("content_block_stop", 0) in [(e["type"], e.get("index")) for _, e in plan.steps]
    assert "content_block_stop" not in [e["type"] for e in tool_events]


def test_cut_without_tool_use_stops_inside_the_first_block() -> None:
    text_only = timed_events(message_stream_events({"content": [text_block("x" * 100)], "stop_reason": "end_turn"}))
    plan = plan_stream(text_only, Fault.cut_in_tool_use())
    assert kinds(plan.steps) == ["message_start", "content_block_start", "ping", "content_block_delta"]


def test_stall_adds_a_pause_and_missing_message_stop_drops_the_end() -> None:
    plan = plan_stream(steps(), Fault.stall(2.5, after_events=3))
    assert [p for p, _ in plan.steps][3] == pytest.approx(2.51) and not plan.broken
    assert plan_stream(steps(), Fault.stall(1.0, after_events=999)).final_pause == 1.0
    assert kinds(plan_stream(steps(), Fault.missing_message_stop()).steps)[-1] == "content_block_stop"
    assert kinds(plan_stream(steps(), Fault.missing_message_stop(drop_message_delta=False)).steps)[-1] == "message_delta"


def test_fault_constructors() -> None:
    assert dict(Fault.rate_limit(retry_after=3).headers) == {"retry-after": "3"}
    assert dict(Fault.rate_limit(retry_after_ms=250).headers) == {"retry-after-ms": "250", "retry-after": "1"}
    assert (Fault.overloaded().status, Fault.overloaded().error_type) == (529, "overloaded_error")
    assert Fault.server_error(502).status == 502 and not Fault.server_error().streaming_only
    assert Fault.cut_in_tool_use().streaming_only and Fault.stall(1).streaming_only


# --- validation ----------------------------------------------------------------------------------

TOOL = {"name": "Read", "description": "read", "input_schema": {"type": "object"}}
MARK = {"type": "ephemeral"}


def with_tool_use(result_first: bool = True) -> list[dict[str, Any]]:
    use = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_A", "name": "Read", "input": {}}]}
    result = {"type": "tool_result", "tool_use_id": "toolu_A", "content": "rows"}
    note = {"type": "text", "text": "and a note"}
    return [user("go"), use, {"role": "user", "content": [result, note] if result_first else [note, result]}]


def test_valid_bodies_pass() -> None:
    assert request_error(body(with_tool_use(), tools=[TOOL], system=[{"type": "text", "text": "s", "cache_control": MARK}])) is None
    assert request_error({"model": MODEL, "messages": [user("x")]}, count_tokens=True) is None


@pytest.mark.parametrize("change, text", [
    (lambda b: b.pop("max_tokens"), "max_tokens: Field required"),
    (lambda b: b.pop("model"), "model: Field required"),
    (lambda b: b.update(tools=[TOOL, dict(TOOL)]), "tools: Tool names must be unique."),
    (lambda b: b.update(tools=[dict(TOOL, cache_control=MARK)] * 1,
                        system=[{"type": "text", "text": "s", "cache_control": MARK}] * 3,
                        messages=[{"role": "user", "content": [{"type": "text", "text": "x", "cache_control": MARK}]}]),
     "A maximum of 4 blocks with cache_control may be provided. Found 5."),
    (lambda b: b.update(messages=[{"role": "user", "content": [{"type": "text", "text": ""}]}]),
     "messages: text content blocks must be non-empty"),
    (lambda b: b.update(messages=[{"role": "user", "content": [{"type": "text", "text": " \n "}]}]),
     "messages: text content blocks must contain non-whitespace text"),
    (lambda b: b.update(system=[{"type": "text", "text": ""}]), "system: text content blocks must be non-empty"),
    (lambda b: b.update(messages=[user("a"), {"role": "assistant", "content": ""}, user("b")]),
     "messages.1: all messages must have non-empty content except for the optional final assistant message"),
])
def test_the_apis_400_texts(change: Any, text: str) -> None:
    request = body()
    change(request)
    assert request_error(request) == text


def test_pairing_errors_are_the_appendix_a_texts() -> None:
    missing = with_tool_use(result_first=False)
    assert request_error(body(missing)) == (
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_A. "
        "Each `tool_use` block must have a corresponding `tool_result` block in the next message.")
    orphan = [user("go"), {"role": "assistant", "content": [text_block("hi")]},
              {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_X", "content": "r"}]}]
    assert request_error(body(orphan)) == (
        "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_X. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.")
    thinking = copy.deepcopy(with_tool_use())
    thinking[1]["content"] = [text_block("first"), {"type": "thinking", "thinking": "t", "signature": "s"},
                              *thinking[1]["content"]]
    assert request_error(body(thinking)) == check_pairing(thinking)[0].message == (
        "messages.1.content.0: If an assistant message contains any thinking blocks, the first block must be "
        "thinking or redacted_thinking. Found text.")


# --- quickstart ------------------------------------------------------------------------------------

def test_quickstart_asks_for_variables_then_quotes_them() -> None:
    turn = quickstart_turns()
    listing = {"name": "ListVariables", "description": "", "input_schema": {"type": "object"}}
    first = turn(body([user("What data do I have?")], tools=[listing]))
    assert [b["type"] for b in first] == ["text", "tool_use"] and first[1]["name"] == "ListVariables"
    after = [user("What data do I have?"), {"role": "assistant", "content": [dict(first[1], id="toolu_1")]},
             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                           "content": [{"type": "text", "text": "sales: DataFrame (120, 4)\nprices: dict"}]}]}]
    reply = turn(body(after, tools=[listing]))
    assert "> sales: DataFrame (120, 4)\n> prices: dict" in reply[0]["text"] and "offline" in reply[0]["text"]
    assert "not enabled" in turn(body([user("hi")]))[0]["text"]
