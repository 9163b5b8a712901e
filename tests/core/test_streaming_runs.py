"""SPEC §4.2 and §7.1 through `Session.run`: tools start while the model still streams, unsafe
calls wait, and a block whose input was cut off is never executed."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_core import from_json

from jupyter_toolagent.core.accumulator import MessageAccumulator
from jupyter_toolagent.core.session import Session
from jupyter_toolagent.errors import ModelAPIError
from jupyter_toolagent.models import ScriptedModel, ScriptedTurn, text_block, tool_use_block

from runtime_support import (
    STREAMING,
    Probe,
    RawModel,
    Raise,
    TagInput,
    Timeline,
    TimedModel,
    assert_valid_transcript,
    finished,
    message_events,
    result_text,
    run,
    run_config,
    tool_results,
)

@pytest.mark.asyncio
async def test_a_safe_tool_starts_before_message_stop() -> None:
    tl = Timeline()
    read = Probe("Read", timeline=tl, delay=0.05)
    model = TimedModel(ScriptedModel([
        ScriptedTurn([tool_use_block("Read", {"tag": "r"}), text_block("reading it now")], block_delay=0.5),
        "done",
    ]))
    session = Session()
    events = await run(session, "go", run_config(model, read))
    assert finished(events).reason == "end_turn"
    message_stop = model.time_of("message_stop")
    assert tl.starts["r"] < message_stop
    assert tl.ends["r"] < message_stop  # it even finished while the text was still coming
    assert_valid_transcript(session.messages)


@pytest.mark.asyncio
async def test_after_stream_mode_starts_tools_only_after_the_message() -> None:
    tl = Timeline()
    model = TimedModel(ScriptedModel([
        ScriptedTurn([tool_use_block("Read", {"tag": "r"}), text_block("more")], block_delay=0.3), "done"]))
    await run(Session(), "go", run_config(model, Probe("Read", timeline=tl), streaming=False))
    assert tl.starts["r"] > model.time_of("message_stop")


@pytest.mark.asyncio
async def test_an_unsafe_tool_waits_for_running_safe_ones() -> None:
    tl = Timeline()
    read, edit = Probe("Read", timeline=tl, delay=0.4), Probe("Edit", timeline=tl, safe=False)
    model = TimedModel(ScriptedModel([
        ScriptedTurn([tool_use_block("Read", {"tag": "r"}), tool_use_block("Edit", {"tag": "e"})], block_delay=0.05),
        "done",
    ]))
    session = Session()
    await run(session, "go", run_config(model, read, edit))
    edit_block_stop = [t for k, t in model.times if k == "content_block_stop"][1]
    assert edit_block_stop < tl.ends["r"]  # Edit was complete while Read still ran ...
    assert tl.starts["e"] >= tl.ends["r"]  # ... and waited for it
    assert_valid_transcript(session.messages)


def cut_tool_use_turn(raw_json: str, *, with_snapshot: bool = False) -> list[dict[str, Any]]:
    """A tool_use whose input JSON was cut by max_tokens: the block is closed, the JSON is not."""
    events = message_events([tool_use_block("Write", {"tag": "x"}, id="toolu_cut")], stop_reason="max_tokens")
    out: list[dict[str, Any]] = []
    for e in events:
        if e["type"] == "content_block_delta" and e["delta"].get("partial_json"):
            continue
        if e["type"] == "content_block_stop":
            out.append({"type": "content_block_delta", "index": 0,
                        "delta": {"type": "input_json_delta", "partial_json": raw_json}})
            if with_snapshot:  # what an SDK's derived event carries: a leniently parsed snapshot
                e = {**e, "content_block": {"type": "tool_use", "id": "toolu_cut", "name": "Write",
                                            "input": from_json(raw_json, allow_partial="trailing-strings")}}
        out.append(e)
    return out


@STREAMING
@pytest.mark.parametrize("raw_json", ['{"tag": "hello wor', '{"tag": "hello world"', '{"tag": ', "{"])
@pytest.mark.asyncio
async def test_a_tool_use_cut_by_max_tokens_is_not_executed(streaming: bool, raw_json: str) -> None:
    # The premise: a lenient parse would have produced an input that validates.
    assert TagInput.model_validate(from_json(raw_json, allow_partial=True))
    write = Probe("Write", safe=False)
    model = RawModel([cut_tool_use_turn(raw_json, with_snapshot=True), message_events([text_block("ok")], "end_turn")])
    session = Session()
    events = await run(session, "write it", run_config(model, write, streaming=streaming))
    assert write.calls == []
    result = tool_results(session.messages)["toolu_cut"]
    assert result["is_error"] is True and "truncated" in result_text(result)
    assert "not executed" in result_text(result)
    assert len(model.requests) == 2  # the model is told, and gets to answer
    assert finished(events).reason == "end_turn"
    assert_valid_transcript(session.messages)


@pytest.mark.parametrize("streaming", [True, pytest.param(False)], ids=["streaming", "after-stream"])
@pytest.mark.asyncio
async def test_every_result_is_announced_once_to_the_front_end(streaming: bool) -> None:
    model = RawModel([cut_tool_use_turn('{"tag": "hel'), message_events([text_block("ok")], "end_turn")])
    session = Session()
    events = await run(session, "go", run_config(model, Probe("Write", safe=False), streaming=streaming))
    finished_events = [e for e in events if e.kind == "tool_finished"]
    assert [(e.tool_use_id, e.status) for e in finished_events] == [("toolu_cut", "invalid")]
    assert finished_events[0].result == tool_results(session.messages)["toolu_cut"]
    assert [e.tool_use_id for e in events if e.kind == "tool_queued"] == ["toolu_cut"]


@STREAMING
@pytest.mark.asyncio
async def test_a_complete_tool_use_runs_even_when_the_message_stops_at_max_tokens(streaming: bool) -> None:
    write = Probe("Write", safe=False)
    model = RawModel([
        message_events([tool_use_block("Write", {"tag": "whole"}, id="toolu_w")], stop_reason="max_tokens"),
        message_events([text_block("ok")], "end_turn"),
    ])
    session = Session()
    await run(session, "write", run_config(model, write, streaming=streaming))
    assert write.calls == ["whole"]
    assert tool_results(session.messages)["toolu_w"]["content"] == "Write whole done"


def test_accumulator_decides_from_the_raw_json_not_a_snapshot() -> None:
    acc = MessageAccumulator()
    done = [item for e in cut_tool_use_turn('{"tag": "hel', with_snapshot=True) for item in acc.feed(e)]
    [block_done] = [d for d in done if getattr(d, "block", None) is not None]
    assert block_done.truncated is not None and "incomplete" in block_done.truncated
    assert block_done.block["input"] == {}


def broken_stream_turn() -> list[Any]:
    """Edit (complete, runs), Read (complete, queued behind Edit), then a third block cut off by
    a connection error before its content_block_stop."""
    events = message_events([tool_use_block("Edit", {"tag": "edit"}, id="toolu_edit"),
                             tool_use_block("Read", {"tag": "read"}, id="toolu_read"),
                             tool_use_block("Read", {"tag": "never"}, id="toolu_cut")])
    cut = next(i for i, e in enumerate(events) if e["type"] == "content_block_start" and e["index"] == 2)
    return [*events[:cut + 3], Raise(ConnectionResetError("connection reset by peer"))]


@STREAMING
@pytest.mark.asyncio
async def test_a_stream_broken_mid_block_keeps_what_ran_and_the_run_continues_by_itself(streaming: bool) -> None:
    tl = Timeline()
    edit, read = Probe("Edit", timeline=tl, safe=False, delay=0.3), Probe("Read", timeline=tl)
    model = RawModel([broken_stream_turn(), message_events([text_block("recovered")], "end_turn")])
    session = Session()
    events = await run(session, "go", run_config(model, edit, read, streaming=streaming,
                                                 continuation_delay=0))
    end = finished(events)
    assert end.reason == "end_turn" and len(model.requests) == 2  # continued, no new cell needed
    notices = [e.text for e in events if e.kind == "notice"]
    assert any("connection reset by peer" in t and "Continuing automatically" in t for t in notices), notices
    assistant = [m for m in session.messages if m["role"] == "assistant"][0]
    # the cut block is kept, with empty input, so its error result has a call to answer
    assert [b["id"] for b in assistant["content"]] == ["toolu_edit", "toolu_read", "toolu_cut"]
    assert assistant["content"][2]["input"] == {}
    results = tool_results(session.messages)
    assert set(results) == {"toolu_edit", "toolu_read", "toolu_cut"}
    assert "never" not in tl.starts and "read" not in tl.starts
    assert "Not run" in result_text(results["toolu_read"]) and results["toolu_read"]["is_error"] is True
    assert results["toolu_cut"]["is_error"] is True and "truncated" in result_text(results["toolu_cut"])
    if streaming:  # Edit had started at its content_block_stop: its real result is kept
        assert edit.calls == ["edit"] and results["toolu_edit"]["content"] == "Edit edit done"
    else:
        assert edit.calls == [] and "Not run" in result_text(results["toolu_edit"])
    follow_up = model.requests[1]["messages"][-1]["content"]
    assert follow_up[-1]["type"] == "text" and "cut off" in follow_up[-1]["text"]
    assert_valid_transcript(session.messages)


@pytest.mark.asyncio
async def test_a_stream_broken_inside_a_text_block_keeps_the_complete_blocks() -> None:
    events = message_events([text_block("first paragraph"), text_block("second paragraph is long")], "end_turn",
                            text_chunk=6)
    cut = next(i for i, e in enumerate(events) if e["type"] == "content_block_start" and e["index"] == 1)
    overloaded = Raise(ModelAPIError("overloaded", status=200, error_type="overloaded_error"))
    model = RawModel([[*events[:cut + 2], overloaded]] * 4)
    session = Session()
    result = await run(session, "hi", run_config(model, continuation_delay=0))
    assert finished(result).reason == "api_error"  # after 3 continuations the run stops
    assert len(model.requests) == 4
    assert any("after 3 automatic continuations" in e.text for e in result if e.kind == "notice")
    assert session.messages[1] == {"role": "assistant", "content": [{"type": "text", "text": "first paragraph"}]}
