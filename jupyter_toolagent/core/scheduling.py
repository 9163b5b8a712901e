"""Scheduling after the stream (SPEC §4.1): batches of safe calls run concurrently, every
other call alone, batches one after another.

Example: Read A, Grep B, Edit C, Read D → [A‖B] then [C] then [D]; D observes C's effect,
because a safe batch's context modifiers are applied after the whole batch in block order and
a serial call's modifier before the next batch starts. A failed call cancels nothing: the rest
of its batch finishes and later batches still run (SPEC §4.2).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Sequence

from .run_tool_use import ToolCallOutcome
from .scheduled_call import ScheduledCall, interrupt, max_tool_use_concurrency
from .scheduler import ToolScheduler
from .tool import ToolUseContext
from .tool_call import ToolUseRequest


@dataclass
class Batch:
    concurrency_safe: bool
    blocks: list[dict[str, Any]] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)
    """Where each block sits in the assistant message (ids may repeat; positions do not)."""

    @property
    def ids(self) -> list[str]:
        return [b["id"] for b in self.blocks]


def partition(requests: Sequence[ToolUseRequest]) -> list[Batch]:
    """Consecutive concurrency-safe calls share a batch; any other call is a batch of its own."""
    batches: list[Batch] = []
    for position, request in enumerate(requests):
        safe = request.concurrency_safe()
        if safe and batches and batches[-1].concurrency_safe:
            batches[-1].blocks.append(request.block)
            batches[-1].positions.append(position)
        else:
            batches.append(Batch(safe, [request.block], [position]))
    return batches


def partition_tool_calls(blocks: Sequence[dict[str, Any]], ctx: ToolUseContext) -> list[Batch]:
    """`partition` of raw blocks (each read once here)."""
    return partition([ToolUseRequest(b, ctx) for b in blocks])


class AfterStreamScheduler(ToolScheduler):
    """Collects the message's blocks while it streams; runs them batch by batch at `finish`."""

    async def finish(self) -> list[ToolCallOutcome]:
        self._announce_pending()
        runnable = [(p, c) for p, c in enumerate(self._calls) if not c.done and not self._is_cut(p)]
        cap = max_tool_use_concurrency()
        for index, batch in enumerate(partition([c.request for _, c in runnable])):
            group = [runnable[p][1] for p in batch.positions]
            for call in group:
                call.batch = index
            await _run_concurrently(group, self._ctx, cap if batch.concurrency_safe else 1)
            for call in group:  # modifiers after the whole batch, in original block order
                assert call.outcome is not None
                if call.outcome.context_modifier is not None:
                    self._ctx = call.outcome.context_modifier(self._ctx)
        return self._outcomes()

    async def settle_after_interrupt(self) -> list[ToolCallOutcome]:
        """The batches were being run by the task now cancelled; they cannot be resumed, so every
        call gets its result now (finished calls keep theirs)."""
        return self.abandon()


@dataclass
class RunToolsResult:
    outcomes: list[ToolCallOutcome]
    """One per block, in block order."""
    context: ToolUseContext
    """The context after every modifier was applied."""


async def run_tools(blocks: Sequence[dict[str, Any]], ctx: ToolUseContext) -> RunToolsResult:
    """Run an assistant message's (complete) tool_use blocks after the stream, batch by batch."""
    scheduler = AfterStreamScheduler(ctx)
    for block in blocks:
        scheduler.add(block)
    outcomes = await scheduler.finish()
    return RunToolsResult(outcomes, scheduler.context)


async def _run_concurrently(group: list[ScheduledCall], ctx: ToolUseContext, cap: int) -> None:
    semaphore = asyncio.Semaphore(cap)

    async def limited(call: ScheduledCall) -> None:
        async with semaphore:
            await call.start(ctx)

    if len(group) == 1 and not ctx.abort.aborted:  # the common serial case: no watcher task
        await _run_alone(group[0], ctx)
        return
    tasks = [asyncio.ensure_future(limited(c)) for c in group]
    abort_wait: asyncio.Future[None] | None = asyncio.ensure_future(ctx.abort.wait())
    pending: set[asyncio.Future[Any]] = set(tasks)
    try:
        while pending:
            waiting = pending | ({abort_wait} if abort_wait is not None else set())
            done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            pending -= done
            if abort_wait is not None and abort_wait in done:
                abort_wait = None  # fired once: do not wait on it again (it would spin)
                interrupt(group)
    finally:
        if abort_wait is not None:
            abort_wait.cancel()
        for t in tasks:
            if not t.done():
                t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
    for call in group:  # a task cancelled while still queued on the semaphore
        if not call.done:
            call.finish_with(call.interrupted_text(ctx), "cancelled", ctx)


async def _run_alone(call: ScheduledCall, ctx: ToolUseContext) -> None:
    """One call, watched for an abort like a batch (SPEC §4.3), without a semaphore."""
    task = call.start(ctx)
    abort_wait = asyncio.ensure_future(ctx.abort.wait())
    try:
        done, _ = await asyncio.wait({task, abort_wait}, return_when=asyncio.FIRST_COMPLETED)
        if task not in done:
            interrupt([call])
            await asyncio.gather(task, return_exceptions=True)
    finally:
        abort_wait.cancel()
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
    if not call.done:
        call.finish_with(call.interrupted_text(ctx), "cancelled", ctx)
