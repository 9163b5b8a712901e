"""The scheduler interface: what the query loop does with the tool_use blocks of one response.

Two implementations — `scheduling.AfterStreamScheduler` (SPEC §4.1: batches once the message
has ended) and `streaming_executor.StreamingToolExecutor` (§4.2: calls start while the model
still streams). The loop feeds either one the same way and never asks which it has; only one of
them handles a message. What both must do alike is written here once:

* a block whose input was cut off is never executed: it gets the truncated-input error result;
* when the response stream fails, calls that never started get "not run";
* when the consuming task is cancelled, every call gets its one result synchronously
  (`abandon`): finished calls keep theirs, running ones say they may have partly run.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from typing import Any

from . import result_texts
from .run_tool_use import ToolCallOutcome
from .scheduled_call import ScheduledCall, give_up
from .tool import ToolUseContext
from .tool_call import ToolUseRequest

__all__ = ["ToolScheduler"]


class ToolScheduler(ABC):
    """Receives an assistant message's tool_use blocks in block order; returns one outcome per
    block, in block order."""

    def __init__(self, ctx: ToolUseContext) -> None:
        self._ctx = ctx
        self._calls: list[ScheduledCall] = []
        self._cut: dict[int, str] = {}
        """Why a block's input was cut off, by its position (ids may repeat; positions do not)."""
        self._announced = 0  # calls whose card was shown (a prefix of _calls)

    @property
    def context(self) -> ToolUseContext:
        """The context after the modifiers of the calls completed so far (in block order)."""
        return self._ctx

    @property
    def calls(self) -> list[ScheduledCall]:
        return list(self._calls)

    # --- feeding ----------------------------------------------------------------------------
    def add(self, block: dict[str, Any]) -> None:
        """A complete tool_use block (its ``content_block_stop`` arrived)."""
        self._calls.append(ScheduledCall(ToolUseRequest(block, self._ctx)))
        self._added()

    def add_truncated(self, block: dict[str, Any], why: str) -> None:
        """A block whose input was cut off: it gets an error result and never runs."""
        self._cut[len(self._calls)] = why
        self._calls.append(ScheduledCall(ToolUseRequest(block, self._ctx)))
        self._added()

    def stream_failed(self, error_type: str | None) -> None:
        """The response stream failed: calls that never started get a "not run" result."""
        self._announce_pending()
        text = result_texts.stream_failed_before_start(error_type)
        for call in self._calls:
            if call.task is None and not call.done:
                call.finish_with(text, "cancelled", self._ctx)
        self._settled()

    # --- results ----------------------------------------------------------------------------
    @abstractmethod
    async def finish(self) -> list[ToolCallOutcome]:
        """Run (or wait for) every call; their outcomes in block order."""

    async def settle_after_interrupt(self) -> list[ToolCallOutcome]:
        """The consuming task was cancelled: ``block`` tools are allowed to finish (SPEC §4.3),
        ``cancel`` tools were cancelled by the abort. A second interrupt gives up waiting."""
        try:
            return await asyncio.shield(self.finish())
        except asyncio.CancelledError:
            return self.abandon()

    def abandon(self) -> list[ToolCallOutcome]:
        """Give every call its result now, synchronously (see `scheduled_call.give_up`)."""
        self._close()
        self._announce_pending()
        give_up(self._calls, self._ctx)
        return self._outcomes()

    # --- for the implementations --------------------------------------------------------------
    def _added(self) -> None:
        """Called after a block was added (the streaming scheduler starts calls here)."""

    def _settled(self) -> None:
        """Called after results were decided without running (the streaming one advances)."""

    def _close(self) -> None:
        """Release what the implementation watches (the streaming one's abort watcher)."""

    def _announce_pending(self) -> None:
        """Show the card of every call not yet shown, in block order; a cut-off block gets its
        error result at once."""
        while self._announced < len(self._calls):
            position = self._announced
            call = self._calls[position]
            self._announced += 1
            why = self._cut.get(position)
            call.queued(self._ctx, show_input=why is None)
            if why is not None:
                call.finish_with(result_texts.truncated_input(call.name, why), "invalid", self._ctx)

    def _is_cut(self, position: int) -> bool:
        return position in self._cut

    def _outcomes(self) -> list[ToolCallOutcome]:
        outcomes = [c.outcome for c in self._calls if c.outcome is not None]
        assert len(outcomes) == len(self._calls), "every scheduled call ends with one outcome"
        return outcomes
