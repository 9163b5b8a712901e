"""``%agent undo``: take back what the last `RunPython` call did to the namespace's names.

The record (`tools.namespace_changes.UndoRecord`) belongs to the shell, not to a conversation:
the namespace is the shell's, whichever session's call changed it. It holds the replaced and
deleted objects by reference until the next RunPython call (or this undo) releases them, and
works once: a second ``%agent undo`` says there is nothing to undo.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ..tools.namespace_changes import NOT_UNDONE, UndoStore
from .per_owner import PerOwner

if TYPE_CHECKING:
    from .magics import AgentMagics
    from .subcommands import TextView

__all__ = ["undo", "undo_store_for"]

_stores: PerOwner[UndoStore] = PerOwner(UndoStore)


def undo_store_for(shell: Any) -> UndoStore:
    return _stores.get(shell)


def undo(magics: "AgentMagics", args: list[str]) -> "TextView":
    """``%agent undo``: restore the names the last RunPython call rebound or deleted."""
    from .subcommands import TextView

    if args:
        raise UsageError(f"%agent undo takes no arguments (got {' '.join(args)!r})")
    done = undo_store_for(magics.shell).undo(magics.shell.user_ns)
    if done is None:
        return TextView("nothing to undo: no RunPython call since the last undo (each call can be undone once, "
                        f"until the next call). {NOT_UNDONE}")
    return TextView(f"undid the last RunPython call: {done}")
