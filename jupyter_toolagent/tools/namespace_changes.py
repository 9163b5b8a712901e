"""What one `RunPython` call did to the namespace's names, and how to take it back (SPEC §15).

`NameChanges.between` compares the namespace before and after a call by *identity*: a name is
bound (new), rebound (now a different object) or deleted. Nothing is hashed or compared by
value, so a 10-million-row frame costs what an int costs; in-place mutations (``df.drop(...,
inplace=True)``, ``xs.append(1)``) are therefore neither listed nor undone, and the texts say so.

`UndoRecord` keeps the objects a call replaced or deleted, by reference, so `%agent undo` can put
them back. Only the last call's record is kept (`UndoStore`): the next RunPython call replaces it,
which releases the objects it held; an undo consumes it, so a second undo has nothing to do.
Names the call newly bound are removed by undo — the namespace is as it was before the call —
but only while they still hold the object the call bound: a name the person changed since is
left alone, and so is a rebound or deleted name that was given a new value since.

``_``-names (IPython's output history, private helpers) are neither listed nor undone. Holding
the replaced objects has a cost worth knowing: a large frame that RunPython deleted or rebound
stays in memory until the next RunPython call (or ``%agent undo``) lets it go.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, MutableMapping

__all__ = ["NameChanges", "UndoRecord", "UndoStore", "visible_name"]

MAX_LISTED = 30
NOT_UNDONE = "In-place changes to objects (e.g. df.drop(..., inplace=True), list.append) are not undone."


def visible_name(name: Any) -> bool:
    """Names worth reporting: not ``_``-names (IPython's output history, private helpers)."""
    return isinstance(name, str) and not name.startswith("_")


@dataclass(frozen=True)
class NameChanges:
    bound: tuple[str, ...] = ()
    rebound: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()

    @classmethod
    def between(cls, before: Mapping[str, Any], after: Mapping[str, Any]) -> "NameChanges":
        bound, rebound, deleted = [], [], []
        for name, value in after.items():
            if not visible_name(name):
                continue
            if name not in before:
                bound.append(name)
            elif before[name] is not value:
                rebound.append(name)
        deleted = [n for n in before if visible_name(n) and n not in after]
        return cls(tuple(bound), tuple(rebound), tuple(deleted))

    def __bool__(self) -> bool:
        return bool(self.bound or self.rebound or self.deleted)

    def summary(self) -> str:
        """``Names: bound a, b; rebound df; deleted tmp`` (empty when nothing changed)."""
        parts = [f"{label} {_names(names)}" for label, names in
                 (("bound", self.bound), ("rebound", self.rebound), ("deleted", self.deleted)) if names]
        return ("Names: " + "; ".join(parts)) if parts else ""


def _names(names: tuple[str, ...]) -> str:
    shown = ", ".join(names[:MAX_LISTED])
    return shown + (f" (and {len(names) - MAX_LISTED} more)" if len(names) > MAX_LISTED else "")


@dataclass
class UndoRecord:
    """One call's changes, with the previous objects of the names it rebound or deleted."""

    changes: NameChanges
    previous: dict[str, Any] = field(default_factory=dict)
    """name → the object it held before the call (rebound and deleted names)."""
    placed: dict[str, int] = field(default_factory=dict)
    """name → id of the object the call left there (bound and rebound names)."""

    @classmethod
    def capture(cls, before: Mapping[str, Any], after: Mapping[str, Any], changes: NameChanges) -> "UndoRecord":
        previous = {n: before[n] for n in (*changes.rebound, *changes.deleted)}
        placed = {n: id(after[n]) for n in (*changes.bound, *changes.rebound)}
        return cls(changes, previous, placed)

    def apply(self, namespace: MutableMapping[str, Any]) -> str:
        """Put the previous objects back; returns what was done, for the person."""
        restored, removed, skipped = [], [], []
        for name in self.changes.rebound:
            if name in namespace and id(namespace[name]) == self.placed[name]:
                namespace[name] = self.previous[name]
                restored.append(name)
            else:
                skipped.append(name)
        for name in self.changes.deleted:
            if name not in namespace:
                namespace[name] = self.previous[name]
                restored.append(name)
            else:
                skipped.append(name)
        for name in self.changes.bound:
            if name in namespace and id(namespace[name]) == self.placed[name]:
                del namespace[name]
                removed.append(name)
            else:
                skipped.append(name)
        lines = []
        if restored:
            lines.append(f"restored {', '.join(restored)} to the object(s) they held before the call")
        if removed:
            lines.append(f"removed {', '.join(removed)} (bound by the call)")
        if skipped:
            lines.append(f"left {', '.join(skipped)} alone (changed again since the call)")
        if not lines:
            lines.append("the call bound, rebound and deleted no names")
        return "; ".join(lines) + ". " + NOT_UNDONE


class UndoStore:
    """The last RunPython call's `UndoRecord` for one namespace (none after an undo)."""

    def __init__(self) -> None:
        self._record: UndoRecord | None = None

    def remember(self, record: UndoRecord) -> None:
        self._record = record  # the previous record, and the objects it held, are released

    def forget(self) -> None:
        self._record = None

    @property
    def pending(self) -> UndoRecord | None:
        return self._record

    def undo(self, namespace: MutableMapping[str, Any]) -> str | None:
        """Undo the last call once; None when there is nothing to undo."""
        record, self._record = self._record, None
        return None if record is None else record.apply(namespace)
