"""`build_request_body`: breakpoint placement, no mutation, and a byte-stable cached prefix."""

from __future__ import annotations

import copy
import json

import pytest

from jupyter_toolagent.core.request_body import (
    CACHE_CONTROL,
    build_request_body,
    cache_prefix_bytes,
    cache_prefix_view,
    strip_cache_control,
)
from jupyter_toolagent.testing.validation import request_error

TOOLS = [{"name": n, "description": f"{n} tool", "input_schema": {"type": "object"}} for n in ("Glob", "Read")]


def marked_paths(body: dict) -> list[str]:
    found: list[str] = []

    def walk(value: object, path: str) -> None:
        if isinstance(value, dict):
            if "cache_control" in value:
                found.append(path)
            for k, v in value.items():
                walk(v, f"{path}.{k}")
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, f"{path}[{i}]")

    walk(body, "")
    return found


def conversation(turns: int) -> list[dict]:
    messages: list[dict] = [{"role": "user", "content": "look at the data"}]
    for n in range(turns):
        messages.append({"role": "assistant", "content": [
            {"type": "text", "text": f"step {n}"},
            {"type": "tool_use", "id": f"toolu_{n}", "name": "Read", "input": {"path": f"{n}.csv"}}]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": f"rows of {n}"}]})
    return messages


def body_for(messages: list[dict], **kw: object) -> dict:
    return build_request_body(model="m", system="You work in a kernel.", tools=TOOLS, messages=messages,
                              max_tokens=1000, **kw)


def test_breakpoints_on_last_tool_system_and_last_block_of_last_message() -> None:
    body = body_for(conversation(2))
    assert marked_paths(body) == [".tools[1]", ".system[0]", ".messages[4].content[0]"]
    assert body["tools"][1]["cache_control"] == CACHE_CONTROL and "cache_control" not in body["tools"][0]
    assert body["system"] == [{"type": "text", "text": "You work in a kernel.", "cache_control": CACHE_CONTROL}]
    assert request_error(body) is None  # the API would take it (three of the four markers)


def test_string_content_becomes_a_text_block_in_every_message() -> None:
    body = body_for([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"},
                     {"role": "user", "content": "more"}])
    assert body["messages"][0]["content"] == [{"type": "text", "text": "hi"}]
    assert body["messages"][1]["content"] == [{"type": "text", "text": "hello"}]
    assert body["messages"][2]["content"] == [{"type": "text", "text": "more", "cache_control": CACHE_CONTROL}]


def test_thinking_and_empty_text_are_never_marked() -> None:
    messages = [{"role": "user", "content": "q"},
                {"role": "assistant", "content": [{"type": "text", "text": "partial"},
                                                  {"type": "thinking", "thinking": "t", "signature": "s"},
                                                  {"type": "text", "text": ""}]}]
    body = body_for(messages)
    assert marked_paths(body)[-1] == ".messages[1].content[0]"


def test_inputs_are_never_mutated() -> None:
    messages, tools = conversation(3), copy.deepcopy(TOOLS)
    before = copy.deepcopy((messages, tools))
    body = build_request_body(model="m", system="s", tools=tools, messages=messages, max_tokens=5,
                              thinking={"type": "enabled", "budget_tokens": 1024}, extra={"metadata": {"user_id": "u"}})
    assert (messages, tools) == before
    body["messages"][-1]["content"][0]["content"] = "changed"
    body["thinking"]["budget_tokens"] = 1
    assert (messages, tools) == before


def test_empty_system_and_tools_are_left_out_and_extra_cannot_override() -> None:
    body = build_request_body(model="m", system="", tools=[], messages=[{"role": "user", "content": "x"}],
                              max_tokens=5, extra={"tool_choice": {"type": "auto"}})
    assert "system" not in body and "tools" not in body and body["tool_choice"] == {"type": "auto"}
    with pytest.raises(ValueError, match="max_tokens"):
        build_request_body(model="m", system="", tools=[], messages=[], max_tokens=5, extra={"max_tokens": 9})


def test_each_request_starts_with_the_previous_requests_prefix() -> None:
    bodies = [body_for(conversation(n)) for n in range(6)]
    for prev, nxt in zip(bodies, bodies[1:]):
        assert cache_prefix_bytes(nxt).startswith(cache_prefix_bytes(prev))
        assert len(cache_prefix_bytes(nxt)) > len(cache_prefix_bytes(prev))
    # the raw bytes differ only where the marker moved; without markers they are equal
    assert json.dumps(bodies[1]["messages"]) != json.dumps(bodies[2]["messages"][:3])
    assert strip_cache_control(bodies[1]["messages"]) == strip_cache_control(bodies[2]["messages"][:3])


def test_prefix_changes_when_the_tools_or_the_system_prompt_change() -> None:
    base = body_for(conversation(1))
    other_tools = build_request_body(model="m", system="You work in a kernel.", tools=TOOLS[::-1],
                                     messages=conversation(2), max_tokens=1000)
    other_system = build_request_body(model="m", system="Another prompt.", tools=TOOLS,
                                      messages=conversation(2), max_tokens=1000)
    assert not cache_prefix_bytes(other_tools).startswith(cache_prefix_bytes(base))
    assert not cache_prefix_bytes(other_system).startswith(cache_prefix_bytes(base))


def test_prefix_view_reads_string_spellings_as_blocks() -> None:
    as_string = {"system": "S", "messages": [{"role": "user", "content": "hi"}]}
    as_blocks = {"system": [{"type": "text", "text": "S", "cache_control": CACHE_CONTROL}],
                 "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}
    assert list(cache_prefix_view(as_string)) == list(cache_prefix_view(as_blocks))
    assert cache_prefix_bytes(as_string) == cache_prefix_bytes(as_blocks)
