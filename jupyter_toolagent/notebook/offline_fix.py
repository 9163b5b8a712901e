"""The offline demo's "fix the cell above" turns (SPEC §15), from the request alone.

A prompt that asks to fix something, with `NotebookCells` and `InsertCell` offered, is played as
a careful person would: read the cells and the variables; from the last exception, work out a
fix — for ``NameError: name 'X' is not defined``, the closest variable name — and propose the
fixed cell with `InsertCell` (not run: the person decides); then say what was done. Where the
script cannot work out a fix, it proposes the failing cell unchanged with a comment saying so.
Like every demo turn it says it is scripted, not Claude.
"""

from __future__ import annotations

import difflib
import re
from typing import Any, Callable

__all__ = ["fix_turn"]

_ASKS_TO_FIX = re.compile(r"\b(fix|repair|correct)\b", re.IGNORECASE)
_LAST_ERROR = re.compile(r"Last exception \(In\[(\d+)\]\)")
_NAME_ERROR = re.compile(r"NameError: name '([A-Za-z_][A-Za-z0-9_]*)' is not defined")
_VARIABLE = re.compile(r"^\s+([A-Za-z_][A-Za-z0-9_]*): ", re.MULTILINE)

Call = dict[str, Any]
ResultOf = Callable[[str], str]


def fix_turn(prompt: str, offered: set[str], calls: list[Call], result_of: ResultOf) -> list[dict[str, Any]] | None:
    """The next turn of a "fix" prompt, or None when this is not one (the quickstart goes on)."""
    if not _ASKS_TO_FIX.search(prompt) or not {"NotebookCells", "InsertCell"} <= offered:
        return None
    called = [c.get("name") for c in calls]
    if "NotebookCells" not in called:
        turn = [_text("**Offline demo** — these turns are scripted, not written by Claude. First I read the cells "
                      "this kernel ran and the traceback of the last error."), _tool_use("NotebookCells", {})]
        if "ListVariables" in offered:
            turn.append(_tool_use("ListVariables", {}))
        return turn
    if "InsertCell" not in called:
        cells, variables = result_of("NotebookCells"), _VARIABLE.findall(result_of("ListVariables"))
        code, explanation = propose_fix(cells, variables)
        return [_text(explanation + " I propose the fixed cell below the agent cell; it is not run — you decide."),
                _tool_use("InsertCell", {"code": code})]
    outcome = result_of("InsertCell")
    if outcome.startswith("Proposed"):
        where = "The fixed cell appears below this one when it finishes: read it, then run it."
    elif outcome.startswith("Not inserted"):
        where = "This run cannot insert cells (no interactive front end), so the code is shown above instead."
    else:
        where = "The proposal was not accepted, so nothing was added to the notebook."
    return [_text(f"**Offline demo summary** (scripted turns, not Claude): {where} Set ANTHROPIC_API_KEY to have "
                  "Claude fix real errors.")]


def propose_fix(cells_text: str, variables: list[str]) -> tuple[str, str]:
    """(code, explanation) for the last failed cell in a `NotebookCells` result."""
    found = _LAST_ERROR.search(cells_text)
    if found is None:
        return ("# No cell of this kernel has raised an exception yet: nothing to fix.\n",
                "No cell raised an exception, so there is nothing to fix.")
    number = found.group(1)
    cell = re.search(rf"In \[{number}\]:\n(.*?)\n→ raised (.*?)\n", cells_text, re.DOTALL)
    if cell is None:
        return (f"# In[{number}] failed, but its source is not in the listing.\n",
                f"In[{number}] failed, but its source was not listed.")
    source, error = cell.group(1), cell.group(2)
    missing = _NAME_ERROR.search(error)
    if missing is not None:
        name = missing.group(1)
        close = difflib.get_close_matches(name, variables, n=1, cutoff=0.6)
        if close:
            fixed = re.sub(rf"\b{re.escape(name)}\b", close[0], source)
            return fixed, f"In[{number}] raised `{error}`: `{name}` is not a variable; `{close[0]}` is."
    return (f"# The offline demo could not work out a fix for: {error}\n{source}",
            f"In[{number}] raised `{error}`; the scripted demo cannot work out a fix for that.")


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _tool_use(name: str, input: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": input}
