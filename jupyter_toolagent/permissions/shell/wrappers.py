"""Harmless wrappers: prefixes that change how, not what, a command runs.

``timeout 5 git log`` is matched as ``git log`` by allow and deny rules alike, so a rule need not
list every way of wrapping a command. Only wrappers that run their argument unchanged qualify;
``sudo``, ``xargs``, ``sh -c``, ``eval`` and ``command`` do not (deny rules look through them,
see `shell.unwrap`), and neither does ``env`` with options (``env -i``, ``env -S``).
"""

from __future__ import annotations

import re
from typing import Sequence

HARMLESS_WRAPPERS = ("time", "timeout", "nice", "nohup", "env")
"""Prefixes that change how, not what, a command runs. ``env`` only when followed by
``NAME=value`` words and a command (``env -i …`` and other options are not stripped).
``xargs``, ``sudo``, ``sh -c``, ``eval``, ``command`` are *not* harmless: they are looked
through only when checking deny and ask rules (see `shell.unwrap`)."""

_ASSIGNMENT_WORD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_DURATION = re.compile(r"^\d+(\.\d+)?[smhd]?$")


def strip_wrappers(words: Sequence[str]) -> tuple[int, tuple[str, ...]]:
    """Index of the first word after harmless wrappers, and the names ``env`` assigns."""
    i = 0
    assigned: list[str] = []
    while i < len(words):
        name = words[i]
        if name in ("time", "nohup"):
            i += 1
            if name == "time" and i < len(words) and words[i] == "-p":
                i += 1
        elif name == "nice":
            i = _skip_nice_options(words, i + 1)
        elif name == "timeout":
            after = _skip_timeout_options(words, i + 1)
            if after is None:
                break
            i = after
        elif name == "env":
            j = i + 1
            while j < len(words) and _ASSIGNMENT_WORD.match(words[j]):
                j += 1
            if j == i + 1 or j == len(words):  # bare `env` (prints) or options: not a wrapper
                break
            assigned.extend(w.split("=", 1)[0] for w in words[i + 1 : j])
            i = j
        else:
            break
        if i >= len(words):
            return len(words), tuple(assigned)
    return i, tuple(assigned)


def _skip_nice_options(words: Sequence[str], i: int) -> int:
    if i < len(words) and words[i] == "-n":
        return i + 2
    if i < len(words) and re.fullmatch(r"-n?-?\d+|--adjustment=-?\d+", words[i]):
        return i + 1
    return i


def _skip_timeout_options(words: Sequence[str], i: int) -> int | None:
    while i < len(words) and words[i].startswith("-"):
        opt = words[i]
        if opt in ("-s", "-k", "--signal", "--kill-after"):
            i += 2
        elif opt in ("--preserve-status", "--foreground", "-v", "--verbose") or re.match(
            r"--(signal|kill-after)=|-[sk].", opt
        ):
            i += 1
        else:
            return None
    if i < len(words) and _DURATION.match(words[i]):
        return i + 1
    return None
