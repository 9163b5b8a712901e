"""The files a shell command names, resolved, for ``Read(...)`` deny rules (SPEC §5.2).

A ``Read(./secrets/**)`` deny rule covers every reading tool, and a shell command reads too:
``cat secrets/k``, ``grep -r x secrets/``, ``cd secrets && cat k``, ``wc -c < secrets/k``. So
every path a command names — operands, ``--opt=PATH`` values, input redirections — is resolved
the way the shell would resolve it (in the directory each part runs in, `shell.cwd`; ``~``,
symlinks and ``..`` followed; a glob expanded against the file system, bounded) and matched
against the rules.

Over-inclusive: any word of any part counts as a path, whatever the command (``cp secrets/k
/tmp`` reads it as well). A word that cannot be resolved — a variable, a substitution, a part
after a change of directory nobody can follow, a glob too wide to expand — is reported as such,
and the engine asks instead of allowing.
"""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass
from itertools import islice

from .parse import ParsedCommand
from .cwd import part_directories
from .readonly import walks_directories

__all__ = ["NamedPaths", "named_paths"]

_GLOB = re.compile(r"[*?\[]")
_UNRESOLVABLE = re.compile(r"[$`]")
_MAX_GLOB_MATCHES = 200
_MAX_GLOB_COMPONENTS = 2


@dataclass(frozen=True)
class NamedPaths:
    paths: tuple[str, ...]
    """Resolved paths the command names."""
    walked: tuple[str, ...]
    """Resolved directories a recursive command reads everything under (``grep -r x dir``)."""
    unresolved: tuple[str, ...]
    """Words that may be paths but cannot be resolved before the command runs."""


def named_paths(parsed: ParsedCommand, cwd: str) -> NamedPaths:
    """Every path ``parsed`` names, resolved against ``cwd`` and the ``cd`` before each part."""
    directories = part_directories(parsed, cwd)
    paths: list[str] = []
    walked: list[str] = []
    unresolved: list[str] = []
    if directories is None:
        return NamedPaths((), (), tuple(c.text for c in parsed.commands))
    for part, directory in zip(parsed.commands, directories):
        words = part.core_words
        recursive = bool(words) and walks_directories(words)
        for word in [*_path_words(words[1:]), *part.reads]:
            expands = bool(part.expansions or part.substitution)  # else a `$` is a quoted, literal one
            if (expands and _UNRESOLVABLE.search(word)) or part.unexpandable is not None:
                unresolved.append(word)
                continue
            resolved = _resolve(word, directory or cwd)
            if resolved is None:
                unresolved.append(word)
                continue
            paths.extend(resolved)
            if recursive:
                walked.extend(p for p in resolved if os.path.isdir(p))
    for word in parsed.redirect_reads:
        resolved = None if _UNRESOLVABLE.search(word) else _resolve(word, cwd)
        if resolved is None:
            unresolved.append(word)
        else:
            paths.extend(resolved)
    return NamedPaths(tuple(dict.fromkeys(paths)), tuple(dict.fromkeys(walked)), tuple(unresolved))


def _path_words(args: tuple[str, ...]) -> list[str]:
    """Operands, and the value of ``--opt=VALUE`` (an option word alone names no file)."""
    found = []
    for arg in args:
        if arg.startswith("-") and arg != "-":
            if "=" in arg:
                found.append(arg.split("=", 1)[1])
            continue
        found.append(arg)
    return [w for w in found if w and w != "-"]


def _resolve(word: str, directory: str) -> list[str] | None:
    """The resolved path(s) of one word; a glob is expanded (None when too wide to expand)."""
    path = os.path.join(directory, os.path.expanduser(word))
    if not _GLOB.search(path):
        return [os.path.realpath(path)]
    if sum(1 for c in path.split("/") if _GLOB.search(c)) > _MAX_GLOB_COMPONENTS:
        return None
    matches = list(islice(glob.iglob(path), _MAX_GLOB_MATCHES + 1))
    if len(matches) > _MAX_GLOB_MATCHES:
        return None
    return [os.path.realpath(m) for m in matches] or [os.path.realpath(path)]
