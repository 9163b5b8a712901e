"""The kernel-change note: what changed in the kernel since the agent last looked (SPEC §15).

Between two ``%%agent`` cells the person runs cells: ``df`` is rebound, ``tmp`` deleted, a cell
fails. Without being told, the model works from a stale picture. So the first request of each
``%%agent`` cell carries, after the prompt in the user message (never in the system prompt,
which stays byte-identical for prompt caching), a short note of:

- variables added, rebound or removed since the end of the session's previous agent cell —
  name, type and shape — with `ListVariables`' hiding rules (no modules, ``_``-names, IPython's
  or the product's own objects);
- the exception of the cell just before this one (type, message, ``In`` number);
- a kernel restart since the session last ran (set by whoever resumes a saved session into a
  fresh kernel: `mark_kernel_restarted`).

Nothing changed → no note, so the request is exactly what it would have been without this.

Cheap by design (benchmark B14): a snapshot is, per visible name, the object's ``id``, its type
and a shape read only from types that guarantee it (library array shapes, built-in lengths) —
no hashing, no ``repr``, no user code. An object mutated in place keeps its id; a change of its
shape is still reported, other in-place changes are not. An id can be reused once its object
is freed, so a name rebound to a new object of the same type and shape at the very address of
the freed old one would look unchanged; that needs the old object to die first, which a plain
rebinding (``df = df.dropna()``) never does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from ..tools import optional_libs
from ..tools.variables import is_hidden, user_tool_of
from .per_owner import PerOwner

__all__ = ["KernelWatch", "Snapshot", "describe_changes", "mark_kernel_restarted", "take_snapshot", "watch_for"]

MAX_NAMES = 12
"""Names listed per note (the rest are counted): the note stays well under 1 KB."""
NOTE_TITLE = "[Kernel changes since the agent last looked — the user ran cells in between]"

_SIZED = (dict, list, tuple, set, frozenset, str, bytes, bytearray)

Entry = tuple[int, type, Any]
"""(id, type, shape or length or None) of one variable."""


@dataclass
class Snapshot:
    entries: dict[str, Entry] = field(default_factory=dict)


def _shape(value: Any) -> Any:
    """A shape only where the type guarantees it cheaply; None otherwise (runs no user code)."""
    t = type(value)
    if t in _SIZED:
        return t.__len__(value)
    if optional_libs.is_pandas_frame(value) or optional_libs.is_numpy_array(value):
        return tuple(value.shape)
    if optional_libs.is_pandas_series(value):
        return (len(value),)
    if optional_libs.is_polars_frame(value):
        return (value.height, value.width)
    return None


def take_snapshot(namespace: Mapping[str, Any], hidden: Any = None) -> Snapshot:
    entries: dict[str, Entry] = {}
    for name, value in list(namespace.items()):
        if not isinstance(name, str) or user_tool_of(value) is not None or is_hidden(name, value, hidden):
            continue
        entries[name] = (id(value), type(value), _shape(value))
    return Snapshot(entries)


def _describe(entry: Entry) -> str:
    _, t, shape = entry
    kind = type_name_of(t)
    if shape is None:
        return kind
    if isinstance(shape, tuple):
        return f"{kind} {'×'.join(f'{n:,}' for n in shape)}"
    return f"{kind} len {shape:,}"


def type_name_of(t: type) -> str:
    module = t.__module__.split(".")[0]
    return f"{module} {t.__name__}" if module in ("pandas", "numpy", "polars") else t.__name__


def describe_changes(before: Snapshot, after: Snapshot) -> list[str]:
    """One line per kind of change (added, rebound, changed in place, removed), names capped."""
    added, rebound, reshaped, removed = [], [], [], []
    for name, entry in after.entries.items():
        old = before.entries.get(name)
        if old is None:
            added.append(f"{name} ({_describe(entry)})")
        elif old[0] != entry[0] or old[1] is not entry[1]:
            rebound.append(f"{name} ({_describe(old)} → {_describe(entry)})")
        elif old[2] != entry[2]:
            reshaped.append(f"{name} ({_describe(old)} → {_describe(entry)})")
    removed = [f"{name} ({_describe(entry)})" for name, entry in before.entries.items() if name not in after.entries]
    lines, budget = [], MAX_NAMES
    for label, names in (("Added", added), ("Rebound", rebound), ("Changed in place", reshaped), ("Removed", removed)):
        if not names:
            continue
        shown, budget = names[:max(budget, 1)], max(budget - len(names), 0)
        more = len(names) - len(shown)
        lines.append(f"{label}: {', '.join(shown)}" + (f", and {more} more" if more else ""))
    return lines


class KernelWatch:
    """What one session last saw of the kernel."""

    def __init__(self) -> None:
        self.snapshot: Snapshot | None = None
        self.kernel_restarted = False
        """Set by `mark_kernel_restarted` (a saved session resumed in a fresh kernel)."""

    def note(self, namespace: Mapping[str, Any], hidden: Any, *, previous_error: Any = None) -> str | None:
        """The note for the next cell's first request, or None when nothing changed."""
        lines: list[str] = []
        if self.kernel_restarted:
            lines.append("The kernel was restarted since this conversation last ran: variables, imports and "
                         "results from before the restart no longer exist unless a cell re-created them.")
        if self.snapshot is not None:
            lines += describe_changes(self.snapshot, take_snapshot(namespace, hidden))
        if previous_error is not None:
            lines.append(f"The cell before this one (In[{previous_error.number}]) raised {previous_error.line} "
                         "(NotebookCells shows its source and traceback).")
        if not lines:
            return None
        return "\n".join([NOTE_TITLE, *lines, "(ListVariables and NotebookCells show more.)"])

    def looked(self, namespace: Mapping[str, Any], hidden: Any) -> None:
        """The agent has seen the kernel as it is now (the end of an agent cell)."""
        self.snapshot = take_snapshot(namespace, hidden)
        self.kernel_restarted = False


_watches: PerOwner[KernelWatch] = PerOwner(KernelWatch)


def watch_for(session: Any) -> KernelWatch:
    return _watches.get(session)


def mark_kernel_restarted(session: Any) -> None:
    """Say in the session's next note that the kernel restarted since the session last ran.

    For the code that resumes a saved session in a fresh kernel (``%agent resume``)."""
    watch = watch_for(session)
    watch.kernel_restarted = True
    watch.snapshot = None  # nothing of the old kernel can be compared with the new one
