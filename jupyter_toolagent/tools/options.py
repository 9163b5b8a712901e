"""`BuiltinToolOptions`: the settings and front-end objects the built-in tools read.

The core carries this object without reading it (``ctx.options.plugins.get(BuiltinToolOptions)``,
see `core.tool.PluginOptions`); the notebook layer fills it with the kernel's pieces, `Agent`
takes one through ``plugin_options=[...]``. Every field has a default, so a run outside a
notebook (no runner, no cell history) reads the defaults and each tool says what is missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Collection, Literal

if TYPE_CHECKING:
    from ..core.tool import ToolUseContext
    from .insert_cell import CellInserter
    from .namespace_changes import UndoStore
    from .notebook_cells import CellHistorySource
    from .python_exec import PythonRunner

__all__ = ["BuiltinToolOptions", "builtin_options"]


@dataclass(frozen=True)
class BuiltinToolOptions:
    """Options of the built-in tools (one object per run)."""

    python_runner: "PythonRunner | None" = None
    """How ``RunPython`` runs code (in a kernel: an ``IPythonRunner``, which keeps ``%magics`` and
    ``__future__`` imports); None: a fresh plain ``CodeRunner`` per call."""
    hidden_names: Collection[str] | None = None
    """Names ``ListVariables`` and ``InspectVariable`` leave out (IPython's ``user_ns_hidden``).
    A mapping hides a name only while it still holds the value recorded there."""
    grep_backend: Literal["auto", "python"] = "auto"
    """``"auto"``: ripgrep when installed, else the Python search; ``"python"``: always Python."""
    inspect_max_chars: int | None = None
    """``InspectVariable``'s summary budget when the call gives none (clamped to 200..50,000);
    None: 4,000."""
    cell_history: "CellHistorySource | None" = None
    """The kernel's executed cells, for ``NotebookCells``; None: no notebook attached."""
    cell_inserter: "CellInserter | None" = None
    """Proposes a new cell below the agent cell, for ``InsertCell``; None: the code is only shown."""
    undo_store: "UndoStore | None" = None
    """Keeps the last ``RunPython`` call's changes for ``%agent undo``; None: nothing is kept."""


def builtin_options(ctx: "ToolUseContext") -> BuiltinToolOptions:
    """The run's `BuiltinToolOptions` (its defaults when nobody gave one)."""
    return ctx.options.plugins.get(BuiltinToolOptions)
