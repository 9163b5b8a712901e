"""One scheduled call: the task that runs `run_tool_use`, and the one result it must end in.

Both schedulers (`run_tools` after the stream, `StreamingToolExecutor` during it) use
`ToolCall`, so cancellation and "never ran" are written the same way whichever path handled the
message. A `ToolCall` always ends with exactly one `ToolCallOutcome`.

A failed call cancels nothing (SPEC §4.2): calls beside it finish and calls queued after it
still run. Cancelling siblings on a shell error turned most reported errors into collateral
cancellations of calls that had nothing wrong with them.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from .events import ToolFinishedEvent, ToolStartedEvent, ToolStatus
from .results import error_result
from .run_tool_use import ToolCallOutcome, parse_input, run_tool_use
from .tool import ToolUseContext

DEFAULT_MAX_CONCURRENCY = 10


def max_tool_use_concurrency() -> int:
    """``TOOLAGENT_MAX_TOOL_USE_CONCURRENCY``; unset, unparseable, zero or negative → 10."""
    raw = os.environ.get("TOOLAGENT_MAX_TOOL_USE_CONCURRENCY", "")
    try:
        value = int(raw.strip())
    except ValueError:
        return DEFAULT_MAX_CONCURRENCY
    return value if value > 0 else DEFAULT_MAX_CONCURRENCY


def is_concurrency_safe_call(block: dict[str, Any], ctx: ToolUseContext) -> bool:
    """A call may share a batch only if its tool exists, its input parses, and the tool says
    this input is safe. Anything that raises on the way counts as unsafe (fail closed)."""
    tool = ctx.tools.find(block.get("name", ""))
    if tool is None:
        return False
    try:
        return bool(tool.is_concurrency_safe(parse_input(tool, block.get("input"))))
    except Exception:
        return False


class ToolCall:
    def __init__(self, block: dict[str, Any], *, batch: int | None = None) -> None:
        self.block = block
        self.id: str = block["id"]
        self.name: str = block.get("name", "")
        self.batch = batch
        self.started = False
        self.task: asyncio.Task[None] | None = None
        self.outcome: ToolCallOutcome | None = None
        self._cancel_text = ""
        self._ctx: ToolUseContext | None = None

    @property
    def done(self) -> bool:
        return self.outcome is not None

    def interrupt_behavior(self, ctx: ToolUseContext) -> str:
        tool = ctx.tools.find(self.name)
        return tool.interrupt_behavior if tool is not None else "cancel"

    def start(self, ctx: ToolUseContext) -> asyncio.Task[None]:
        self._ctx = ctx
        self.task = asyncio.ensure_future(self._run(ctx))
        self.task.add_done_callback(lambda _t: self._ensure_outcome(ctx))
        return self.task

    def _ensure_outcome(self, ctx: ToolUseContext) -> None:
        """A task cancelled before its first step never reaches ``_run``'s handler: the one
        result is written here instead, so no call is ever left without one."""
        if self.outcome is None:
            self.finish_with(self._cancel_text or self.interrupted_text(ctx),
                             "interrupted" if self.started else "cancelled", ctx)

    async def _run(self, ctx: ToolUseContext) -> None:
        def emit(event: Any) -> None:
            if isinstance(event, ToolStartedEvent) and event.tool_use_id == self.id:
                self.started = True
            ctx.emit(event)

        try:
            outcome = await run_tool_use(self.block, ctx.replace(emit=emit), batch=self.batch)
        except asyncio.CancelledError:
            self.finish_with(self._cancel_text or self.interrupted_text(ctx), "interrupted" if self.started else "cancelled", ctx)
            return
        except Exception as exc:  # a bug in a hook runner or permission engine: still one result
            outcome = ToolCallOutcome(
                self.id, self.name,
                error_result(self.id, f"Internal error while running {self.name}: {type(exc).__name__}: {exc}"),
                "error", started=self.started,
            )
        self._set(outcome, ctx)

    def interrupted_text(self, ctx: ToolUseContext) -> str:
        reason = ctx.abort.reason or "interrupted"
        if self.started:
            return (f"Interrupted: the run was stopped ({reason}) while {self.name} was running. "
                    "It may have partly run.")
        return f"Cancelled: the run was stopped ({reason}) before {self.name} ran. It did not run."

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
