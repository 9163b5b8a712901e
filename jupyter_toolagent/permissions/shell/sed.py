"""Whether a ``sed`` script runs commands.

GNU sed can run a shell command from its script: the ``e`` command (``sed '1e rm -rf x' f``)
and the ``e`` flag of ``s``, which runs the pattern space after the substitution
(``sed 's/.*/rm -rf x/e' f``). A deny rule such as ``Bash(rm:*)`` cannot see such a command, so
a sed script that may run one is program text like ``awk '{system(…)}'`` (see
`shell.interpreters.inline_program`).

The script is read the way sed reads it — addresses, then one command letter and its
arguments — rather than searched for the letter ``e``, which is in almost every script
(``s/one/two/``). Anything this reader does not understand counts as running commands: a
wrong guess then costs a question to the person, never a silent pass.
"""

from __future__ import annotations

from typing import Sequence

from .options import OptionSpec, option_values, scan_options

__all__ = ["sed_runs_commands", "sed_script_files"]

_SPEC = OptionSpec(wanted="e", wanted_long=("--expression",), valued="fl",
                   valued_long=("--file", "--line-length"), attached="i", abbreviations=True)
_FILE_SPEC = OptionSpec(wanted="f", wanted_long=("--file",), valued="el",
                        valued_long=("--expression", "--line-length"), attached="i", abbreviations=True)
_NO_ARGUMENT = frozenset("=dDgGhHnNpPxzFlLqQ{}")
"""Commands without a text argument (``l``, ``q``, ``Q`` take an optional number)."""
_REST_OF_LINE = frozenset("aicrRwW")
"""Commands whose argument (text or a file name) runs to the end of the line."""
_LABELLED = frozenset(":btTv")
"""Commands whose argument (a label, or ``v``'s version) ends at ``;`` or the end of the line."""
_S_FLAGS = frozenset("gpiImM0123456789")
_END = frozenset(";\n}#")


class _Unreadable(Exception):
    """The script is not one this reader understands."""


def sed_runs_commands(words: Sequence[str]) -> bool:
    """Whether ``sed`` with these arguments may run a shell command (``e``, ``s///e``)."""
    if _sandboxed(words):  # sed refuses e, r and w in sandbox mode
        return False
    scripts = option_values(words, _SPEC)
    if not scripts and not sed_script_files(words):
        first = scan_options(words, _SPEC).first_operand
        scripts = [words[first]] if first is not None else []
    try:
        return any(_runs(script) for script in scripts)
    except (_Unreadable, IndexError, ValueError):
        return True


def _sandboxed(words: Sequence[str]) -> bool:
    """``--sandbox`` given as an option (not after ``--``, not as the value of ``-e``/``-f``)."""
    skip = False
    for word in words[1:]:
        if skip:
            skip = False
        elif word == "--":
            return False
        elif word == "--sandbox":
            return True
        elif word in ("-e", "-f", "-l", "--expression", "--file", "--line-length"):
            skip = True
    return False


def sed_script_files(words: Sequence[str]) -> list[str]:
    """The files ``sed -f FILE`` reads its script from (``-`` or ``/dev/stdin``: the input)."""
    return option_values(words, _FILE_SPEC)


def _runs(script: str) -> bool:
    i, n = 0, len(script)
    while True:
        i = _skip(script, i, " \t\n;")
        if i >= n:
            return False
        i = _address(script, i)
        if i < n and script[i] == ",":
            i = _address(script, _skip(script, i + 1, " \t"))
        i = _skip(script, i, " \t!")
        if i >= n:
            raise _Unreadable
        command, i = script[i], i + 1
        if command == "e":
            return True
        if command == "s":
            i = _delimited(script, i, parts=2)
            while i < n and script[i] in _S_FLAGS:
                i += 1
            if i < n and script[i] == "e":
                return True
            if i < n and script[i] == "w":  # a file name to the end of the line
                i = _line_end(script, i)
        elif command == "y":
            i = _delimited(script, i, parts=2, regex=False)
        elif command in _REST_OF_LINE or command == "#":
            i = _line_end(script, i)
        elif command in _LABELLED:
            i = _label_end(script, i)
        elif command in _NO_ARGUMENT:
            i = _skip(script, i, "0123456789 \t") if command in "lLqQ" else i
        else:
            raise _Unreadable
        i = _skip(script, i, " \t")
        if i < n and script[i] not in _END and command not in "{}":
            raise _Unreadable


def _skip(script: str, i: int, chars: str) -> int:
    while i < len(script) and script[i] in chars:
        i += 1
    return i


def _address(script: str, i: int) -> int:
    """After one address (``3``, ``$``, ``1~2``, ``+4``, ``/re/I``, ``\\%re%``), or ``i``."""
    n = len(script)
    if i < n and script[i] in "+~":
        i += 1
    if i < n and script[i].isdigit():
        i = _skip(script, i, "0123456789")
        if i < n and script[i] == "~":
            i = _skip(script, i + 1, "0123456789")
        return i
    if i < n and script[i] == "$":
        return i + 1
    if i < n and script[i] in "/\\":  # /re/ or \cREc
        i = _delimited(script, i + 1 if script[i] == "\\" else i, parts=1)
        return _skip(script, i, "IM")
    return i


def _delimited(script: str, i: int, parts: int, regex: bool = True) -> int:
    """After ``parts`` parts delimited by the character at ``i`` (``/a/b/`` for two). In the
    first part, a regular expression, the delimiter does not end a bracket expression
    (GNU sed reads ``s/[/]/x/`` as one ``/`` replaced by ``x``)."""
    delimiter = script[i]
    if delimiter in "\n\\":
        raise _Unreadable
    i += 1
    for part in range(parts):
        while script[i] != delimiter:
            if script[i] == "[" and regex and part == 0:
                i = _bracket_end(script, i)
            else:
                i += 2 if script[i] == "\\" else 1
        i += 1
    return i


def _bracket_end(script: str, i: int) -> int:
    """After the bracket expression opening at ``i`` (``[^]a-z[:digit:]/]``)."""
    i += 1
    if script[i] == "^":
        i += 1
    if script[i] == "]":
        i += 1
    while script[i] != "]":
        if script[i] == "[" and script[i + 1] in ":=.":
            i = script.index(script[i + 1] + "]", i + 2) + 2  # ValueError: unterminated
        else:
            i += 1
    return i + 1


def _line_end(script: str, i: int) -> int:
    """After a text or file-name argument: the end of the line (a ``\\`` continues it)."""
    while i < len(script) and script[i] != "\n":
        i += 2 if script[i] == "\\" else 1
    return i


def _label_end(script: str, i: int) -> int:
    while i < len(script) and script[i] not in ";\n":
        i += 1
    return i
