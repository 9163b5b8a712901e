"""How `InsertCell` gets a new cell into the notebook: the ``set_next_input`` payload.

JupyterLab 4 and Notebook 7 (which share JupyterLab's notebook code) turn a ``set_next_input``
payload with ``replace=False`` in a cell's ``execute_reply`` into a new, unexecuted code cell
right below that cell — no front-end extension needed. Two facts shape this module:

- Only the *first* such payload of a reply is used (the front ends filter the payload list and
  take ``[0]``), and IPython keeps one payload per source anyway. So several proposals of one
  agent cell are combined, in the order they were made, into that one payload: the new cell
  holds all of them, each under a comment line. Each call rewrites the payload with everything
  proposed so far, so nothing depends on the run ending normally.
- The payload travels in the reply, so the cell appears when the agent cell has finished, and
  only if it finished without an error (the front ends ignore payloads of failed replies).

Where no front end can insert — nbclient, nbconvert and papermill send ``allow_stdin=False`` and
ignore payloads — the proposal is not written, and `InsertCell` shows the code with a note.
Terminal IPython puts the code at the next prompt (its own ``set_next_input``).
"""

from __future__ import annotations

from typing import Any

from ..tools.insert_cell import InsertOutcome
from .headless import execute_request_allows_stdin
from .kernel_run import kernel_of

__all__ = ["CellInserter", "combine_proposals"]


def combine_proposals(proposals: list[str]) -> str:
    """One cell's source for the proposals, in order (a single one is kept as it is)."""
    if len(proposals) == 1:
        return proposals[0]
    parts = [f"# proposed by the agent ({i} of {len(proposals)})\n{code.strip(chr(10))}"
             for i, code in enumerate(proposals, 1)]
    return "\n\n".join(parts) + "\n"


class CellInserter:
    """The proposals of one agent cell (a `tools.insert_cell.CellInserter`)."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.proposals: list[str] = []
        kernel = kernel_of(shell)
        self.where = "terminal" if kernel is None else "notebook"
        self.can_insert = kernel is None or execute_request_allows_stdin(kernel) is not False

    def propose(self, code: str) -> InsertOutcome:
        if not self.can_insert:
            return InsertOutcome(False, "Not inserted: this notebook is being run without an interactive front end "
                                        "(e.g. nbclient or papermill), which cannot insert cells. The code was shown "
                                        "in the agent cell's output instead.")
        self.proposals.append(code)
        self.shell.set_next_input(combine_proposals(self.proposals), replace=False)
        count = len(self.proposals)
        if self.where == "terminal":
            return InsertOutcome(True, "Proposed: the code will be at the user's next IPython prompt, not run.")
        text = ("Proposed: a new code cell with this code will appear below the agent cell when this agent cell "
                "finishes. It is not run: the user reviews it and decides.")
        if count > 1:
            text += (f" This is proposal {count} of this agent cell: the notebook inserts one new cell per agent "
                     "cell, so all proposals go into that one cell, in order, each under a comment line.")
        return InsertOutcome(True, text)
