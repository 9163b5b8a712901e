"""SPEC §4.3: aborting a run (Stop button) and cancelling the task that consumes it (kernel
interrupt). Every tool_use still gets exactly one result, `cancel` tools stop, `block` tools
finish, and the next run sends a valid transcript."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from jupyter_toolagent.core import scheduling
from jupyter_toolagent.core.abort import AbortSignal
from jupyter_toolagent.core.pairing import check_pairing
from jupyter_toolagent.core.scheduling import run_tools
from jupyter_toolagent.core.session import RunConfig, Session
from jupyter_toolagent.core.streaming_executor import StreamingToolExecutor
from jupyter_toolagent.models import ScriptedModel, ScriptedTurn, text_block, tool_use_block

from runtime_support import (
    Probe,
    StopInFlight,
    TimedModel,
    Timeline,
    assert_valid_transcript,
    ctx_for,
    finished,
    result_text,
    run,
    run_config,
    tool_results,
)



class Scene:
    """Fetch (safe, cancel, long) ‖ Save (safe, block), then Write (unsafe) and Read queued behind."""

    def __init__(self) -> None:
        self.tl = Timeline()
        self.fetch_started, self.save_started = asyncio.Event(), asyncio.Event()
        self.fetch = Probe("Fetch", timeline=self.tl, delay=3.0, started=self.fetch_started)
        self.save = Probe("Save", timeline=self.tl, delay=0.5, behavior="block", started=self.save_started)
        self.write = Probe("Write", timeline=self.tl, safe=False)
        self.read = Probe("Read", timeline=self.tl)
        self.turn = [text_block("working"), tool_use_block("Fetch", {"tag": "fetch"}, id="toolu_fetch"),
                     tool_use_block("Save", {"tag": "save"}, id="toolu_save"),
                     tool_use_block("Write", {"tag": "write"}, id="toolu_write"),
                     tool_use_block("Read", {"tag": "read"}, id="toolu_read")]

    def config(self, model: Any, streaming: bool = True) -> RunConfig:
        return run_config(model, self.fetch, self.save, self.write, self.read, streaming=streaming)

    async def both_started(self, model: TimedModel | None = None) -> None:
        """Both running, and (with a timed model) the whole message received."""
        events = [self.fetch_started, self.save_started] + ([model.message_stopped] if model is not None else [])
        for event in events:
            await asyncio.wait_for(event.wait(), 5)


async def stop_when(condition: Any, abort: AbortSignal, settle: float = 0.0) -> None:
    """The Stop button: pressed once ``condition`` (a coroutine) returns."""
    await condition
    if settle:  # (no await at all otherwise: the Stop lands while the last event is in flight)
        await asyncio.sleep(settle)
    abort.abort("Stop button")


async def run_with_stop(session: Session, config: RunConfig, abort: AbortSignal, stopper: Any) -> list[Any]:
    """Run while ``stopper`` (a coroutine that aborts) runs alongside; never leaves it pending."""
    task = asyncio.ensure_future(stopper)
    try:
        return await asyncio.wait_for(run(session, "go", config, abort=abort), 3)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def assert_aborted_results(scene: Scene, session: Session) -> None:
    results = tool_results(session.messages)
    assert set(results) == {"toolu_fetch", "toolu_save", "toolu_write", "toolu_read"}
    assert "fetch" in scene.tl.starts and "fetch" not in scene.tl.ends  # cancel: stopped
    fetch = result_text(results["toolu_fetch"])
    assert results["toolu_fetch"]["is_error"] is True and "Interrupted" in fetch and "partly run" in fetch
    for queued in ("toolu_write", "toolu_read"):
        assert results[queued]["is_error"] is True
        text = result_text(results[queued]).lower()
        assert "cancelled" in text and "did not run" in text
    assert "write" not in scene.tl.starts and "read" not in scene.tl.starts


@pytest.mark.parametrize("streaming,in_flight", [
    pytest.param(True, True),
    (True, False),
    (False, False),
], ids=["streaming-stop-as-the-message-ends", "streaming-stop-later", "after-stream"])
@pytest.mark.asyncio
async def test_abort_in_the_middle_of_a_batch(streaming: bool, in_flight: bool) -> None:
    scene = Scene()
    session, abort = Session(), AbortSignal()
    if in_flight:  # the Stop lands while message_stop is on its way to the run
        model: Any = TimedModel(StopInFlight(ScriptedModel([scene.turn, "resumed"]), abort))
        stopper = asyncio.sleep(0)
    else:  # the Stop comes once everything arrived and Fetch and Save run
        model = TimedModel(ScriptedModel([scene.turn, "resumed"]))
        stopper = stop_when(scene.both_started(model), abort, settle=0.1)
    started = time.monotonic()
    events = await run_with_stop(session, scene.config(model, streaming), abort, stopper)
    assert abort.aborted
    assert time.monotonic() - started < 2.5  # Fetch's 3 s were not waited for
    assert finished(events).reason == "aborted"
    assert_aborted_results(scene, session)
    assert "save" in scene.tl.ends  # block: finished
    assert tool_results(session.messages)["toolu_save"]["content"] == "Save save done"
    last = session.messages[-1]["content"]
    assert [b["type"] for b in last] == ["tool_result"] * 4 + ["text"]
    assert "interrupted this run (Stop button)" in last[-1]["text"]
    assert_valid_transcript(session.messages)
    statuses = {e.tool_use_id: e.status for e in events if e.kind == "tool_finished"}
    assert statuses == {"toolu_fetch": "interrupted", "toolu_save": "done", "toolu_write": "cancelled",
                        "toolu_read": "cancelled"}

    again = await run(session, "continue", scene.config(model, streaming))
    assert finished(again).reason == "end_turn"
    assert check_pairing(session.runs[-1].requests[-1]["messages"]) == []
    assert_valid_transcript(session.messages)


@pytest.mark.asyncio
async def test_executor_gives_queued_calls_a_result_when_aborted() -> None:
    started = asyncio.Event()
    fetch = Probe("Fetch", delay=3.0, started=started)
    write = Probe("Write", safe=False)
    ctx = ctx_for(fetch, write)
    executor = StreamingToolExecutor(ctx)
    executor.add(tool_use_block("Fetch", {"tag": "f"}, id="toolu_f"))
    await started.wait()
    executor.add(tool_use_block("Write", {"tag": "w"}, id="toolu_w"))  # queued behind the running call
    ctx.abort.abort("Stop button")
    outcomes = await asyncio.wait_for(executor.finish(), 2)
    assert [(o.tool_use_id, o.status) for o in outcomes] == [("toolu_f", "interrupted"), ("toolu_w", "cancelled")]
    assert write.calls == []


@pytest.mark.asyncio
async def test_abort_while_streaming_keeps_only_the_blocks_that_arrived() -> None:
    scene = Scene()
    model = ScriptedModel([ScriptedTurn(scene.turn, block_delay=0.5)])
    session, abort = Session(), AbortSignal()
    events = await run_with_stop(session, scene.config(model), abort, stop_when(scene.both_started(), abort))
    assert abort.aborted
    assert finished(events).reason == "aborted"
    [assistant] = [m for m in session.messages if m["role"] == "assistant"]
    kept = [b.get("id") for b in assistant["content"] if b["type"] == "tool_use"]
    assert kept == ["toolu_fetch", "toolu_save"]  # Write and Read never arrived
    assert set(tool_results(session.messages)) == set(kept)
    assert_valid_transcript(session.messages)


async def _cancel_consumer(scene: Scene, session: Session, model: Any) -> None:
    timed = TimedModel(model)
    task = asyncio.ensure_future(run(session, "go", scene.config(timed)))
    try:
        await scene.both_started(timed)
    finally:
        task.cancel()  # the kernel interrupt
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 5)


@pytest.mark.asyncio
async def test_cancelling_the_consuming_task_leaves_a_valid_transcript() -> None:
    scene = Scene()
    model = ScriptedModel([scene.turn, "resumed"])
    session = Session()
    await _cancel_consumer(scene, session, model)
    assert_aborted_results(scene, session)
    assert "kernel interrupt" in session.messages[-1]["content"][-1]["text"]
    assert session.runs[-1].finish_reason == "aborted"
    assert_valid_transcript(session.messages)
    again = await run(session, "continue", scene.config(model))
    assert finished(again).reason == "end_turn"
    assert check_pairing(model.requests[-1]["messages"]) == []


@pytest.mark.asyncio
async def test_a_block_tool_finishes_on_kernel_interrupt() -> None:
    scene = Scene()
    session = Session()
    await _cancel_consumer(scene, session, ScriptedModel([scene.turn]))
    await asyncio.sleep(0.7)
    assert "save" in scene.tl.ends
    assert tool_results(session.messages)["toolu_save"]["content"] == "Save save done"


@pytest.mark.asyncio
async def test_abort_while_waiting_for_a_permission_decision() -> None:
    asked = asyncio.Event()

    async def never_answers(call, ctx, *, hook_decision):  # noqa: ANN001
        asked.set()
        await asyncio.Event().wait()  # a person who never clicks
        raise AssertionError("unreachable")

    write = Probe("Write", safe=False)
    model = ScriptedModel([[tool_use_block("Write", {"tag": "w"}, id="toolu_w")]])
    session, abort = Session(), AbortSignal()
    events = await run_with_stop(session, run_config(model, write, can_use_tool=never_answers), abort,
                                 stop_when(asked.wait(), abort))
    assert abort.aborted
    assert finished(events).reason == "aborted"
    assert write.calls == []
    result = tool_results(session.messages)["toolu_w"]
    assert result["is_error"] is True and "did not run" in result_text(result)
    assert_valid_transcript(session.messages)


@pytest.mark.asyncio
async def test_abort_while_the_model_streams_text() -> None:
    model = ScriptedModel([ScriptedTurn([text_block("a long answer " * 20)], event_delay=0.02), "second"],
                          text_chunk=8)
    session, abort = Session(), AbortSignal()
    events: list[Any] = []
    async for event in session.run("go", run_config(model), abort=abort):
        events.append(event)
        if event.kind == "text_delta":
            abort.abort("Stop button")
    assert finished(events).reason == "aborted"
    assert all(m["role"] == "user" for m in session.messages)  # the half-written text is not kept
    assert "interrupted this run" in session.messages[-1]["content"][-1]["text"]
    again = await run(session, "again", run_config(model))
    assert finished(again).reason == "end_turn"
    assert check_pairing(model.requests[-1]["messages"]) == []


@pytest.mark.asyncio
async def test_aborted_run_tools_gives_every_call_one_result() -> None:
    scene = Scene()
    ctx = ctx_for(scene.fetch, scene.save, scene.write, scene.read)
    blocks = [b for b in scene.turn if b["type"] == "tool_use"]

    stopper = asyncio.ensure_future(stop_when(scene.both_started(), ctx.abort))
    try:
        outcomes = (await asyncio.wait_for(run_tools(blocks, ctx), 5)).outcomes
    finally:
        stopper.cancel()
        await asyncio.gather(stopper, return_exceptions=True)
    assert ctx.abort.aborted
    assert [(o.tool_use_id, o.status) for o in outcomes] == [
        ("toolu_fetch", "interrupted"), ("toolu_save", "done"), ("toolu_write", "cancelled"),
        ("toolu_read", "cancelled")]


@pytest.mark.asyncio
async def test_waiting_for_a_block_tool_after_abort_does_not_spin(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = 0
    real = scheduling.interrupt

    def counting(group: Any) -> None:
        nonlocal calls
        calls += 1
        real(group)

    monkeypatch.setattr(scheduling, "interrupt", counting)
    started = asyncio.Event()
    ctx = ctx_for(Probe("Save", delay=0.5, behavior="block", started=started))

    stopper = asyncio.ensure_future(stop_when(started.wait(), ctx.abort))
    try:
        await asyncio.wait_for(run_tools([tool_use_block("Save", {"tag": "s"}, id="toolu_s")], ctx), 5)
    finally:
        stopper.cancel()
        await asyncio.gather(stopper, return_exceptions=True)
    assert calls <= 5
