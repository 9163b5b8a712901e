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

from .events import ToolQueuedEvent
from .run_tool_use import ToolCallOutcome
from .tool import ToolUseContext
from .tool_call import ToolCall, is_concurrency_safe_call, max_tool_use_concurrency


@dataclass
class Batch:
    concurrency_safe: bool
    blocks: list[dict[str, Any]] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)
    """Where each block sits in the assistant message (ids may repeat; positions do not)."""

    @property
    def ids(self) -> list[str]:
        return [b["id"] for b in self.blocks]


def partition_tool_calls(blocks: Sequence[dict[str, Any]], ctx: ToolUseContext) -> list[Batch]:
    """Consecutive concurrency-safe calls share a batch; any other call is a batch of its own."""
    batches: list[Batch] = []
    for position, block in enumerate(blocks):
        safe = is_concurrency_safe_call(block, ctx)
        if safe and batches and batches[-1].concurrency_safe:
            batches[-1].blocks.append(block)
            batches[-1].positions.append(position)
        else:
            batches.append(Batch(safe, [block], [position]))
    return batches


@dataclass
class RunToolsResult:
    outcomes: list[ToolCallOutcome]
    """One per block, in block order."""
    context: ToolUseContext
    """The context after every modifier was applied."""


async def run_tools(blocks: Sequence[dict[str, Any]], ctx: ToolUseContext) -> RunToolsResult:
    """Run an assistant message's tool_use blocks after the stream, batch by batch."""
    calls = [ToolCall(b) for b in blocks]
    for b in blocks:
        ctx.emit(ToolQueuedEvent(tool_use_id=b["id"], name=b.get("name", ""), input=b.get("input") or {}))
    cap = max_tool_use_concurrency()
    for index, batch in enumerate(partition_tool_calls(blocks, ctx)):
        group = [calls[p] for p in batch.positions]
        for call in group:
            call.batch = index
        await _run_concurrently(group, ctx, cap if batch.concurrency_safe else 1)
        for call in group:  # modifiers after the whole batch, in original block order
            assert call.outcome is not None
            if call.outcome.context_modifier is not None:
                ctx = call.outcome.context_modifier(ctx)
    return RunToolsResult([c.outcome for c in calls], ctx)  # type: ignore[misc]  # every call has finished here


async def _run_concurrently(group: list[ToolCall], ctx: ToolUseContext, cap: int) -> None:
    semaphore = asyncio.Semaphore(cap)

    async def limited(call: ToolCall) -> None:
        async with semaphore:
            await call.start(ctx)

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
                _interrupt(group, ctx)
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


def _interrupt(group: list[ToolCall], ctx: ToolUseContext) -> None:
    """On abort: ``cancel`` tools are cancelled, ``block`` tools finish."""
    for call in group:
        if call.done:
            continue
        if not call.started or call.interrupt_behavior(ctx) == "cancel":
            call.cancel()
