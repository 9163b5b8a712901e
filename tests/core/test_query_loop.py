"""The query loop (`drive_run` through `Session.run`): when it makes a follow-up request, how
each stop reason ends a run, API errors, dry runs, and the repair of a broken transcript."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from jupyter_toolagent.core.abort import AbortSignal
from jupyter_toolagent.core.events import NoticeEvent
from jupyter_toolagent.core.hook_types import PreToolUseOutcome
from jupyter_toolagent.core.pairing import check_pairing, normalize_messages_for_api
from jupyter_toolagent.core.session import Session
from jupyter_toolagent.errors import ModelAPIError
from jupyter_toolagent.models import ScriptedModel, text_block, tool_use_block

from runtime_support import (
    Probe,
    StubHooks,
    assert_valid_transcript,
    finished,
    run,
    run_config,
)


@pytest.mark.asyncio
async def test_tool_use_blocks_cause_a_follow_up_even_with_end_turn() -> None:
    read = Probe("Read")
    model = ScriptedModel([{"content": [tool_use_block("Read", {"tag": "a"})], "stop_reason": "end_turn"}, "done"])
    session = Session()
    events = await run(session, "go", run_config(model, read))
    assert len(model.requests) == 2
    assert read.calls == ["a"]
    assert finished(events).reason == "end_turn"
    second = model.requests[1]["messages"]
    assert second[-1]["content"][0]["type"] == "tool_result"
    assert_valid_transcript(session.messages)


@pytest.mark.asyncio
async def test_end_turn_without_tool_use_ends_the_run() -> None:
    model = ScriptedModel(["just text"])
    session = Session()
    events = await run(session, "go", run_config(model))
    assert len(model.requests) == 1
    assert finished(events).reason == "end_turn"
    assert session.messages == [{"role": "user", "content": [{"type": "text", "text": "go"}]},
                                {"role": "assistant", "content": [{"type": "text", "text": "just text"}]}]


@pytest.mark.asyncio
async def test_max_turns_is_honoured() -> None:
    read = Probe("Read")
    model = ScriptedModel(lambda body: [tool_use_block("Read", {"tag": "again"})])
    session = Session()
    events = await run(session, "loop", run_config(model, read, max_turns=3))
    assert len(model.requests) == 3 and len(read.calls) == 3
    assert finished(events).reason == "max_turns"
    assert any(isinstance(e, NoticeEvent) and "3" in e.text for e in events)
    assert_valid_transcript(session.messages)


@pytest.mark.asyncio
async def test_pause_turn_continues() -> None:
    model = ScriptedModel([{"content": "searching…", "stop_reason": "pause_turn"}, "found it"])
    session = Session()
    events = await run(session, "go", run_config(model))
    assert len(model.requests) == 2
    assert model.requests[1]["messages"][-1]["role"] == "assistant"  # the paused turn is sent back
    assert finished(events).reason == "end_turn"


@pytest.mark.parametrize("stop_reason,reason", [("refusal", "refusal"), ("max_tokens", "max_tokens"),
                                                (None, "truncated"), ("stop_sequence", "stop_sequence")])
@pytest.mark.asyncio
async def test_stop_reasons_without_tool_use_end_the_run(stop_reason: str | None, reason: str) -> None:
    model = ScriptedModel([{"content": "partial answer", "stop_reason": stop_reason}, "never sent"])
    session = Session()
    events = await run(session, "go", run_config(model))
    assert len(model.requests) == 1
    assert finished(events).reason == reason
    if reason in ("refusal", "max_tokens", "truncated"):
        assert any(isinstance(e, NoticeEvent) and e.level == "warning" for e in events)


@pytest.mark.asyncio
async def test_refusal_ends_the_run_even_after_tool_use() -> None:
    read = Probe("Read")
    model = ScriptedModel([{"content": [tool_use_block("Read", {"tag": "a"})], "stop_reason": "refusal"}, "never"])
    session = Session()
    events = await run(session, "go", run_config(model, read))
    assert finished(events).reason == "refusal"
    assert len(model.requests) == 1
    assert_valid_transcript(session.messages)


class FailingModel:
    model_name = "failing"

    def __init__(self, exc: Exception) -> None:
        self.exc = exc
        self.requests = 0

    async def stream(self, body: dict[str, Any], *, abort: AbortSignal):  # noqa: ANN201
        self.requests += 1
        raise self.exc
        yield {}  # pragma: no cover


@pytest.mark.asyncio
async def test_model_api_error_ends_the_run_with_its_text() -> None:
    error = ModelAPIError("Overloaded", status=529, error_type="overloaded_error", request_id="req_123",
                          hint="try again in a minute")
    session = Session()
    session.messages.extend([{"role": "user", "content": "earlier"}, {"role": "assistant", "content": "answer"}])
    events = await run(session, "go", run_config(FailingModel(error)))
    end = finished(events)
    assert end.reason == "api_error"
    assert end.error == error.one_line()
    assert "HTTP 529" in end.error and "overloaded_error" in end.error and "req_123" in end.error
    assert any(isinstance(e, NoticeEvent) and e.level == "error" and e.text == end.error for e in events)
    assert session.runs[-1].finish_reason == "api_error"
    assert_valid_transcript(session.messages)
    ok = await run(session, "again", run_config(ScriptedModel(["fine"])))
    assert finished(ok).reason == "end_turn"


@pytest.mark.asyncio
async def test_model_raising_a_plain_exception_is_reported_as_a_broken_stream() -> None:
    events = await run(Session(), "go", run_config(FailingModel(OSError("network unreachable"))))
    end = finished(events)
    assert end.reason == "api_error" and "network unreachable" in (end.error or "")


@pytest.mark.asyncio
async def test_dry_run_sends_nothing_and_leaves_the_transcript_unchanged() -> None:
    model = ScriptedModel(["never"])
    session = Session()
    session.messages.extend([{"role": "user", "content": [{"type": "text", "text": "before"}]},
                             {"role": "assistant", "content": [{"type": "text", "text": "reply"}]}])
    before = copy.deepcopy(session.messages)
    events = await run(session, "what would you send?", run_config(model, Probe("Read"), dry_run=True))
    assert model.requests == []
    assert session.messages == before
    assert finished(events).reason == "dry_run"
    [body] = session.runs[-1].requests
    assert body["messages"][-1]["content"][0]["text"] == "what would you send?"
    assert [t["name"] for t in body["tools"]] == ["Read", "ReadToolOutput"]
    assert any(isinstance(e, NoticeEvent) and "what would you send?" in e.text for e in events)


def broken_transcript() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": [tool_use_block("Read", {"tag": "x"}, id="toolu_lost")]},
        {"role": "user", "content": [{"type": "text", "text": "where is my result?"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "unknown"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_orphan", "content": "?"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
    ]


@pytest.mark.asyncio
async def test_dry_run_leaves_a_broken_transcript_unchanged() -> None:
    session = Session()
    session.messages.extend(broken_transcript())
    before = copy.deepcopy(session.messages)
    events = await run(session, "dry", run_config(ScriptedModel(["never"]), dry_run=True))
    assert finished(events).reason == "dry_run"
    assert check_pairing(session.runs[-1].requests[0]["messages"]) == []  # the request shown is repaired
    assert session.messages == before


@pytest.mark.asyncio
async def test_a_broken_transcript_is_repaired_before_it_is_sent() -> None:
    session = Session()
    session.messages.extend(broken_transcript())
    model = ScriptedModel(["fixed"])
    events = await run(session, "continue", run_config(model, Probe("Read")))
    assert finished(events).reason == "end_turn"
    [request] = model.requests
    assert check_pairing(request["messages"]) == []
    notices = [e for e in events if isinstance(e, NoticeEvent) and "repaired" in e.text]
    assert len(notices) == 1 and notices[0].level == "warning"
    assert "toolu_lost" in notices[0].text and "toolu_orphan" in notices[0].text
    assert_valid_transcript(session.messages)


@pytest.mark.asyncio
async def test_every_request_the_model_receives_is_valid() -> None:
    read = Probe("Read", fail="sometimes fails")
    model = ScriptedModel([
        [text_block("two calls"), tool_use_block("Read", {"tag": "a"}), tool_use_block("Nope", {})],
        [tool_use_block("Read", {"tag": 1})],
        "done",
    ])
    session = Session()
    await run(session, "go", run_config(model, read))
    assert len(model.requests) == 3
    for body in model.requests:
        assert check_pairing(body["messages"]) == []


@pytest.mark.asyncio
async def test_a_hook_stop_finishes_the_batch_then_ends_the_run() -> None:
    read = Probe("Read", delay=0.05)
    hooks = StubHooks(lambda name, input: PreToolUseOutcome(stop=True, stop_reason="enough reading")
                      if input.get("tag") == "a" else PreToolUseOutcome())
    model = ScriptedModel([[tool_use_block("Read", {"tag": "a"}), tool_use_block("Read", {"tag": "b"})], "never"])
    session = Session()
    events = await run(session, "go", run_config(model, read, hooks=hooks))
    assert finished(events).reason == "hook_stopped"
    assert sorted(read.calls) == ["a", "b"]
    assert len(model.requests) == 1
    assert any(isinstance(e, NoticeEvent) and "enough reading" in e.text for e in events)
    assert_valid_transcript(session.messages)


@pytest.mark.asyncio
async def test_usage_is_summed_over_requests() -> None:
    model = ScriptedModel([
        {"content": [tool_use_block("Read", {"tag": "a"})], "usage": {"input_tokens": 100, "output_tokens": 7}},
        {"content": "done", "usage": {"input_tokens": 150, "output_tokens": 3, "cache_read_input_tokens": 90}},
    ])
    session = Session()
    events = await run(session, "go", run_config(model, Probe("Read")))
    usage = finished(events).usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_input_tokens, usage.requests) == (250, 10, 90, 2)


# --- duplicate tool_use ids (only a hand-written script can produce them) ------------------------

def _duplicate_turns() -> list[Any]:
    return [[tool_use_block("Write", {"tag": "one"}, id="toolu_dup"),
             tool_use_block("Write", {"tag": "two"}, id="toolu_dup")], "done"]


@pytest.mark.asyncio
async def test_duplicate_ids_in_one_message_each_run_their_own_input_when_streaming() -> None:
    write = Probe("Write", safe=False)
    model = ScriptedModel(_duplicate_turns())
    session = Session()
    await run(session, "go", run_config(model, write))
    assert write.calls == ["one", "two"]
    for body in model.requests:
        assert check_pairing(body["messages"]) == []
    assert_valid_transcript(session.messages)  # repaired (renamed) before the follow-up request


@pytest.mark.asyncio
async def test_duplicate_ids_in_one_message_each_run_their_own_input_after_the_stream() -> None:
    write = Probe("Write", safe=False)
    session = Session()
    await run(session, "go", run_config(ScriptedModel(_duplicate_turns()), write, streaming=False))
    assert write.calls == ["one", "two"]


@pytest.mark.asyncio
async def test_duplicate_ids_leave_a_valid_transcript_when_the_run_ends_there() -> None:
    session = Session()
    await run(session, "go", run_config(ScriptedModel(_duplicate_turns()), Probe("Write", safe=False), max_turns=1))
    assert check_pairing(normalize_messages_for_api(session.messages)) == []
