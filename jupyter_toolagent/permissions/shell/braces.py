"""Brace expansion the way bash does it, before any permission check looks at a word.

To the parser ``sort {-o,F} x`` is one word; bash makes it ``sort -o F x`` (a write).
``{rm,x} f`` runs ``rm x f``, ``/{pr,}oc/self/envir{o,}n`` names ``/proc/self/environ``, and
``.git/confi{g..g}`` is ``.git/config``. So every word is expanded first and the checks —
read-only classification, deny and ask rules, the safety list — see what bash will run.

The expansion itself is `bracex` (bash's rules: ``{a,b}``, nesting, ``{1..10..3}``,
``{a..e}``, zero padding, a brace without a comma or a valid sequence is literal). What
bracex does not know is shell quoting, so this module first turns the word's *source text*
into bracex's input: characters that are quoted (``'…'``, ``"…"``, ``\\x``) or part of an
expansion (``${var}``, ``$(…)``, backticks — bash never brace-expands those) are escaped, so
only bash's unquoted braces are special. Verified against real bash in the tests.

Bounded: a word or command that expands to more than `MAX_BRACE_WORDS` words raises
`BraceOverflow` (``{1..1000000}`` cannot stall a permission check); the caller then treats the
command as one nobody can check.
"""

from __future__ import annotations

import re

import bracex

from ...errors import BraceOverflow, BraceUnreadable

__all__ = ["MAX_BRACE_WORDS", "expand_braces"]

MAX_BRACE_WORDS = 1000
"""More words than this from one command's brace expansion: the command is not checked."""


def expand_braces(source: str, limit: int = MAX_BRACE_WORDS) -> tuple[str, ...] | None:
    """The words bash makes of one word's source text by brace expansion and quote removal, or
    None when the parser's own word stands (no braces or quotes; ANSI-C quoting without braces).

    Quote removal is done here too for every quoted word: the parser gets adjacent quoted
    pieces wrong (it reads ``'r'm'x'`` as ``r'm'x``; bash as ``rmx``)."""
    if not _QUOTING.search(source):
        return None
    try:
        pattern, active, ansi = _bracex_input(source)
    except BraceUnreadable:
        if "{" in source:
            raise
        return None
    if ansi:
        if active:
            raise BraceUnreadable("ANSI-C or locale quoting next to braces")
        return None
    if not active:
        return (_unescape(pattern),)
    try:
        return tuple(bracex.expand(pattern, keep_escapes=False, limit=limit))
    except bracex.ExpansionLimitException:
        raise BraceOverflow(f"brace expansion of {source[:60]!r} yields more than {limit} words") from None


_QUOTING = re.compile(r"[{'\"\\]")


def _unescape(pattern: str) -> str:
    """The literal text of a bracex input without braces (every ``\\x`` is ``x``)."""
    return re.sub(r"\\(.)", r"\1", pattern, flags=re.DOTALL)


def _backslash_each(text: str) -> str:
    return "".join("\\" + c for c in text)


def _bracex_input(source: str) -> tuple[str, bool, bool]:
    """bracex input for ``source``, whether an unquoted ``{`` is in it, and whether it has
    ANSI-C or locale quoting (``$'…'``, ``$"…"``: left to the parser)."""
    out: list[str] = []
    active = ansi = False
    i, n = 0, len(source)
    while i < n:
        c = source[i]
        if c == "\\":
            if i + 1 < n and source[i + 1] == "\n":  # line continuation
                i += 2
                continue
            out.append(_backslash_each(source[i + 1 : i + 2]))
            i += 2
        elif c == "'":
            end = source.find("'", i + 1)
            if end < 0:
                raise BraceUnreadable("unterminated single quote")
            out.append(_backslash_each(source[i + 1 : end]))
            i = end + 1
        elif c == '"':
            text, i = _double_quoted(source, i + 1)
            out.append(_backslash_each(text))
        elif c == "$" and i + 1 < n and source[i + 1] in "'\"":
            ansi = True
            out.append("\\$")
            i += 1
        elif c == "$" and i + 1 < n and source[i + 1] in "({":
            end = _matching(source, i + 1)
            out.append(_backslash_each(source[i:end]))
            i = end
        elif c == "`":
            end = source.find("`", i + 1)
            if end < 0:
                raise BraceUnreadable("unterminated backtick")
            out.append(_backslash_each(source[i : end + 1]))
            i = end + 1
        elif c == "$":
            out.append("\\$")
            i += 1
        else:
            active = active or c == "{"
            out.append(c)
            i += 1
    return "".join(out), active, ansi


def _double_quoted(source: str, i: int) -> tuple[str, int]:
    """The literal text of a double-quoted string starting after its ``"``, and the index after
    its closing quote (expansions inside stay as text: they are never brace-expanded)."""
    text: list[str] = []
    n = len(source)
    while i < n:
        c = source[i]
        if c == '"':
            return "".join(text), i + 1
        if c == "\\" and i + 1 < n:
            nxt = source[i + 1]
            if nxt == "\n":
                i += 2
                continue
            text.append(nxt if nxt in '$`"\\' else "\\" + nxt)
            i += 2
        elif c == "$" and i + 1 < n and source[i + 1] in "({":
            end = _matching(source, i + 1)
            text.append(source[i:end])
            i = end
        else:
            text.append(c)
            i += 1
    raise BraceUnreadable("unterminated double quote")


def _matching(source: str, i: int) -> int:
    """Index after the bracket that closes ``source[i]`` (``(`` or ``{``), skipping quotes."""
    pairs = {"(": ")", "{": "}"}
    stack = [pairs[source[i]]]
    i += 1
    n = len(source)
    while i < n and stack:
        c = source[i]
        if c == "\\":
            i += 2
            continue
        if c == "'" and stack[-1] == ")":
            end = source.find("'", i + 1)
            if end < 0:
                break
            i = end + 1
            continue
        if c in pairs:
            stack.append(pairs[c])
        elif c == stack[-1]:
            stack.pop()
        i += 1
    if stack:
        raise BraceUnreadable("unterminated expansion")
    return i
