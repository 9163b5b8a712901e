"""Every command a shell command may run, for deny and ask rules (SPEC §5.2).

Deny and ask rules narrow what may run, so they must see a command however it is wrapped:
``sudo rm``, ``xargs rm``, ``env -S 'rm x'``, ``sh -c 'rm x'``, ``eval``, ``trap 'rm x' EXIT``,
``watch 'rm x'``, ``flock L -c 'rm x'``, ``script -c 'rm x'``, ``find -exec rm``, ``tar
--to-command='rm x'``, ``rsync -e CMD``, ``zip -TT CMD``, ``ssh host 'rm x'`` (the remote command:
the host may be this machine), ``git rebase --exec 'rm x'`` (see `shell.git`).
`unwrap` lists every word list the command may run — over-inclusive on purpose: a runner's
later words are each tried as the start of a command, and a single word that holds a command
line is parsed as one.

It also says when some of what runs is a *string* (a command line in an option, a program read
from a pipe or here-string, a variable that names a program such as ``PAGER=…``): the rules then
also search the whole text, since quoting inside quoting is where a parse is least trustworthy.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice
from typing import Iterator, Sequence

from .parse import ParsedCommand, try_parse
from .git import git_runs, git_subcommand_index
from .interpreters import SHELLS, inline_program, reads_program_from_input, shell_scripts
from .options import OptionSpec, option_values, scan_options
from .runners import RUNNER_GRAMMARS, runner_commands

__all__ = ["MAX_CANDIDATES", "RUNNERS", "Unwrapped", "unwrap"]

RUNNERS = frozenset(
    {"sudo", "doas", "xargs", "command", "builtin", "exec", "nohup", "time", "nice", "timeout", "env", "stdbuf",
     "ionice", "chrt", "taskset", "setsid", "unbuffer", "watch", "flock", "strace", "ltrace", "nsenter", "chroot",
     "runuser", "caffeinate", "busybox", "parallel", "firejail", "then", "do", "!", "unshare", "systemd-run",
     "pkexec", "setpriv", "prlimit", "numactl", "cgexec", "faketime", "proxychains", "proxychains4", "torsocks",
     "valgrind", "chpst", "bwrap", "dbus-run-session", "xvfb-run", "chronic", "ifne", "sem", "nocache",
     "eatmydata", "fakeroot", "catchsegv", "tsp", "nq", "daemonize", "ssh-agent", "screen", "tmux", "dtach",
     "entr", "sg", "cpulimit", "trickle", "systemd-inhibit", "flatpak-spawn", "distrobox-enter",
     "toolbox", "sbatch", "srun", "mpirun", "with-lock", "lockf", "timelimit", "retry", "doit"}
) | frozenset(RUNNER_GRAMMARS)
"""Commands that run the command named in their later words (looked through by deny rules);
those with a grammar of their own (`shell.runners`) are also read by it."""

_SCRIPT_OPTIONS: dict[str, OptionSpec] = {
    "env": OptionSpec(wanted="S", wanted_long=("--split-string",), valued="uC", valued_long=("--unset", "--chdir"), abbreviations=True),
    "flock": OptionSpec(wanted="c", wanted_long=("--command",), valued="wE", valued_long=("--timeout", "--conflict-exit-code"), abbreviations=True),
    "script": OptionSpec(wanted="c", wanted_long=("--command",), valued="EIOBTm",
                         valued_long=("--echo", "--log-in", "--log-out", "--log-io", "--log-timing", "--logging-format"), abbreviations=True),
    "tar": OptionSpec(wanted="IF", wanted_long=("--to-command", "--use-compress-program", "--rsh-command",
                                                 "--info-script", "--new-volume-script", "--checkpoint-action"),
                      valued="fbCgHKLNTVX", abbreviations=True),
    "rsync": OptionSpec(wanted="e", wanted_long=("--rsh",), valued="fBTM"),
    "man": OptionSpec(wanted="PH", wanted_long=("--pager", "--html"), abbreviations=True),
    "sort": OptionSpec(wanted_long=("--compress-program",), valued="okStT", abbreviations=True),
    "nc": OptionSpec(wanted="ec", wanted_long=("--exec", "--sh-exec", "--lua-exec"), abbreviations=True),
    "sbatch": OptionSpec(wanted_long=("--wrap",)),
    "zip": OptionSpec(wanted_long=("--unzip-command",), valued="bnt", valued_long=("--temp-path", "--suffixes")),
    "ssh": OptionSpec(wanted="o", valued="bcDEeFIiJLlmOpQRSWw"),
    "scp": OptionSpec(wanted="oS", valued="cFiJlPD"),
    "sftp": OptionSpec(wanted="oS", valued="BbcDFiJlPRs"),
}
"""Options whose value is a command line (``flock -c CMD``, ``tar --to-command=CMD``)."""
_SCRIPT_OPTIONS.update(ncat=_SCRIPT_OPTIONS["nc"], netcat=_SCRIPT_OPTIONS["nc"], bsdtar=_SCRIPT_OPTIONS["tar"],
                       gtar=_SCRIPT_OPTIONS["tar"])

_SSH_COMMAND_KEYS = frozenset({"proxycommand", "localcommand", "knownhostscommand", "remotecommand"})
_SOCAT_EXEC = re.compile(r"^(exec|system):", re.IGNORECASE)
_COMMAND_LINE_WORD = re.compile(r"[\s;&|`$<>()]")
"""A word that holds a command line rather than a program name."""
_MAX_DEPTH = 4
MAX_CANDIDATES = 2000
_UNKNOWN = ("\0unknown",)
"""Yielded where unwrapping stops (too deep, an inner script that does not parse)."""
_TEXT = ("\0text",)
"""Yielded where a string runs as commands: the caller also searches the whole text."""
_SOURCE = "\0source"
"""First word of ``(_SOURCE, text)``: a part's source text, for wildcard rules."""
_MARKERS = (_UNKNOWN, _TEXT)


@dataclass(frozen=True)
class Unwrapped:
    commands: tuple[tuple[str, ...], ...]
    """The word lists the command may run."""
    texts: tuple[tuple[str], ...]
    """The source text of each part from its command word on (``(text,)``, for wildcard rules)."""
    complete: bool
    """False when unwrapping stopped (too deep, too many, an inner command line that does not
    parse): the caller must fall back to searching the text."""
    runs_text: bool
    """Some string in it runs as commands (see the module docstring)."""

    @property
    def candidates(self) -> tuple[tuple[str, ...], ...]:
        """What a rule is matched against: the commands and the source texts."""
        return self.commands + self.texts


@lru_cache(maxsize=1024)
def unwrap(command: str) -> Unwrapped | None:
    """What ``command`` may run, or None when it does not parse. The unwrapping is lazy and
    bounded by `MAX_CANDIDATES`, so ``sudo sudo sudo …`` cannot blow up."""
    parsed = try_parse(command)
    if parsed is None:
        return None
    found = tuple(islice(_candidates(parsed, 0), MAX_CANDIDATES + 1))
    return Unwrapped(
        commands=tuple(w for w in found if w not in _MARKERS and w[0] != _SOURCE),
        texts=tuple((w[1],) for w in found if w[0] == _SOURCE),
        complete=len(found) <= MAX_CANDIDATES and _UNKNOWN not in found,
        runs_text=_TEXT in found,
    )


def _candidates(parsed: ParsedCommand, depth: int) -> Iterator[tuple[str, ...]]:
    for part in parsed.commands:
        if part.sets_dangerous_variable:
            yield _TEXT  # `PAGER='…' git log`: the value is a command the parse does not list
        yield from _run_candidates(part.core_words, depth)
        if part.core_text:
            yield (_SOURCE, part.core_text)


def _script(text: str, depth: int) -> Iterator[tuple[str, ...]]:
    """The commands of a command line run by a shell."""
    if not text.strip():
        return
    yield _TEXT
    inner = try_parse(text)
    if inner is None:
        yield _UNKNOWN
        return
    yield from _candidates(inner, depth + 1)


def _run_candidates(words: tuple[str, ...], depth: int) -> Iterator[tuple[str, ...]]:
    """``words`` and every command they may run, command words also as their base name."""
    if not words:
        return
    if depth > _MAX_DEPTH:
        yield _UNKNOWN
        return
    name = words[0].rsplit("/", 1)[-1].lstrip("\\")
    yield words
    if name != words[0]:
        yield (name, *words[1:])
    if reads_program_from_input(words) or inline_program(words) is not None:
        yield _TEXT
    if name in RUNNER_GRAMMARS:  # `uv run CMD`, `nix-shell --run CMD`, `start-stop-daemon --exec PROG`
        commands, scripts = runner_commands(name, words)
        for command in commands:
            yield from _run_candidates(command, depth + 1)
        for script in scripts:
            yield from _script(script, depth)
    if name in RUNNERS:
        yield from _runner_candidates(name, words, depth)
    if name in SHELLS or name in ("eval", "trap"):
        for script in (_trap_script(words) if name == "trap" else shell_scripts(name, words)):
            yield from _script(script, depth)
    if name in _SCRIPT_OPTIONS:
        for value in option_values(words, _SCRIPT_OPTIONS[name]):
            yield from _script(_option_command(name, value), depth)
        if name == "env":
            yield from _env_split_string(words, depth)
    if name == "ssh":
        yield from _ssh_remote_command(words, depth)
    if name == "zip":  # `-TT CMD`: two letters, so not a getopt option
        for i, word in enumerate(words[1:], start=1):
            if word.startswith("-TT"):
                value = word[3:] or (words[i + 1] if i + 1 < len(words) else "")
                yield from _script(value, depth)
    if name in ("make", "gmake") and any("=" in w and not w.startswith("-") for w in words[1:]):
        yield _TEXT  # `make CC='rm x'`: a variable a recipe may run
    if name == "socat":
        for word in words[1:]:
            if _SOCAT_EXEC.match(word):
                yield from _script(word.split(":", 1)[1].split(",", 1)[0], depth)
    if name in ("find", "fd"):
        yield from _exec_candidates(words, depth)
    if name in _SUBSCRIPT_EVALUATORS:
        yield from _subscript_candidates(words, depth)
    if name == "git":
        yield from _git_candidates(words, depth)


def _runner_candidates(name: str, words: tuple[str, ...], depth: int) -> Iterator[tuple[str, ...]]:
    for i in range(1, len(words)):
        if not words[i].startswith("-"):
            yield from _run_candidates(words[i:], depth + 1)
            if _COMMAND_LINE_WORD.search(words[i]):  # `watch 'rm x'`, `nohup 'a; b'`
                yield from _script(words[i], depth)
    if name == "watch":  # watch joins its arguments and runs them with `sh -c`
        first = scan_options(words, OptionSpec(valued="n", valued_long=("--interval",))).first_operand
        if first is not None:
            yield from _script(" ".join(words[first:]), depth)


def _option_command(name: str, value: str) -> str:
    """The command in an option value: ``exec=CMD`` (tar checkpoints), ``ProxyCommand=CMD``."""
    if name in ("tar", "bsdtar", "gtar") and value.startswith("exec="):
        return value[5:]
    if name in ("ssh", "scp", "sftp") and ("=" in value or " " in value):  # -o Key=Value (-S PROGRAM: as is)
        key, _, rest = value.replace("=", " ", 1).partition(" ")
        return rest if key.lower() in _SSH_COMMAND_KEYS else ""
    return value


def _ssh_remote_command(words: tuple[str, ...], depth: int) -> Iterator[tuple[str, ...]]:
    """``ssh [options] HOST CMD…``: the words after the host, joined, run in the remote shell."""
    host = scan_options(words, _SCRIPT_OPTIONS["ssh"]).first_operand
    if host is not None and host + 1 < len(words):
        yield from _script(" ".join(words[host + 1:]), depth)


def _trap_script(words: Sequence[str]) -> list[str]:
    """``trap [-lp] [--] ACTION SIGNAL…``: ACTION is a command line run later."""
    rest = [w for w in words[1:] if w not in ("-l", "-p", "-lp", "-pl")]
    if rest and rest[0] == "--":
        rest = rest[1:]
    return rest[:1] if len(rest) > 1 or (rest and not rest[0].isupper()) else []


def _env_split_string(words: tuple[str, ...], depth: int) -> Iterator[tuple[str, ...]]:
    """``env -S 'rm -rf' x`` runs the split string followed by the remaining words."""
    for value, after in scan_options(words, _SCRIPT_OPTIONS["env"]).values:
        try:
            split = tuple(shlex.split(value))
        except ValueError:
            yield _UNKNOWN
            continue
        yield from _run_candidates((*split, *words[after:]), depth + 1)


_SUBSCRIPT_EVALUATORS = frozenset({"test", "[", "let", "unset", "declare", "typeset", "local", "readonly", "export",
                                   "printf", "read", "mapfile", "readarray", "wait"})
"""Builtins that evaluate an array subscript in their arguments (``test -v 'a[$(cmd)]'``,
``let 'x[$(cmd)]=1'``): bash expands what is in the brackets, substitutions included, even
where the word was quoted."""


def _subscript_candidates(words: tuple[str, ...], depth: int) -> Iterator[tuple[str, ...]]:
    for word in words[1:]:
        start = word.find("[")
        if start >= 0 and ("$" in word[start:] or "`" in word[start:]):
            yield from _script(": " + word[start + 1 :].rsplit("]", 1)[0], depth)


def _exec_candidates(words: tuple[str, ...], depth: int) -> Iterator[tuple[str, ...]]:
    for i, word in enumerate(words):
        if word in ("-exec", "-execdir", "-ok", "-okdir", "-x", "--exec", "-X", "--exec-batch"):
            rest = words[i + 1 :]
            end = next((j for j, w in enumerate(rest) if w in (";", "+")), len(rest))
            yield from _run_candidates(tuple(rest[:end]), depth + 1)


def _git_candidates(words: tuple[str, ...], depth: int) -> Iterator[tuple[str, ...]]:
    """``git -C x -c k=v push`` is ``git push``; plus what git runs (`shell.git.git_runs`)."""
    sub = git_subcommand_index(words)
    if 1 < sub < len(words):
        yield ("git", *words[sub:])
    scripts, commands = git_runs(words)
    for script in scripts:
        yield from _script(script, depth)
    for command in commands:
        yield _TEXT
        yield from _run_candidates(command, depth + 1)
