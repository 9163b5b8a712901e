"""`RunPython`: run code in the user's namespace, like a notebook cell, and report what it did.

The code runs on the event-loop thread, where the user's cells run (objects that belong to that
thread — a GUI, an asyncio client, a database connection — keep working). So a Stop takes
effect at the code's next ``await`` or when it returns; a kernel interrupt raises in the code even
while it blocks the thread (``time.sleep``, a long computation), ends the call with an error and
aborts the run. Because the code may block the loop, the call first lets the front end draw the
events so far (``ctx.flush_events()``): the person sees what is running when deciding to
interrupt. Printed output (stdout and stderr, interleaved in one block), ``display()`` outputs,
the value of the last expression and the figures the code opened come back in the result;
figures are closed so they are not drawn again in the cell.

The front end may supply the runner (`BuiltinToolOptions.python_runner`, an ``IPythonRunner`` in a kernel,
which also keeps ``__future__`` imports across calls and cells); otherwise each call gets a
fresh plain `CodeRunner`.

The result (and so the card) starts with the names the call bound, rebound and deleted, compared
by identity (`namespace_changes`); the front end's undo store keeps what ``%agent undo`` needs.

Not concurrency-safe and not read-only: the code can change anything. An error cancels the calls
around it (their inputs were likely planned on this call's success).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..core.abort import KERNEL_INTERRUPT
from ..core.capture import capture_output
from ..core.results import truncate_middle
from ..core.tool import Progress, Tool, ToolResult, ToolUseContext
from . import optional_libs
from .bounded import bounded_repr
from .images import bytes_to_blocks, close_new_figures, figure_png, new_figure_blocks, open_figure_numbers
from .namespace_changes import NameChanges, UndoRecord
from .options import builtin_options
from .python_exec import CodeRunner, Execution, PythonRunner

__all__ = ["RunPython", "RunPythonInput"]

PRINTED_CHARS = 30_000
CAPTURE_LIMIT = 2_000_000
VALUE_CHARS = 10_000


class RunPythonInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    code: str = Field(description="Python code to run in the notebook's namespace, like a cell. Top-level await "
                                  "works. Names it defines stay defined for later calls and cells.")


class RunPython(Tool[RunPythonInput]):
    name = "RunPython"
    description = (
        "Run Python code in the user's live notebook namespace, as if it were a notebook cell: variables it "
        "defines persist, top-level await works. Returns printed output, the value of the last expression, "
        "display outputs, and matplotlib figures the code opens (as images). Keep output small: summarise "
        "instead of printing whole objects (InspectVariable is often better)."
    )
    input_model = RunPythonInput

    async def call(self, input: RunPythonInput, ctx: ToolUseContext, progress: Progress) -> ToolResult:
        namespace = ctx.options.namespace
        if not isinstance(namespace, dict):
            return ToolResult("RunPython needs the notebook's namespace (a dict), and none is attached to this "
                              "session.", is_error=True)
        runner: PythonRunner = builtin_options(ctx).python_runner or CodeRunner()
        await ctx.flush_events()
        before = open_figure_numbers()
        names_before = dict(namespace)  # references only, for the bound/rebound/deleted diff and undo
        with capture_output(limit=CAPTURE_LIMIT) as printed:
            try:
                execution = await runner.run(input.code, namespace)
            except BaseException:
                close_new_figures(before)
                raise
        names = _record_changes(names_before, namespace, ctx)
        del names_before
        if execution.error is not None:
            close_new_figures(before)
            if isinstance(execution.error, KeyboardInterrupt):
                ctx.abort.abort(KERNEL_INTERRUPT)
            text = _error_text(execution, printed.getvalue())
            return ToolResult(text + ("\n" + names.summary() + " (before the error)" if names else ""), is_error=True)
        blocks = [{"type": "text", "text": names.summary()}] if names else []
        blocks += _text_block(printed.getvalue())
        for block in execution.displays:
            blocks.append(block)
        blocks.extend(self._value_blocks(execution, before))
        blocks.extend(new_figure_blocks(before))
        return ToolResult(_merge_texts(blocks) or "")

    def _value_blocks(self, execution: Execution, before: set[int]) -> list[dict[str, Any]]:
        if not execution.has_value:
            return []
        value = execution.value
        if optional_libs.is_matplotlib_figure(value):
            number = getattr(value, "number", None)
            if number is not None and number not in before and number in open_figure_numbers():
                return []  # a new pyplot figure: it comes back with the other new figures
            return bytes_to_blocks(figure_png(value))
        rich = execution.value_blocks
        if rich:
            return [_labelled(b) for b in rich]
        return [{"type": "text", "text": f"Out: {bounded_repr(value, VALUE_CHARS)}"}]


def _record_changes(before: dict[str, Any], namespace: dict[str, Any], ctx: ToolUseContext) -> NameChanges:
    """The call's bound / rebound / deleted names; the front end's undo store (`BuiltinToolOptions.undo_store`)
    keeps this call's record, which releases the previous call's."""
    changes = NameChanges.between(before, namespace)
    store = builtin_options(ctx).undo_store
    if store is not None:
        store.remember(UndoRecord.capture(before, namespace, changes))
    return changes


def _text_block(printed: str) -> list[dict[str, Any]]:
    printed = printed.rstrip()
    return [{"type": "text", "text": truncate_middle(printed, PRINTED_CHARS)}] if printed else []


def _labelled(block: dict[str, Any]) -> dict[str, Any]:
    if block.get("type") == "text":
        return {"type": "text", "text": "Out: " + block["text"]}
    return block


def _merge_texts(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Adjacent text blocks joined into one: easier to read, and fewer blocks to send."""
    merged: list[dict[str, Any]] = []
    for block in blocks:
        if block.get("type") == "text":
            text = block["text"]
            if merged and merged[-1].get("type") == "text":
                merged[-1] = {"type": "text", "text": merged[-1]["text"].rstrip("\n") + "\n" + text}
                continue
            block = {"type": "text", "text": text}
        merged.append(block)
    return merged


def _error_text(execution: Execution, printed: str) -> str:
    """Error results may carry text only: printed output, text displays, then the traceback."""
    parts = [truncate_middle(printed.rstrip(), PRINTED_CHARS)] if printed.strip() else []
    images = 0
    for block in execution.displays:
        if block.get("type") == "text":
            parts.append(block["text"])
        else:
            images += 1
    if images:
        parts.append(f"({images} image output(s) not included: an error result carries text only)")
    error = execution.error
    if isinstance(error, KeyboardInterrupt):
        parts.append(execution.traceback + "\nThe kernel was interrupted: the run stops here.")
    elif isinstance(error, SystemExit):
        parts.append(f"The code called exit() (SystemExit: {error.code!r}); the kernel keeps running.")
    else:
        parts.append(execution.traceback)
    return "\n".join(p.rstrip("\n") for p in parts)
