"""Finding the existing paths a policy must mount specially: protected ones and denied ones.

A bind mount needs a path that exists, so both lists are found on disk before each command,
by a breadth-first walk with a fixed budget of directory entries (a permission check must not
walk a whole home directory). Breadth first because what matters most is shallow: ``.git``
and ``.toolagent`` at the top of the working directory, rc files at the top of a home
directory. What a walk could not reach within its budget is reported, never silently assumed
safe: the caller shows the note in ``%agent sandbox``.

Which paths are protected is `permissions.safety.protected_reason` — one definition for the
safety check (which asks) and for the sandbox (which enforces).
"""

from __future__ import annotations

import os
from collections import deque
from pathlib import Path
from typing import Callable, Iterable

from ..permissions.safety import protected_reason

__all__ = ["WALK_BUDGET", "find_hidden", "find_protected", "walk_matches"]

WALK_BUDGET = 4_000
"""Directory entries looked at per walk; with `os.scandir` about a millisecond per thousand."""


def walk_matches(roots: Iterable[Path], matches: Callable[[str], bool], *, budget: int = WALK_BUDGET,
                 resolve_links: bool = False) -> tuple[list[Path], bool]:
    """Entries under ``roots`` (the roots themselves excluded) for which ``matches(path)``
    holds; a matching directory is not descended into. With ``resolve_links`` a symlink is
    judged by where it points (and its target is what is returned). Roots inside another
    root are walked once. Returns (found, complete)."""
    found: list[Path] = []
    queue: deque[str] = deque(str(r) for r in _outermost_dirs(roots))
    seen = 0
    while queue:
        directory = queue.popleft()
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    seen += 1
                    if seen > budget:
                        return found, False
                    path = os.path.realpath(entry.path) if resolve_links and entry.is_symlink() else entry.path
                    if matches(path):
                        found.append(Path(path))
                    elif entry.is_dir(follow_symlinks=False):
                        queue.append(entry.path)
        except OSError:
            continue
    return found, True


def _outermost_dirs(roots: Iterable[Path]) -> list[Path]:
    kept: list[Path] = []
    for root in sorted({r for r in roots if r.is_dir()}, key=lambda r: len(r.parts)):
        if not any(root.is_relative_to(k) for k in kept):
            kept.append(root)
    return kept


def find_protected(roots: Iterable[Path]) -> tuple[list[Path], bool]:
    """Protected paths (``.git``, ``.bashrc`` …) below the writable ``roots``.

    Only what lies below a root counts: a working directory that is itself inside a
    protected directory was chosen by the person, and binding it read-only would defeat
    every approved write there."""
    roots = list(roots)

    unprotected_roots = {str(r) for r in roots if protected_reason(str(r)) is None}

    def protected_below_root(path: str) -> bool:
        root = next((r for r in roots if path.startswith(str(r).rstrip("/") + "/")), None)
        if root is None:
            return False
        if protected_reason(os.path.relpath(path, root)) is not None:
            return True
        # Anchored patterns (/etc/profile.d, early PATH directories such as ~/.local/bin) match
        # only absolute paths; below a root that is not itself protected, an absolute match
        # can only come from what lies below the root.
        return str(root) in unprotected_roots and protected_reason(path) is not None

    return walk_matches(roots, protected_below_root)


def find_hidden(roots: Iterable[Path], denied: Callable[[str], bool]) -> tuple[list[Path], bool]:
    """Existing paths below ``roots`` that a ``Read(...)`` deny rule covers (``denied``), plus
    each root itself when it is covered as a whole."""
    roots = [r for r in dict.fromkeys(roots) if r.exists()]
    whole = [r for r in roots if denied(str(r))]
    found, complete = walk_matches([r for r in roots if r not in whole], denied, resolve_links=True)
    return list(dict.fromkeys([*whole, *found])), complete
