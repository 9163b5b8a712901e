"""What a git command runs besides git (deny rules look through it, see `shell.unwrap`).

Git runs other commands in ways the command text shows:

* configuration given on the command line: ``git -c core.pager=CMD log``, ``-c alias.x='!CMD'``
  and every other key whose value is a command — editors, pagers, ``core.sshCommand``,
  ``core.fsmonitor``, credential helpers, diff and merge drivers, filters …;
* subcommands and options that take a command: ``submodule foreach CMD``, ``rebase --exec CMD``
  (``-x``), ``bisect run CMD…``, ``filter-branch --tree-filter CMD`` and the other filters,
  ``difftool --extcmd``, ``fetch --upload-pack``, ``push --receive-pack``, ``grep -OCMD``,
  ``send-email --to-cmd``, and ``ext::`` remote URLs;
* an alias without ``!`` is a git command line of its own (``-c alias.x='submodule foreach …'``).

Git accepts unique abbreviations of long options (``--exe`` for ``--exec``); they count too.

What git runs from places the text does not show — hooks, a configuration file it includes, an
``--exec-path`` or ``core.hooksPath`` directory, ``--config-env`` values taken from the
environment — cannot be checked; `git_opaque_reason` names those.
"""

from __future__ import annotations

import os
import shlex
from typing import Sequence

from .options import OptionSpec, may_abbreviate, option_values

__all__ = ["git_opaque_reason", "git_runs", "git_subcommand_index", "repository_of", "runs_in_own_repository"]

_GLOBAL_WITH_VALUE = frozenset({"-c", "-C", "--git-dir", "--work-tree", "--namespace", "--config-env",
                                "--super-prefix", "--list-cmds"})

_COMMAND_SECTIONS = frozenset({"alias", "pager"})
_COMMAND_KEYS = frozenset(
    {"pager", "editor", "sshcommand", "fsmonitor", "askpass", "gitproxy", "external", "helper", "program",
     "textconv", "command", "driver", "clean", "smudge", "process", "cmd", "difffilter", "packobjectshook",
     "tocmd", "cccmd", "sendmailcmd", "headercmd", "uploadpack", "receivepack", "browser", "proxy", "tool"}
)
"""Last components of configuration keys whose value is a command (``diff.x.textconv``)."""

_FILE_KEYS = frozenset({("core", "hookspath"), ("include", "path"), ("includeif", "path")})
"""Keys that make git run or read files the command does not show."""

_FILTERS = ("--setup", "--env-filter", "--tree-filter", "--index-filter", "--parent-filter", "--msg-filter",
            "--commit-filter", "--tag-name-filter")
_SUBCOMMAND_OPTIONS: dict[str, OptionSpec] = {
    "rebase": OptionSpec(wanted="x", wanted_long=("--exec",), abbreviations=True),
    "difftool": OptionSpec(wanted="x", wanted_long=("--extcmd",), abbreviations=True),
    "fetch": OptionSpec(wanted_long=("--upload-pack",), abbreviations=True),
    "pull": OptionSpec(wanted_long=("--upload-pack",), abbreviations=True),
    "clone": OptionSpec(wanted="u", wanted_long=("--upload-pack",), abbreviations=True),
    "ls-remote": OptionSpec(wanted_long=("--upload-pack", "--exec"), abbreviations=True),
    "archive": OptionSpec(wanted_long=("--exec",), abbreviations=True),
    "push": OptionSpec(wanted_long=("--receive-pack", "--exec"), abbreviations=True),
    "send-email": OptionSpec(wanted_long=("--to-cmd", "--cc-cmd", "--sendmail-cmd", "--header-cmd"),
                             abbreviations=True),
    "filter-branch": OptionSpec(wanted_long=_FILTERS),
    "daemon": OptionSpec(wanted_long=("--access-hook",), abbreviations=True),
    "instaweb": OptionSpec(wanted="db", wanted_long=("--httpd", "--browser"), abbreviations=True),
}


def git_subcommand_index(words: Sequence[str]) -> int:
    """Index of the subcommand after git's global options (``len(words)`` when there is none)."""
    i = 1
    while i < len(words) and words[i].startswith("-"):
        i += 2 if words[i] in _GLOBAL_WITH_VALUE else 1
    return min(i, len(words))


def _configs(words: Sequence[str], end: int) -> list[tuple[str, str]]:
    """``(key, value)`` of each ``-c key=value`` among the global options."""
    found = []
    for i in range(1, end - 1):
        if words[i] == "-c" and "=" in words[i + 1]:
            key, value = words[i + 1].split("=", 1)
            found.append((key, value))
    return found


def _key_parts(key: str) -> list[str]:
    return key.lower().split(".")


def _runs_value(key: str) -> bool:
    parts = _key_parts(key)
    return len(parts) >= 2 and (parts[0] in _COMMAND_SECTIONS or parts[-1] in _COMMAND_KEYS)


def git_runs(words: Sequence[str]) -> tuple[list[str], list[tuple[str, ...]]]:
    """What a git command runs: command lines for a shell, and argument lists run directly."""
    scripts: list[str] = []
    commands: list[tuple[str, ...]] = []
    sub = git_subcommand_index(words)
    for key, value in _configs(words, sub):
        if _key_parts(key)[0] == "alias" and not value.startswith("!"):
            try:
                commands.append(("git", *shlex.split(value)))
            except ValueError:
                scripts.append(value)
        elif _runs_value(key):
            scripts.append(value[1:] if value.startswith("!") else value)
    scripts.extend(_remote_helper_commands(words))
    if sub >= len(words):
        return scripts, commands
    name, rest = words[sub], tuple(words[sub + 1 :])
    spec = _SUBCOMMAND_OPTIONS.get(name)
    if spec is not None:
        scripts.extend(option_values(rest, spec, start=0))
    if name == "grep":
        for i, w in enumerate(rest):
            if w.startswith("-O") and len(w) > 2:
                scripts.append(w[2:])
            elif w.startswith("--") and may_abbreviate(w.split("=", 1)[0], "--open-files-in-pager"):
                scripts.append(w.split("=", 1)[1] if "=" in w else (rest[i + 1] if i + 1 < len(rest) else ""))
    elif name == "bisect" and "run" in rest:
        commands.append(rest[rest.index("run") + 1 :])
    elif name == "submodule" and "foreach" in rest:
        after = rest[rest.index("foreach") + 1 :]
        while after and after[0] in ("--recursive", "-q", "--quiet"):
            after = after[1:]
        if after:
            scripts.append(" ".join(after))
    return scripts, commands


def _remote_helper_commands(words: Sequence[str]) -> list[str]:
    """``ext::CMD ARGS`` remotes run CMD (``% `` is an escaped space, ``%%`` a percent sign)."""
    return [w[5:].replace("%%", "\0").replace("% ", " ").replace("\0", "%") for w in words if w.startswith("ext::")]


def git_opaque_reason(words: Sequence[str]) -> str | None:
    """Why the text cannot say what this git command runs, or None."""
    sub = git_subcommand_index(words)
    for i in range(1, sub):
        word = words[i]
        if word.startswith("--exec-path="):
            return "`--exec-path` makes git run its programs from another directory"
        if word == "--config-env" or word.startswith("--config-env="):
            spec = word.split("=", 1)[1] if "=" in word else (words[i + 1] if i + 1 < len(words) else "")
            key = spec.split("=", 1)[0]
            parts = _key_parts(key)
            if _runs_value(key) or (parts[0], parts[-1]) in _FILE_KEYS:
                return f"`--config-env` takes the value of {key} from the environment"
    for key, _ in _configs(words, sub):
        parts = _key_parts(key)
        if (parts[0], parts[-1]) in _FILE_KEYS:
            return f"`-c {key}=…` makes git run or read files the command does not show"
    return None


# --- whose configuration a git command reads -------------------------------------------------------

def repository_of(directory: str) -> str | None:
    """The repository git finds from ``directory`` (the nearest ``.git`` entry above it, or a
    bare repository it is inside), resolved; None outside any repository."""
    current = os.path.realpath(directory)
    while True:
        dot_git = os.path.join(current, ".git")
        if os.path.lexists(dot_git):
            return os.path.realpath(dot_git)
        if all(os.path.exists(os.path.join(current, name)) for name in ("HEAD", "objects", "refs")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def runs_in_own_repository(words: Sequence[str], directory: str | None, own_directory: str | None) -> bool:
    """Whether ``git …`` run in ``directory`` uses the repository of ``own_directory`` (the
    working directory of the session: the user's own repository), following ``-C``.

    Git runs programs named in the repository's own configuration (``core.fsmonitor``,
    ``core.pager``, diff drivers …) even for ``git status``, so a repository someone else wrote
    (a downloaded or cloned directory next to the project, a path given with ``-C``,
    ``--git-dir``) is not read-only to enter. The working directory's repository is the user's
    choice — the session works there — and writes to its ``.git/`` always ask (`safety`).
    Without a directory, a command that names another directory cannot be judged: False."""
    target = directory
    for i in range(1, git_subcommand_index(words)):
        word = words[i]
        if word in ("--git-dir", "--work-tree") or word.startswith(("--git-dir=", "--work-tree=")):
            return False
        if word == "-C" and i + 1 < len(words):
            if target is None and not os.path.isabs(os.path.expanduser(words[i + 1])):
                return False
            target = os.path.join(target or "/", os.path.expanduser(words[i + 1]))
    if target == directory and directory == own_directory:
        return True
    if target is None or own_directory is None:
        return target is None and directory is None and own_directory is None
    return repository_of(target) == repository_of(own_directory)
