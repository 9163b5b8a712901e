"""Programs that run code written on their command line or read from their input.

A deny rule such as ``Bash(rm:*)`` can only see shell commands. Three kinds of text hide them:

* **shell command lines** — ``sh -c 'rm x'``, ``su -c …`` (`shell_scripts`): these are parsed
  and looked through like any command (see `shell.unwrap`);
* **program text for another language** — ``python3 -c``, ``perl -e``/``-E``, ``ruby -e``,
  ``node -e``/``-p``, ``php -r``, ``lua -e``, ``Rscript -e``, ``julia -e``, ``osascript -e``,
  ``dc -e``, ``expect -c``, ``deno eval``, an ``awk`` program that calls ``system()`` or opens a
  pipe, a ``sed`` script with an ``e`` command or an ``s///e`` (`shell.sed`), ``vim
  -c``/``+cmd``/``--cmd``, ``gdb -ex``, ``emacs --eval``, ``make --eval`` (`inline_program`): no
  parser here can tell what such code runs, so the engine treats the command as opaque — a
  person decides while content deny/ask rules exist, whatever the mode or an allow rule for
  the interpreter says (`shell.rules.opaque_reason`);
* **a program read from the input** — ``bash`` with no script, ``python3 -`` or a bare
  ``python3``, ``source /dev/stdin``, ``at``, ``batch``, ``crontab -``, ``ed``, ``ex``,
  ``script`` without ``-c`` (`reads_program_from_input`): opaque as well; a here-string or
  pipe feeding it is only searched as text.

Known limit: a program run from a *file* (``python3 script.py``, ``perl x.pl``, ``awk -f
prog.awk``, ``sed -f x.sed``, ``bash script.sh``, ``source env.sh``, ``vim -S x.vim``) is judged by
its command line only, as before; what the file does is not checked. Rules for interpreters should be written
with that in mind (deny ``Bash(python3:*)`` rather than hope a ``Bash(rm:*)`` rule sees inside
a script).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from .options import OptionSpec, scan_options
from .sed import sed_runs_commands, sed_script_files

__all__ = ["SHELLS", "inline_program", "reads_program_from_input", "shell_scripts"]

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "ash", "su", "runuser", "csh", "tcsh",
                    "yash", "posh"})
"""``sh -c '…'`` runs its string; without ``-c`` and a script a shell reads commands from stdin."""


@dataclass(frozen=True)
class _Interpreter:
    spec: OptionSpec
    """``wanted``: options whose value is program text."""
    program_operand: bool = False
    """The first operand is the program text (awk), not a script file."""
    reads_input: bool = True
    """With no program text and no script, the program is read from stdin."""


_PYTHON = _Interpreter(OptionSpec(wanted="c", valued="WX", stops="m"))
_AWK = _Interpreter(
    OptionSpec(wanted="e", wanted_long=("--source",), valued="Fvil", stops="f",
               valued_long=("--field-separator", "--assign", "--include", "--load", "--file"), abbreviations=True),
    program_operand=True, reads_input=False,
)
_INTERPRETERS: dict[str, _Interpreter] = {
    "perl": _Interpreter(OptionSpec(wanted="eE", attached="iIMmxl0CdDV")),
    "ruby": _Interpreter(OptionSpec(wanted="e", valued="rICE", attached="Wx0FiTK")),
    "node": _Interpreter(OptionSpec(wanted="ep", wanted_long=("--eval", "--print"), valued="r",
                                    valued_long=("--require", "--import", "--loader", "--input-type"))),
    "bun": _Interpreter(OptionSpec(wanted="ep", wanted_long=("--eval", "--print")), reads_input=False),
    "php": _Interpreter(OptionSpec(wanted="rBRE", wanted_long=("--run",), valued="cdz", stops="f")),
    "lua": _Interpreter(OptionSpec(wanted="e", valued="l")),
    "Rscript": _Interpreter(OptionSpec(wanted="e"), reads_input=False),
    "R": _Interpreter(OptionSpec(wanted="e")),
    "julia": _Interpreter(OptionSpec(wanted="eE", wanted_long=("--eval", "--print"), valued="JLtp")),
    "osascript": _Interpreter(OptionSpec(wanted="e")),
    "expect": _Interpreter(OptionSpec(wanted="c", stops="f")),
    "dc": _Interpreter(OptionSpec(wanted="e", wanted_long=("--expression",), stops="f")),
    "tclsh": _Interpreter(OptionSpec()),
    "wish": _Interpreter(OptionSpec()),
    "irb": _Interpreter(OptionSpec(valued="rI")),
    **{name: _AWK for name in ("awk", "gawk", "mawk", "nawk")},
    "nodejs": _Interpreter(OptionSpec(wanted="ep", wanted_long=("--eval", "--print"), valued="r")),
    "luajit": _Interpreter(OptionSpec(wanted="e", valued="l")),
}
_PYTHON_NAME = re.compile(r"^(python|pypy)(\d+(\.\d+)*)?[a-z]?$")
_SED = frozenset({"sed", "gsed"})
_VIM = frozenset({"vim", "vi", "nvim", "gvim", "view", "vimdiff", "nvim-qt", "evim", "gview"})
_EX = frozenset({"ex", "ed", "red"})
"""Editors that read their commands from stdin."""
_AWK_RUNS = re.compile(r"system\s*\(|\|")
_VIM_HARMLESS = re.compile(r"^\d*$")
_INFO_OPTIONS = frozenset({"--version", "-V", "-v", "--help", "-h"})
_STDIN_FILES = frozenset({"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "-"})


def _interpreter(name: str) -> _Interpreter | None:
    return _PYTHON if _PYTHON_NAME.match(name) else _INTERPRETERS.get(name)


def shell_scripts(name: str, words: Sequence[str]) -> list[str]:
    """The command line a shell runs from its arguments (``sh -c CMD``, ``bash -xc CMD``,
    ``su --command=CMD``), or ``eval``'s joined arguments."""
    if name == "eval":
        return [" ".join(words[1:])] if len(words) > 1 else []
    for i, word in enumerate(words[1:], start=1):
        if word.startswith("--command="):
            return [word.split("=", 1)[1]]
        if word == "--command" and i + 1 < len(words):
            return [words[i + 1]]
        if word.startswith("-") and not word.startswith("--") and "c" in word[1:] and i + 1 < len(words):
            return [words[i + 1]]
    return []


def inline_program(words: Sequence[str]) -> str | None:
    """A description of the program text another language runs from these words, or None."""
    if not words:
        return None
    name = words[0].rsplit("/", 1)[-1]
    interpreter = _interpreter(name)
    if interpreter is not None:
        scan = scan_options(words, interpreter.spec)
        if scan.values:
            return f"`{name}` runs the program text given on its command line"
        if interpreter.program_operand and scan.first_operand is not None:
            if _AWK_RUNS.search(words[scan.first_operand]):
                return f"the `{name}` program runs commands (system() or a pipe)"
        return None
    if name == "deno" and len(words) > 1 and words[1] == "eval":
        return "`deno eval` runs the program text given on its command line"
    if name in _SED:
        return f"the `{name}` script runs commands (`e`)" if sed_runs_commands(words) else None
    if name in _VIM:
        return _vim_commands(name, words)
    if name in ("gdb", "emacs", "pwsh", "powershell", "make", "gmake"):
        return _long_code_options(name, words)
    return None


def _vim_commands(name: str, words: Sequence[str]) -> str | None:
    for i, word in enumerate(words[1:], start=1):
        if word in ("-c", "--cmd") and i + 1 < len(words) or (
            word.startswith("+") and not _VIM_HARMLESS.match(word[1:])
        ):
            return f"`{name}` runs editor commands given on its command line (they can run programs)"
    return None


_LONG_CODE = {
    "gdb": ("-ex", "--ex", "-iex", "--iex", "-eval-command", "--eval-command", "-init-eval-command",
            "--init-eval-command"),
    "emacs": ("-eval", "--eval", "-execute", "--execute"),
    "make": ("--eval", "-E"),
    "pwsh": ("-c", "-command", "-commandwithargs", "-cwa", "-encodedcommand", "-e", "-ec", "-enc"),
}


def _long_code_options(name: str, words: Sequence[str]) -> str | None:
    program = {"powershell": "pwsh", "gmake": "make"}.get(name, name)
    options = _LONG_CODE[program]
    for word in words[1:]:
        option = word.split("=", 1)[0]
        if (option.lower() if program == "pwsh" else option) in options:  # PowerShell ignores case
            return f"`{name}` runs the code given on its command line"
    return None


def reads_program_from_input(words: Sequence[str]) -> bool:
    """Whether these words run a program they read from stdin (a pipe, here-string or file
    redirected in — its text is not a command the rules can see)."""
    if not words:
        return False
    name = words[0].rsplit("/", 1)[-1]
    rest = words[1:]
    if any(w in _INFO_OPTIONS for w in rest):
        return False
    if name in SHELLS:
        return not shell_scripts(name, words) and all(w.startswith("-") for w in rest)
    interpreter = _interpreter(name)
    if interpreter is not None:
        if not interpreter.reads_input:
            return False
        scan = scan_options(words, interpreter.spec)
        return not scan.values and (scan.first_operand is None or words[scan.first_operand] == "-")
    if name in ("source", "."):
        return bool(rest) and rest[0] in _STDIN_FILES
    if name in _SED:
        return any(file in _STDIN_FILES for file in sed_script_files(words))
    if name in ("at", "batch"):
        return not any(w.startswith("-") and any(c in w for c in "flrdc") for w in rest)
    if name == "crontab":
        return not rest or rest[-1] == "-"
    if name == "script":
        return not any(w.startswith("--command") or (w.startswith("-") and not w.startswith("--") and "c" in w)
                       for w in rest)
    return name in _EX or (name in _VIM and any(w in ("-e", "-E", "-es", "-Es") for w in rest))
