"""The directory each part of a compound command runs in.

Path checks resolve a part's relative words against the working directory. In ``cd / && cd
pr?c/self && cat envir?n`` the last part does not run where the tool starts: checked against
the project directory, ``envir?n`` is a harmless name; run, it is ``/proc/self/environ``, which
holds the API key. So the parts are followed in order, as the shell would run them, and each
is checked in the directory the ``cd``/``pushd`` before it leads to (a glob in the target is
expanded the way the shell expands it, against the file system).

When a change of directory cannot be followed — ``cd -``, ``popd``, a variable, a glob that
does not name exactly one directory — nothing after it can be resolved, and `part_directories`
says so (None): the caller then treats the command as one it cannot check.

Parts are taken in order even where the shell would not carry the directory over (a pipeline's
parts run in subshells): that errs towards resolving against a directory the part might run
in, which is the one that matters for a check.
"""

from __future__ import annotations

import glob
import os
import re
from itertools import islice
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from .parse import ParsedCommand, SimpleCommand

__all__ = ["part_directories", "resolve_word"]

_CHANGES_DIRECTORY = frozenset({"cd", "pushd", "popd", "chdir"})
_GLOB = re.compile(r"[*?\[]")
_UNFOLLOWABLE = re.compile(r"[$`]")
_MAX_GLOB_PARTS = 2
"""Path components with wildcards that a ``cd`` target may have and still be expanded."""


def part_directories(parsed: "ParsedCommand", cwd: str | None) -> list[str | None] | None:
    """The directory each of ``parsed.commands`` runs in (None where ``cwd`` is None and no
    absolute ``cd`` came before), or None when a change of directory cannot be followed."""
    directories: list[str | None] = []
    current = cwd
    for part in parsed.commands:
        directories.append(current)
        words = part.core_words
        if words and words[0] in _CHANGES_DIRECTORY:
            target = _target(part, words)
            current = _follow(current, target) if target is not None else None
            if current is None:
                return None
    return directories


def _target(part: "SimpleCommand", words: Sequence[str]) -> str | None:
    """The directory word (``~`` for a ``cd`` that goes home), or None: one nobody can follow."""
    if words[0] == "popd" or part.expansions or part.substitution:
        return None
    operands = [w for w in words[1:] if w not in ("-L", "-P", "-e", "-@", "--")]
    if not operands:
        return "~" if words[0] != "pushd" else None  # `cd` alone goes home; `pushd` alone swaps with the stack
    target = operands[-1]
    if target == "-" or _UNFOLLOWABLE.search(target) or (words[0] == "pushd" and target[:1] in "+-"):
        return None
    return target


def _follow(current: str | None, target: str) -> str | None:
    """The directory after ``cd target`` from ``current``; None when it cannot be known."""
    path = os.path.expanduser(target)
    if not os.path.isabs(path):
        if current is None:
            return None
        path = os.path.join(current, path)
    if _GLOB.search(path):
        if sum(1 for part in path.split("/") if _GLOB.search(part)) > _MAX_GLOB_PARTS:
            return None  # `cd /*/*/*/*/x?` would walk much of the disk during a permission check
        matches = list(islice((m for m in glob.iglob(path) if os.path.isdir(m)), 2))
        if len(matches) != 1:
            return None
        path = matches[0]
    return os.path.realpath(path)


def resolve_word(real_directory: str, word: str) -> str:
    """``os.path.realpath(os.path.join(real_directory, word))`` for an already resolved
    directory, with one ``lstat`` instead of a walk of every component when ``word`` is a plain
    name (the common case: a brace expansion can make a thousand of them)."""
    if "/" in word or word in ("", ".", "..") or word.startswith("~"):
        return os.path.realpath(os.path.join(real_directory, os.path.expanduser(word)))
    candidate = os.path.join(real_directory, word)
    return os.path.realpath(candidate) if os.path.islink(candidate) else candidate
