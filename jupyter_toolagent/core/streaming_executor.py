"""Scheduling while the model streams (SPEC §4.2).

A tool_use block is queued at its ``content_block_stop``, before the message ends. A queued
call starts when nothing runs, or when it is safe and everything running is safe; an unsafe
call waits for all running work and blocks everything queued after it (calls start in block
order). Results come out in block order, and context modifiers are applied in block order as
the completed prefix grows, so a call that starts after an unsafe one sees its effect.
A failed call cancels nothing: the calls beside it finish and those queued after it still run.

What the two schedulers share (cut-off blocks, a failed stream, giving up) is in `scheduler`.
"""

from __future__ import annotations

import asyncio

from .run_tool_use import ToolCallOutcome
from .scheduled_call import ScheduledCall, interrupt, max_tool_use_concurrency
from .scheduler import ToolScheduler
from .tool import ToolUseContext


class StreamingToolExecutor(ToolScheduler):
    def __init__(self, ctx: ToolUseContext) -> None:
        super().__init__(ctx)
        self._running: set[ScheduledCall] = set()
        self._applied = 0  # calls whose modifiers are applied (a prefix of _calls)
        self._cap = max_tool_use_concurrency()
        self._changed = asyncio.Event()
        self._abort_task = asyncio.ensure_future(self._watch_abort())

    # --- feeding (see ToolScheduler.add / add_truncated / stream_failed) -----------------
    def _added(self) -> None:
        self._announce_pending()
        self._advance()
        self._schedule()

    def _settled(self) -> None:
        self._advance()

    # --- scheduling -----------------------------------------------------------------------
    def _schedule(self) -> None:
        for call in self._calls:
            if call.done or call.task is not None:
                continue
            if self._ctx.abort.aborted:
                call.start(self._ctx)  # ends at once with a cancelled result, in order
                self._track(call)
                continue
            safe = call.request.concurrency_safe()
            if self._running and not (
                safe and len(self._running) < self._cap and all(r.request.concurrency_safe() for r in self._running)
            ):
                break  # an unsafe call (or a full cap) blocks everything queued after it
            call.start(self._ctx)
            self._track(call)
            if not safe:
                break

    def _track(self, call: ScheduledCall) -> None:
        self._running.add(call)
        assert call.task is not None

        def done(_task: "asyncio.Task[None]") -> None:
            self._on_done(call)

        call.task.add_done_callback(done)

    def _on_done(self, call: ScheduledCall) -> None:
        self._running.discard(call)  # its failure, if any, is its own: nothing else is cancelled
        self._advance()
        self._schedule()

    def _advance(self) -> None:
        while self._applied < len(self._calls) and self._calls[self._applied].done:
            outcome = self._calls[self._applied].outcome
            assert outcome is not None
            if outcome.context_modifier is not None:
                self._ctx = outcome.context_modifier(self._ctx)
            self._applied += 1
        self._changed.set()

    async def _watch_abort(self) -> None:
        await self._ctx.abort.wait()
        interrupt(list(self._running))
        self._schedule()

    def _close(self) -> None:
        self._abort_task.cancel()

    # --- results --------------------------------------------------------------------------
    async def finish(self) -> list[ToolCallOutcome]:
        """Wait for every queued call; return their outcomes in block order."""
        try:
            while not all(c.done for c in self._calls):
                self._changed.clear()
                self._schedule()
                if all(c.done for c in self._calls):
                    break
                await self._changed.wait()
        finally:
            self._close()
        return self._outcomes()
