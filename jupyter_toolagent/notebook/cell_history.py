"""The cells this kernel executed, with the exception each one raised (SPEC §15).

IPython already keeps what the cells were (``In``: the raw sources in the history manager) and
what they returned (``Out``), but not how they failed: a cell's exception is only in its output,
which the kernel never sees again. So `CellHistory` is registered as a ``post_run_cell`` callback
at ``%load_ext`` (removed at ``%unload_ext``) and keeps, per failed cell, the exception's type,
message and formatted traceback — as text only: holding the exception would keep its frames and
every local variable of the failed cell alive.

`cells()` serves `NotebookCells` (a `CellHistorySource`); `error_of(n)` serves the kernel-change
note. Cells that ran before the extension was loaded have their sources and results, not errors.
"""

from __future__ import annotations

import os
import traceback
import weakref
from collections import OrderedDict
from typing import Any

from ..tools.brief import brief
from ..tools.notebook_cells import CellRecord

__all__ = ["CellError", "CellHistory", "history_for", "install", "uninstall"]

KEEP_ERRORS = 200
TRACEBACK_FRAMES = 30
_IPYTHON_DIR = None


class CellError:
    """How one cell failed, as text."""

    __slots__ = ("number", "type_name", "message", "traceback")

    def __init__(self, number: int, type_name: str, message: str, traceback_text: str) -> None:
        self.number, self.type_name, self.message, self.traceback = number, type_name, message, traceback_text

    @property
    def line(self) -> str:
        return f"{self.type_name}: {self.message}" if self.message else self.type_name


def _ipython_dir() -> str:
    global _IPYTHON_DIR
    if _IPYTHON_DIR is None:
        import IPython

        _IPYTHON_DIR = os.path.dirname(os.path.abspath(IPython.__file__)) + os.sep
    return _IPYTHON_DIR


def format_cell_exception(exc: BaseException) -> str:
    """The traceback as the cell showed it, without IPython's own frames, at most
    `TRACEBACK_FRAMES` frames (the innermost ones)."""
    te = traceback.TracebackException.from_exception(exc, limit=-TRACEBACK_FRAMES, capture_locals=False)
    te.stack = traceback.StackSummary.from_list(
        [f for f in te.stack if not os.path.abspath(f.filename).startswith(_ipython_dir())])
    return "".join(te.format()).rstrip("\n")


class CellHistory:
    """Errors of executed cells (by ``In`` number), plus the shell's own ``In``/``Out``."""

    def __init__(self, shell: Any) -> None:
        self._shell = weakref.ref(shell)
        self._errors: OrderedDict[int, CellError] = OrderedDict()
        self.last_number: int | None = None
        """The ``In`` number of the cell that finished last (whether the shell counts the running
        cell before or after it runs differs between IPython versions; this does not)."""

    # --- the post_run_cell callback ---------------------------------------------------------
    def post_run_cell(self, result: Any) -> None:
        try:
            self._record(result)
        except Exception:  # a callback that raises would be reported in every cell
            pass

    def _record(self, result: Any) -> None:
        number = getattr(result, "execution_count", None)
        error = getattr(result, "error_before_exec", None) or getattr(result, "error_in_exec", None)
        if number is None:
            return
        self.last_number = int(number)
        if error is None:
            return
        message = " ".join(str(error).split())
        if len(message) > 500:
            message = message[:497] + "..."
        self._errors[int(number)] = CellError(int(number), type(error).__name__, message, format_cell_exception(error))
        while len(self._errors) > KEEP_ERRORS:
            self._errors.popitem(last=False)

    # --- reading ------------------------------------------------------------------------------
    def error_of(self, number: int) -> CellError | None:
        return self._errors.get(number)

    def last_error(self) -> CellError | None:
        """The exception of the cell that finished last, if it raised."""
        return None if self.last_number is None else self._errors.get(self.last_number)

    def cells(self) -> list[CellRecord]:
        shell = self._shell()
        if shell is None:
            return []
        history = shell.history_manager
        sources = history.input_hist_raw
        outputs = history.output_hist
        records = []
        end = len(sources) if self.last_number is None else min(len(sources), self.last_number + 1)
        for number in range(1, end):  # not the running cell (the agent's own): it has not finished
            error = self._errors.get(number)
            output = outputs.get(number) if isinstance(outputs, dict) else None
            records.append(CellRecord(
                number=number, source=sources[number],
                output=None if output is None else brief(output),
                error=error.line if error else None, traceback=error.traceback if error else None,
            ))
        return records


_histories: "weakref.WeakKeyDictionary[Any, CellHistory]" = weakref.WeakKeyDictionary()


def history_for(shell: Any) -> CellHistory | None:
    """The shell's history (None before ``%load_ext``)."""
    return _histories.get(shell)


def install(shell: Any) -> CellHistory:
    history = _histories.get(shell)
    if history is None:
        history = _histories[shell] = CellHistory(shell)
        shell.events.register("post_run_cell", history.post_run_cell)
    return history


def uninstall(shell: Any) -> None:
    history = _histories.pop(shell, None)
    if history is not None:
        try:
            shell.events.unregister("post_run_cell", history.post_run_cell)
        except ValueError:
            pass
