"""Exit codes that answer "no" rather than report a failure (SPEC §4.2).

``grep`` exits 1 when nothing matched, ``diff`` and ``cmp`` when the inputs differ, ``test`` and
``[`` when the condition is false. Shown as an error, such an answer reads to the model as a
broken command and sends it looking for a fault that is not there. Exit 2 and above stay
failures (``grep`` 2 is a missing file or a bad pattern).

Which program's status bash reports is decided on the parse tree, never by looking for a word
in the text: the status of a pipeline is its last stage's, of ``a; b`` and ``a || b`` (when
non-zero) the last command's, and of ``a && b`` either ``a``'s or ``b``'s — so every program
that can have produced the status must answer "no" with 1 for the 1 to mean "no".
Anything else — a negated pipeline (``! grep``), a compound command as the deciding stage, a
dynamic program word, ``exit``/``return``/``set`` anywhere (an early exit or ``pipefail``
changes whose status it is), a background job, a command that does not parse — keeps the exit
code a failure, which is the honest default.
"""

from __future__ import annotations

import re
from typing import Any

from .parse import _TIME_KEYWORD, _bashlex_parse
from ...errors import ShellParseError
from .wrappers import strip_wrappers

__all__ = ["NO_ANSWERS", "no_answer"]

NO_ANSWERS: dict[str, str] = {
    "grep": "no match", "egrep": "no match", "fgrep": "no match", "zgrep": "no match",
    "rg": "no match", "ag": "no match",
    "diff": "the inputs differ", "cmp": "the inputs differ",
    "test": "the condition is false", "[": "the condition is false", "[[": "the condition is false",
}
"""Programs whose exit code 1 is an answer, and what it says."""

_STATUS_CHANGERS = frozenset({"exit", "return", "set", "shopt", "trap", "exec", "logout"})
"""Builtins that can make the reported status someone else's (``set -o pipefail``, ``exit 1``)."""

# bashlex cannot parse the ``[[ … ]]`` keyword; quoted, its brackets are plain words and the
# expression between them is parsed as arguments (an ``&&`` inside splits it, and then the
# deciding program is not ``[[``: the answer stays "failure", the safe side).
_DOUBLE_BRACKET = re.compile(r"(?<![^\s;&|(!])(\[\[|\]\])(?=$|[\s;&|)])")


def no_answer(command: str, exit_code: int | None) -> str | None:
    """What exit code ``exit_code`` of ``command`` answers when it is a "no" (e.g. "no match"),
    or None when it is a failure."""
    if exit_code != 1:
        return None
    trees = _parse(command)
    if not trees or any(_changes_status(t) for t in trees):
        return None
    deciding = _deciding_commands(trees[-1])
    if not deciding:
        return None
    meanings: list[str] = []
    for node in deciding:
        meaning = NO_ANSWERS.get(_program(node) or "")
        if meaning is None:
            return None
        if meaning not in meanings:
            meanings.append(meaning)
    return " or ".join(meanings)


def _parse(command: str) -> list[Any]:
    source = _DOUBLE_BRACKET.sub(lambda m: f"'{m.group(1)}'", command)
    for text in (source, _TIME_KEYWORD.sub(lambda m: m.group(1) + " " * len(m.group(2)), source)):
        try:
            return _bashlex_parse(text)
        except (ShellParseError, RecursionError):
            continue
    return []


def _deciding_commands(node: Any) -> list[Any] | None:
    """The simple commands whose non-zero status can be the status of ``node``, or None when
    that cannot be told from the tree."""
    kind = node.kind
    if kind == "command":
        return [node]
    if kind == "pipeline":
        stages = [p for p in node.parts if p.kind not in ("pipe", "reservedword")]
        if any(p.kind == "reservedword" for p in node.parts) or not stages:  # `! grep …`
            return None
        return _deciding_commands(stages[-1])
    if kind == "list":
        return _deciding_in_list(list(node.parts))
    return None  # subshells, groups, if/for/while, functions: not followed


def _deciding_in_list(items: list[Any]) -> list[Any] | None:
    while items and items[-1].kind == "operator" and items[-1].op in (";", "\n"):
        items = items[:-1]
    if not items or items[-1].kind == "operator":  # ends in `&`: its status is 0
        return None
    last = _deciding_commands(items[-1])
    if last is None:
        return None
    if len(items) >= 3 and items[-2].kind == "operator" and items[-2].op == "&&":
        before = _deciding_in_list(items[:-2])  # `a && b` fails with a's status or b's
        return None if before is None else [*before, *last]
    return last


def _program(node: Any) -> str | None:
    words = [p for p in node.parts if p.kind == "word"]  # leading NAME=value words are assignments
    plain = [w.word for w in words]
    core, _ = strip_wrappers(plain)
    if core >= len(words):
        return None
    word = words[core]
    if any(p.kind in ("parameter", "commandsubstitution", "processsubstitution") for p in word.parts or []):
        return None  # `$GREP x f`: the text does not say what ran
    return word.word.rsplit("/", 1)[-1]


def _changes_status(node: Any) -> bool:
    if node.kind == "command":
        words = [p.word for p in node.parts if p.kind == "word"]
        core, _ = strip_wrappers(words)
        if core < len(words) and words[core] in _STATUS_CHANGERS:
            return True
    for attr in ("parts", "list"):
        for child in getattr(node, attr, None) or []:
            if hasattr(child, "kind") and _changes_status(child):
                return True
    command = getattr(node, "command", None)
    return hasattr(command, "kind") and _changes_status(command)
