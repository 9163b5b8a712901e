"""One scheduled call: the task that runs `run_tool_use`, and the one result it must end in.

Both schedulers (after the stream, while streaming) hold `ScheduledCall` objects, so
cancellation and "never ran" are written the same way whichever path handled the message. A
`ScheduledCall` always ends with exactly one `ToolCallOutcome`.

A failed call cancels nothing (SPEC §4.2): calls beside it finish and calls queued after it
still run. Cancelling siblings on a shell error turned most reported errors into collateral
cancellations of calls that had nothing wrong with them.
"""

from __future__ import annotations

import asyncio
import os
from typing import Iterable

from . import result_texts
from .events import AgentEvent, ToolFinishedEvent, ToolQueuedEvent, ToolStartedEvent, ToolStatus
from .results import error_result
from .run_tool_use import ToolCallOutcome, run_tool_use
from .tool import ToolUseContext
from .tool_call import ToolUseRequest

DEFAULT_MAX_CONCURRENCY = 10


def max_tool_use_concurrency() -> int:
    """``TOOLAGENT_MAX_TOOL_USE_CONCURRENCY``; unset, unparseable, zero or negative → 10."""
    raw = os.environ.get("TOOLAGENT_MAX_TOOL_USE_CONCURRENCY", "")
    try:
        value = int(raw.strip())
    except ValueError:
        return DEFAULT_MAX_CONCURRENCY
    return value if value > 0 else DEFAULT_MAX_CONCURRENCY


class ScheduledCall:
    """A queued tool_use: its request (parsed once), its task once started, its one outcome."""

    def __init__(self, request: ToolUseRequest, *, batch: int | None = None) -> None:
        self.request = request
        self.id: str = request.id
        self.name: str = request.name
        self.batch = batch
        self.started = False
        self.task: asyncio.Task[None] | None = None
        self.outcome: ToolCallOutcome | None = None
        self._cancel_text = ""

    @property
    def done(self) -> bool:
        return self.outcome is not None

    def queued(self, ctx: ToolUseContext, *, show_input: bool = True) -> None:
        """Announce the call (its card appears); a cut-off block shows no input."""
        shown = (self.request.block.get("input") or {}) if show_input else {}
        ctx.emit(ToolQueuedEvent(tool_use_id=self.id, name=self.name, input=shown))

    def start(self, ctx: ToolUseContext) -> asyncio.Task[None]:
        self.task = asyncio.ensure_future(self._run(ctx))
        self.task.add_done_callback(lambda _t: self._ensure_outcome(ctx))
        return self.task

    def _ensure_outcome(self, ctx: ToolUseContext) -> None:
        """A task cancelled before its first step never reaches ``_run``'s handler: the one
        result is written here instead, so no call is ever left without one."""
        if self.outcome is None:
            self.finish_with(self._cancel_text or self.interrupted_text(ctx), self.stopped_status(), ctx)

    async def _run(self, ctx: ToolUseContext) -> None:
        def emit(event: AgentEvent) -> None:
            if not self.started and isinstance(event, ToolStartedEvent) and event.tool_use_id == self.id:
                self.started = True
            ctx.emit(event)

        try:
            outcome = await run_tool_use(self.request, ctx.replace(emit=emit), batch=self.batch)
        except asyncio.CancelledError:
            self.finish_with(self._cancel_text or self.interrupted_text(ctx), self.stopped_status(), ctx)
            return
        except Exception as exc:  # a bug in a hook runner or permission engine: still one result
            outcome = ToolCallOutcome(self.id, self.name, error_result(self.id, result_texts.internal_error(self.name, exc)),
                                      "error", started=self.started)
        self._set(outcome, ctx)

    def stopped_status(self) -> ToolStatus:
        """The status of a call the run stopped: it may have partly run, or it never started."""
        return "interrupted" if self.started else "cancelled"

    def interrupted_text(self, ctx: ToolUseContext) -> str:
        reason = ctx.abort.reason or "interrupted"
        if self.started:
            return result_texts.interrupted_while_running(self.name, reason)
        return result_texts.cancelled_before_run(self.name, reason)

    def cancel(self, text: str = "") -> None:
        """Ask the running task to stop; it writes its own result when the cancellation lands."""
        self._cancel_text = text
        if self.task is not None and not self.task.done():
            self.task.cancel()

    def finish_with(self, text: str, status: ToolStatus, ctx: ToolUseContext) -> None:
        """Decide this call's result without running it (or after giving up on it)."""
        if self.outcome is None:
            self._set(ToolCallOutcome(self.id, self.name, error_result(self.id, text), status, started=self.started), ctx)

    def _set(self, outcome: ToolCallOutcome, ctx: ToolUseContext) -> None:
        if self.outcome is not None:
            return
        self.outcome = outcome
        ctx.emit(
            ToolFinishedEvent(
                tool_use_id=self.id, name=outcome.name or self.name, status=outcome.status, result=outcome.result,
                duration=outcome.duration, captured_output=outcome.captured_output,
            )
        )


def interrupt(calls: Iterable[ScheduledCall]) -> None:
    """On abort (SPEC §4.3): calls not yet started and ``cancel`` tools are cancelled; ``block``
    tools that started are left to finish."""
    for call in calls:
        if call.done:
            continue
        if not call.started or call.request.interrupt_behavior == "cancel":
            call.cancel()


def give_up(calls: Iterable[ScheduledCall], ctx: ToolUseContext) -> None:
    """Synchronously give every unfinished call its result (the consuming task is being
    cancelled): running tasks are cancelled, and their result says they may have partly run."""
    for call in calls:
        if call.done:
            continue
        if call.task is not None and not call.task.done():
            call.task.cancel()
        call.finish_with(call.interrupted_text(ctx), call.stopped_status(), ctx)
