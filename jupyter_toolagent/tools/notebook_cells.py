"""`NotebookCells`: the cells this kernel executed — numbers, sources, outputs, errors (SPEC §15).

The model sees live variables, but "fix the cell above" needs the notebook around them: what the
person ran, in which order, and how the last cell failed. The kernel knows that much without
any front-end extension: IPython keeps every executed source (``In``) and result (``Out``),
and the notebook layer records each cell's exception as the cell ends (a ``post_run_cell``
callback). That layer hands this tool a `CellHistorySource` through
`BuiltinToolOptions.cell_history` — this module imports no IPython.

Read-only and concurrency-safe. The output is bounded: at most `DEFAULT_COUNT` cells unless a
range is given, each source cut at `SOURCE_CHARS`, outputs as one-line summaries that run no
user code, and one traceback (the last exception's) at most `TRACEBACK_CHARS`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..core.results import truncate_middle
from ..core.tool import Progress, Tool, ToolResult, ToolUseContext
from .bounded import TextBudget
from .options import builtin_options

__all__ = ["CellHistorySource", "CellRecord", "NotebookCells", "NotebookCellsInput"]

DEFAULT_COUNT = 10
MAX_COUNT = 50
SOURCE_CHARS = 3_000
TRACEBACK_CHARS = 6_000
MAX_CHARS = 20_000


@dataclass(frozen=True)
class CellRecord:
    """One executed cell, as the kernel remembers it."""

    number: int
    """The cell's ``In`` number (its execution count)."""
    source: str
    output: str | None = None
    """A one-line summary of the cell's result (``Out[number]``), if it had one."""
    error: str | None = None
    """``Type: message`` of the exception the cell raised, if it raised."""
    traceback: str | None = None
    """The formatted traceback of that exception (plain text)."""


class CellHistorySource(Protocol):
    """What the notebook layer provides: the executed cells, oldest first."""

    def cells(self) -> Sequence[CellRecord]: ...


class NotebookCellsInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    start: int | None = Field(None, ge=1, description="First cell number (In[n]) to show. Default: the most recent cells.")
    end: int | None = Field(None, ge=1, description="Last cell number to show (inclusive).")
    search: str | None = Field(None, description="Only cells whose source, output or error contains this text "
                                                 "(case-insensitive).")

    @model_validator(mode="after")
    def _ordered(self) -> "NotebookCellsInput":
        if self.start is not None and self.end is not None and self.end < self.start:
            raise ValueError(f"end ({self.end}) is before start ({self.start})")
        return self


class NotebookCells(Tool[NotebookCellsInput]):
    name = "NotebookCells"
    description = (
        "Read the cells this kernel executed, by their In[n] number: each cell's source, a short summary of its "
        "result or the error it raised, and the full traceback of the last exception. Every parameter is "
        "optional: with none, the most recent cells. Use it to see what the user ran (e.g. to fix the cell "
        "that just failed). Read-only."
    )
    input_model = NotebookCellsInput

    def is_concurrency_safe(self, input: NotebookCellsInput) -> bool:
        return True

    def is_read_only(self, input: NotebookCellsInput) -> bool:
        return True

    async def call(self, input: NotebookCellsInput, ctx: ToolUseContext, progress: Progress) -> ToolResult:
        source = builtin_options(ctx).cell_history
        if source is None:
            return ToolResult("No notebook is attached to this session (no kernel cell history), so there are no "
                              "cells to read.", is_error=True)
        cells = list(source.cells())
        return ToolResult(render_cells(cells, input))


def select_cells(cells: Sequence[CellRecord], query: NotebookCellsInput) -> list[CellRecord]:
    """The cells a query asks for: a range (at most `MAX_COUNT`), else the most recent ones."""
    chosen = [c for c in cells
              if (query.start is None or c.number >= query.start) and (query.end is None or c.number <= query.end)]
    if query.search:
        needle = query.search.casefold()
        chosen = [c for c in chosen if any(needle in (text or "").casefold() for text in (c.source, c.output, c.error))]
    limit = MAX_COUNT if query.start is not None else DEFAULT_COUNT
    if query.start is not None and query.end is None:
        return chosen[:limit]  # from start, forwards
    return chosen[-limit:]


def render_cells(cells: Sequence[CellRecord], query: NotebookCellsInput) -> str:
    if not cells:
        return "No cells have been executed in this kernel yet (or the history was cleared)."
    chosen = select_cells(cells, query)
    out = TextBudget(MAX_CHARS)
    wanted = _describe_query(query)
    if not chosen:
        out.add(f"No executed cell matches {wanted}; this kernel ran cells In[{cells[0].number}]–In[{cells[-1].number}].")
    else:
        out.add(f"{len(cells)} cell(s) executed in this kernel (In[{cells[0].number}]–In[{cells[-1].number}]); "
                f"showing {len(chosen)} ({wanted}):\n")
        for cell in chosen:
            if not out.add(_render_cell(cell)):
                break
    last_error = next((c for c in reversed(cells) if c.error), None)
    if last_error is not None and last_error.traceback:
        out.add(f"\nLast exception (In[{last_error.number}]):\n{truncate_middle(last_error.traceback, TRACEBACK_CHARS)}\n")
    return out.text().rstrip("\n")


def _render_cell(cell: CellRecord) -> str:
    lines = [f"\nIn [{cell.number}]:", truncate_middle(cell.source.rstrip("\n"), SOURCE_CHARS) or "(empty)"]
    if cell.error:
        lines.append(f"→ raised {cell.error}")
    elif cell.output:
        lines.append(f"→ Out[{cell.number}]: {cell.output}")
    return "\n".join(lines) + "\n"


def _describe_query(query: NotebookCellsInput) -> str:
    parts = []
    if query.start is not None or query.end is not None:
        parts.append(f"In[{query.start or 1}]–In[{query.end if query.end is not None else '…'}]")
    if query.search:
        parts.append(f"containing {query.search!r}")
    return ", ".join(parts) if parts else "the most recent"
