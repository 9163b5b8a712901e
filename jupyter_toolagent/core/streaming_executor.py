"""Scheduling while the model streams (SPEC §4.2).

A tool_use block is queued at its ``content_block_stop``, before the message ends. A queued
call starts when nothing runs, or when it is safe and everything running is safe; an unsafe
call waits for all running work and blocks everything queued after it (calls start in block
order). Results come out in block order, and context modifiers are applied in block order as
the completed prefix grows, so a call that starts after an unsafe one sees its effect.
A failed call cancels nothing: the calls beside it finish and those queued after it still run.

A block whose input was cut off is never executed: `add_truncated` gives it an error result.
"""

from __future__ import annotations

import asyncio
from typing import Any

from .events import ToolQueuedEvent
from .run_tool_use import ToolCallOutcome
from .tool import ToolUseContext
from .truncated_input import truncated_input_text
from .tool_call import ToolCall, is_concurrency_safe_call, max_tool_use_concurrency


class StreamingToolExecutor:
    def __init__(self, ctx: ToolUseContext) -> None:
        self._ctx = ctx
        self._calls: list[ToolCall] = []
        self._safe: dict[str, bool] = {}
        self._running: set[ToolCall] = set()
        self._applied = 0  # calls whose modifiers are applied (a prefix of _calls)
        self._cap = max_tool_use_concurrency()
        self._changed = asyncio.Event()
        self._abort_task = asyncio.ensure_future(self._watch_abort())

    @property
    def context(self) -> ToolUseContext:
        """The context after the modifiers of every call completed so far (in block order)."""
        return self._ctx

    @property
    def calls(self) -> list[ToolCall]:
        return list(self._calls)

    # --- feeding --------------------------------------------------------------------------
    def add(self, block: dict[str, Any]) -> None:
        """Queue a complete tool_use block and start it if the rules allow."""
        call = ToolCall(block)
        self._calls.append(call)
        self._safe[call.id] = is_concurrency_safe_call(block, self._ctx)
        self._ctx.emit(ToolQueuedEvent(tool_use_id=call.id, name=call.name, input=block.get("input") or {}))
        self._schedule()

    def add_truncated(self, block: dict[str, Any], why: str) -> None:
        """Record a block whose input was cut off: it gets an error result and never runs."""
        call = ToolCall(block)
        self._calls.append(call)
        self._ctx.emit(ToolQueuedEvent(tool_use_id=call.id, name=call.name, input={}))
        call.finish_with(truncated_input_text(call.name, why), "invalid", self._ctx)
        self._advance()

    def discard_unstarted(self, text: str) -> None:
        """The stream failed: calls that never started get a "not run" result."""
        for call in self._calls:
            if call.task is None and not call.done:
                call.finish_with(text, "cancelled", self._ctx)
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
            if not self._running:
                pass
            elif self._safe[call.id] and all(self._safe[r.id] for r in self._running) and len(self._running) < self._cap:
                pass
            else:
                break  # an unsafe call (or a full cap) blocks everything queued after it
            call.start(self._ctx)
            self._track(call)
            if not self._safe[call.id]:
                break

    def _track(self, call: ToolCall) -> None:
        self._running.add(call)
        assert call.task is not None
        call.task.add_done_callback(lambda _t: self._on_done(call))

    def _on_done(self, call: ToolCall) -> None:
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
        for call in list(self._running):
            if not call.started or call.interrupt_behavior(self._ctx) == "cancel":
                call.cancel()
        self._schedule()

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
            self._abort_task.cancel()
        return [c.outcome for c in self._calls]  # type: ignore[misc]  # every call has finished here

    def abandon(self) -> list[ToolCallOutcome]:
        """Synchronously give every call a result (the consuming task is being cancelled):
        running tasks are cancelled; their result says they may have partly run."""
        self._abort_task.cancel()
        for call in self._calls:
            if call.done:
                continue
            if call.task is not None and not call.task.done():
                call.task.cancel()
            call.finish_with(call.interrupted_text(self._ctx), "interrupted" if call.started else "cancelled", self._ctx)
        return [c.outcome for c in self._calls]  # type: ignore[misc]  # every call has finished here
