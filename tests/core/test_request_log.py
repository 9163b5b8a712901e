"""`RequestLog` (`RunRecord.requests`): every body comes back equal to what was appended, in the
same key order, whatever changed between requests; stored bodies do not follow later edits of
what was appended; and the memory a body costs does not grow with the conversation."""

from __future__ import annotations

import copy
import json
import tracemalloc
from typing import Any

import pytest

from jupyter_toolagent.core.request_log import RequestLog
from jupyter_toolagent.core.request_body import build_request_body

TOOLS = [{"name": n, "description": f"{n} tool", "input_schema": {"type": "object"}} for n in ("Glob", "Read")]


def conversation(turns: int, *, width: int = 20) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": "look at the data"}]}]
    for n in range(turns):
        messages.append({"role": "assistant", "content": [
            {"type": "text", "text": f"step {n} " + "x" * width},
            {"type": "tool_use", "id": f"toolu_{n}", "name": "Read", "input": {"path": f"{n}.csv"}}]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": f"rows of {n} " + "y" * width}]})
    return messages


def body_for(messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] = TOOLS, system: str = "S",
             **kw: Any) -> dict[str, Any]:
    return build_request_body(model="m", system=system, tools=copy.deepcopy(tools), messages=messages,
                              max_tokens=100, **kw)


def as_json(bodies: Any) -> list[str]:
    return [json.dumps(b, ensure_ascii=False) for b in bodies]


def session_of_bodies() -> list[dict[str, Any]]:
    """Requests of a run where, besides the growing conversation, things change: the tool list,
    the system prompt, a transcript cut short (a repair), extra fields, and a body without messages."""
    bodies = [body_for(conversation(n)) for n in range(4)]
    bodies.append(body_for(conversation(4), tools=TOOLS[:1]))  # a tool went away
    bodies.append(body_for(conversation(5), tools=TOOLS[:1], system="Other"))
    shortened = conversation(5)[:-2] + [{"role": "user", "content": "start again"}]
    bodies.append(body_for(shortened, thinking={"type": "enabled", "budget_tokens": 1024}))
    bodies.append(body_for(conversation(6), extra={"tool_choice": {"type": "auto"}}))
    bodies.append({"model": "m", "max_tokens": 1})
    bodies.append(body_for(conversation(7)))
    bodies.append(body_for(conversation(7)))  # the same request twice
    return bodies


def test_every_body_comes_back_equal_with_the_same_key_order() -> None:
    bodies = session_of_bodies()
    log = RequestLog()
    for body in bodies:
        log.append(body)
    expected = copy.deepcopy(bodies)
    assert len(log) == len(bodies)
    assert [log[n] for n in range(len(log))] == expected
    assert list(log) == expected
    assert as_json(log) == as_json(expected) and as_json(log[n] for n in range(len(log))) == as_json(expected)
    assert [log[-n] for n in range(1, len(log) + 1)] == expected[::-1]
    assert log[2:5] == expected[2:5] and log[::-3] == expected[::-3] and log[-1:] == expected[-1:]
    with pytest.raises(IndexError):
        log[len(bodies)]
    with pytest.raises(IndexError):
        log[-len(bodies) - 1]


def test_a_log_compares_equal_to_the_list_of_its_bodies() -> None:
    bodies = session_of_bodies()
    log = RequestLog(bodies)
    assert log == bodies and bodies == log and log == RequestLog(bodies)
    assert log != bodies[:-1] and log != [*bodies[:-1], body_for(conversation(1))]
    assert RequestLog() == [] and not RequestLog() and bool(log)
    assert "RequestLog" in repr(log)


def test_stored_bodies_do_not_follow_later_changes_to_what_was_appended() -> None:
    messages = conversation(2)
    tools = copy.deepcopy(TOOLS)
    body = build_request_body(model="m", system="S", tools=tools, messages=messages, max_tokens=5)
    sent = copy.deepcopy(body)
    log = RequestLog([body])
    messages[1]["content"][1]["input"]["path"] = "edited.csv"  # the transcript is edited in place
    messages[0]["content"].append({"type": "text", "text": "added later"})
    messages.append({"role": "assistant", "content": "more"})
    body["tools"][0]["description"] = "changed"
    body["max_tokens"] = 7
    assert log[0] == sent and list(log) == [sent]


def test_reading_a_body_does_not_change_the_log() -> None:
    bodies = session_of_bodies()
    log = RequestLog(bodies)
    first = log[3]
    first["max_tokens"] = 0
    first["messages"].append({"role": "user", "content": "appended to a copy"})
    assert list(log) == bodies


def test_unchanged_fields_are_kept_once() -> None:
    """Observable through memory: appending the same tool list 200 times adds no tool lists."""
    big_tools = [{"name": f"T{n}", "description": "d" * 500, "input_schema": {"type": "object"}} for n in range(20)]
    messages = [{"role": "user", "content": "hi"}]
    log = RequestLog([body_for(messages, tools=big_tools)])
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(200):
            log.append(body_for(messages, tools=big_tools))
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    one_tool_list = len(json.dumps(big_tools))
    # a stored copy per request would cost more than `one_tool_list` bytes each time
    assert grown / 200 < one_tool_list / 10, f"{grown} bytes for 200 requests, tool list {one_tool_list}"
    assert log[-1] == body_for(messages, tools=big_tools)


def test_memory_per_body_does_not_grow_with_the_conversation() -> None:
    marks: dict[int, int] = {}
    log = RequestLog()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        messages = conversation(0, width=200)
        for n in range(300):
            grown = conversation(n + 1, width=200)
            messages.extend(grown[len(messages):])  # the transcript grows as a session's does
            log.append(body_for(messages))
            if n + 1 in (100, 200, 300):
                marks[n + 1] = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    first, second = (marks[200] - marks[100]) / 100, (marks[300] - marks[200]) / 100
    transcript_per_turn = len(json.dumps(conversation(1, width=200))) - len(json.dumps(conversation(0, width=200)))
    # the transcript itself grows by `transcript_per_turn` bytes of JSON per request: the log
    # keeps a copy of what was new (a few times that in Python objects), never the whole body
    assert second <= 1.5 * first + 512, (first, second)
    assert second <= 40 * transcript_per_turn, (second, transcript_per_turn)
    assert log[-1] == body_for(messages) and log[0] == body_for(conversation(1, width=200))
