"""`InsertCell`: propose a new code cell below the agent's cell, not executed (SPEC §15).

The model writes the code; the person decides whether to run it. That makes it an edit of the
notebook (`NotebookEdit`): it asks unless a rule allows it, and ``acceptEdits`` allows it, like a
file edit in the working directory. How the cell gets into the notebook is the front end's
business: the notebook layer hands this tool a `CellInserter` through
`BuiltinToolOptions.cell_inserter` (in a kernel, the ``set_next_input`` payload that
JupyterLab and Notebook 7 both turn into a new cell below the executing one). Without one — or
when the front end cannot insert (nbclient, papermill) — the code is shown in the cell with a
note that it was not inserted, and the model is told so.

Not concurrency-safe: several proposals of one run keep the order in which they were made.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from ..core.events import NoticeEvent
from ..core.permission_types import NotebookEdit, PermissionSubject
from ..core.tool import Progress, Tool, ToolResult, ToolUseContext
from .options import builtin_options

__all__ = ["CellInserter", "InsertCell", "InsertCellInput", "InsertOutcome"]

MAX_CODE_CHARS = 100_000


@dataclass(frozen=True)
class InsertOutcome:
    inserted: bool
    """True: the front end will show the new cell; False: it cannot insert, the code was only shown."""
    message: str
    """What the model is told (where the cell goes, when it appears, or why it was not inserted)."""


class CellInserter(Protocol):
    """What the notebook layer provides: proposes ``code`` as a new cell below the agent cell."""

    def propose(self, code: str) -> InsertOutcome: ...


class InsertCellInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    code: str = Field(description="The Python code of the new cell. It is inserted below the agent's cell and NOT run: "
                                  "the user reviews it and runs it.", max_length=MAX_CODE_CHARS)


class InsertCell(Tool[InsertCellInput]):
    name = "InsertCell"
    description = (
        "Propose a new code cell with this code, inserted in the notebook below the current agent cell. The cell is "
        "not executed: the user reads it and decides whether to run it. Use it for code the user should keep in the "
        "notebook (e.g. a fixed version of a cell that failed); use RunPython to run code yourself. Needs the user's "
        "approval unless allowed."
    )
    input_model = InsertCellInput

    def permission_subject(self, input: InsertCellInput, ctx: ToolUseContext) -> PermissionSubject | None:
        return NotebookEdit("insert a new code cell below the agent cell")

    async def call(self, input: InsertCellInput, ctx: ToolUseContext, progress: Progress) -> ToolResult:
        code = input.code
        if not code.strip():
            return ToolResult("InsertCell needs some code: the cell would be empty.", is_error=True)
        inserter = builtin_options(ctx).cell_inserter
        if inserter is not None:
            outcome = inserter.propose(code)
        else:
            outcome = InsertOutcome(False, "Not inserted: no notebook front end is attached to this session. The "
                                           "code was shown to the user, who can copy it into a cell.")
        if not outcome.inserted:
            reason = outcome.message.removeprefix("Not inserted: ")
            ctx.emit(NoticeEvent(level="warning", text=(  # scrubbed where the session emits it
                f"InsertCell: the proposed cell was not inserted. {reason}\n\nThe proposed code:\n\n{code}")))
        return ToolResult(outcome.message)
