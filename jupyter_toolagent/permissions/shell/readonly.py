"""Which shell commands are read-only (SPEC §5.3 step 9, §10 Bash).

A command listed here is auto-allowed when none of its words carries an option that writes a
file, runs another program, or changes state. The table errs on the side of asking: anything
not listed is not read-only (``awk``, ``sed``, ``xargs``, ``tee``, ``less`` … can all write or
run programs), and a listed command with an option the table does not know is judged by the
rules below, never by guesswork about the option.

Reading the environment is not read-only either: ``env``, ``printenv``, ``set``,
``declare -p``, ``export -p`` and reads of ``/proc/*/environ`` print the process environment,
which holds the API key, straight into the model's context. (Variable expansions such as
``echo $ANTHROPIC_API_KEY`` are caught by the parser, see `shell.SimpleCommand.expansions`.)

Options are read as the programs read them: a unique prefix of a long option is that option
(``sort --out=F`` is ``--output``; `DANGEROUS_LONG_OPTIONS`), ``find``'s expression may follow
``--``, and ``test -v 'a[$(cmd)]'`` evaluates its subscript. git is read-only only in the
working directory's own repository: a repository's configuration can run programs
(``core.fsmonitor`` on ``git status``), so ``git -C other status``, ``cd other && git log`` or
``--git-dir`` into a repository someone else wrote is not (`shell.git.runs_in_own_repository`).

This module only looks at words (after brace expansion and quote removal); the parser has
already removed redirections, assignments and harmless wrappers.
"""

from __future__ import annotations

import fnmatch
import os
import re
from typing import Callable, Sequence

from .cwd import resolve_word
from .git import runs_in_own_repository
from .options import long_option_meanings, long_option_name, may_abbreviate

Checker = Callable[[Sequence[str]], bool]

ENVIRONMENT_COMMANDS = frozenset(
    {"env", "printenv", "set", "declare", "typeset", "export", "compgen", "local", "readonly", "alias"}
)
"""Builtins and programs that print variables; never read-only (listed for messages and tests)."""

_PROC_TEXT = re.compile(r"(^|/)proc(/|$)|(^|/)environ$")
_GLOB = re.compile(r"[*?\[]")
_WALKERS = frozenset({"rg", "ag", "ack", "ack-grep", "tar", "bsdtar", "gtar", "zip", "7z", "7za", "rsync", "cpio",
                      "pax", "zgrep", "rgrep"})
"""Programs that read everything under a directory they are given without a recursion option."""
_RECURSIVE_LONG = frozenset({"--recursive", "--dereference-recursive", "--recurse"})


def reveals_environment(words: Sequence[str], cwd: str | None = None, *, environment_commands: bool = True) -> bool:
    """Whether these words may print the environment: an environment command (unless
    ``environment_commands`` is False: an explicitly allowed ``printenv`` sees only Bash's
    child environment), or an argument that names or reaches ``/proc`` (``cat
    /proc/self/environ``, ``grep -r KEY /proc``, ``cat /pr?c/1/env*``, a symlink into ``/proc``,
    and ``/`` itself for a command that walks directories: ``grep -ra KEY /``). Relative paths
    are resolved against ``cwd`` when it is given."""
    if not words:
        return False
    if environment_commands and words[0].rsplit("/", 1)[-1] in ENVIRONMENT_COMMANDS:
        return True
    walks = walks_directories(words)
    real_cwd = os.path.realpath(cwd) if cwd is not None else None
    return any(_reaches_proc(candidate, cwd, root_counts=walks, real_cwd=real_cwd)
               for w in words[1:] for candidate in _path_candidates(w))


def walks_directories(words: Sequence[str]) -> bool:
    """A command that reads the files under a directory it is given (``grep -r``, ``rg``,
    ``tar``): from ``/`` it passes through ``/proc``. Over-inclusive: any short option cluster
    with ``r``/``R`` counts."""
    if words[0].rsplit("/", 1)[-1] in _WALKERS:
        return True
    for w, after in zip(words[1:], [*words[2:], ""]):
        if w in _RECURSIVE_LONG or w in ("--directories=recurse", "-drecurse") or (
            w in ("-d", "--directories") and after == "recurse"
        ):
            return True
        if w.startswith("-") and not w.startswith("--") and ("r" in w or "R" in w):
            return True
    return False


def reads_reveal_environment(targets: Sequence[str], cwd: str | None = None) -> bool:
    """Whether input redirections from these files (``cat < FILE``) may read the environment:
    a path that names or reaches ``/proc``, resolved against ``cwd`` like a word argument.
    Without ``cwd`` a relative target cannot be resolved, so it counts (the shell reads it,
    whatever the command is, and it may be a link into ``/proc``)."""
    for target in targets:
        if cwd is None and not os.path.isabs(os.path.expanduser(target)):
            return True
        if _reaches_proc(target, cwd):
            return True
    return False


def _path_candidates(word: str) -> set[str]:
    """The word, what follows ``=`` in ``--opt=PATH``, and what follows a short option letter
    in ``-fPATH``."""
    found = {word, word.split("=", 1)[-1]}
    if word.startswith("-") and not word.startswith("--") and "/" in word:
        found.add(word[word.index("/"):])
    return found


def _reaches_proc(word: str, cwd: str | None, *, root_counts: bool = False, real_cwd: str | None = None) -> bool:
    if not word or _PROC_TEXT.search(word):
        return bool(word)
    expanded = os.path.expanduser(word)
    if not os.path.isabs(expanded) and cwd is None:
        return False
    full = os.path.join(cwd or "/", expanded)
    if _GLOB.search(full):
        return _glob_reaches_proc(full)
    resolved = resolve_word(real_cwd, expanded) if real_cwd is not None else os.path.realpath(full)
    if resolved == "/":  # `grep -ra KEY /` reads every process's environment on its way
        return root_counts
    return _in_proc(resolved)


def _in_proc(resolved: str) -> bool:
    return resolved == "/proc" or resolved.startswith("/proc/") or resolved.endswith("/environ")


_MAX_GLOB_CANDIDATES = 64


def _glob_reaches_proc(path: str) -> bool:
    """Whether a glob path may name something in ``/proc``, resolved the way the kernel walks
    it: component by component, each symlink followed before a ``..`` after it is applied
    (``/dev/fd/../env*`` is ``/proc/self/env*``: ``/dev/fd`` links to ``/proc/self/fd``). A
    wildcard component is matched against the directory's entries; more candidates than a
    check should look at count as reaching ``/proc``."""
    candidates = ["/"]
    for component in [c for c in path.split("/") if c]:
        following: list[str] = []
        for directory in candidates:
            if not _GLOB.search(component):
                following.append(os.path.realpath(os.path.join(directory, component)))
                continue
            if fnmatch.fnmatchcase("proc", component) and directory == "/":
                return True
            try:
                names = os.listdir(directory)
            except OSError:
                continue
            following.extend(os.path.realpath(os.path.join(directory, n)) for n in names
                             if fnmatch.fnmatchcase(n, component) and (component.startswith(".") or not n.startswith(".")))
        candidates = list(dict.fromkeys(following))
        if len(candidates) > _MAX_GLOB_CANDIDATES or any(c == "/proc" or c.startswith("/proc/") for c in candidates):
            return True
    return any(_in_proc(c) for c in candidates)


def _any_args(args: Sequence[str]) -> bool:
    return True


def _without(*bad: str, long: tuple[str, ...] = (), known: tuple[str, ...] = (), short: str = "",
             options_end: bool = True) -> Checker:
    """Read-only unless a word is one of ``bad``, is one of the ``long`` options or a prefix that
    may abbreviate one (``--out=F`` for ``--output``, `shell.options.may_abbreviate`; ``known``
    are the program's other options that are prefixes of a ``long`` one), or is a cluster of
    short options containing a letter of ``short``. ``options_end``: ``--`` ends the options
    (not for ``find``, whose expression may follow it)."""

    def check(args: Sequence[str]) -> bool:
        for arg in args:
            if arg == "--" and options_end:
                break
            if arg in bad:
                return False
            if arg.startswith("--") and any(may_abbreviate(long_option_name(arg), o, known) for o in long):
                return False
            if short and arg.startswith("-") and not arg.startswith("--") and any(c in short for c in arg[1:]):
                return False
        return True

    return check


def _positional(args: Sequence[str]) -> list[str]:
    return [a for a in args if not a.startswith("-") or a == "-"]


def _xxd(args: Sequence[str]) -> bool:
    """xxd takes any word that starts like an option's name (``-r``, ``-rev``, ``-revert``)."""
    return not any(a.startswith("-r") for a in args)


def _at_most_positional(n: int, inner: Checker = _any_args) -> Checker:
    """``uniq IN OUT`` and ``xxd IN OUT`` write their second file argument."""
    return lambda args: len(_positional(args)) <= n and inner(args)


def _options_only(*allowed: str) -> Checker:
    """``hostname NAME`` sets the name; ``hostname -f`` prints it."""
    return lambda args: all(a in allowed for a in args)


def _date(args: Sequence[str]) -> bool:
    """``date MMDDhhmm`` and ``date -s`` set the clock; formats and ``-d`` only print."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-d", "--date", "-r", "--reference", "-f", "--file"):
            i += 2
            continue
        if arg.startswith("+") or arg in ("-u", "--utc", "--universal", "-R", "--rfc-email") or re.match(
            r"-I|--iso-8601|--rfc-3339=|--date=|--reference=|-d.", arg
        ):
            i += 1
            continue
        return False
    return True


def _cd(args: Sequence[str]) -> bool:
    """``cd sub`` only: a relative path that does not climb (what later parts read depends on
    the directory, and ``cd /`` then ``grep -r`` would reach every process's environment)."""
    return len(args) == 1 and not args[0].startswith(("/", "-", "~")) and ".." not in args[0].split("/")


_FIND_UNSAFE = ("-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls")

DANGEROUS_LONG_OPTIONS: dict[str, tuple[str, ...]] = {
    "sort": ("--output", "--compress-program"),
    "file": ("--compile",),
    "rg": ("--pre", "--hostname-bin"),
    "fd": ("--exec", "--exec-batch"),
    "git": ("--output", "--ext-diff", "--textconv", "--exec"),
    "git grep": ("--open-files-in-pager",),
}
"""Long options that make a listed program write a file or run a program. A unique prefix
means the option too (``sort --out=F``); see `shell.options.may_abbreviate`."""

PREFIX_SAFE_OPTIONS: dict[str, tuple[str, ...]] = {"git": ("--text",)}
"""A program's own options that are prefixes of a dangerous one (``--text`` ≠ ``--textconv``)."""


def _test(args: Sequence[str]) -> bool:
    """``test -v 'a[$(cmd)]'``: bash evaluates an array subscript, running what is in it."""
    return not any(a in ("-v", "-R") and "[" in b for a, b in zip(args, args[1:]))

_GIT_GLOBAL_WITH_VALUE = ("-C", "--namespace")
"""(``--git-dir`` and ``--work-tree`` point git at another repository and its configuration.)"""
_GIT_GLOBAL_FLAGS = ("--no-pager", "-P", "--no-replace-objects", "--literal-pathspecs", "--no-optional-locks")
_GIT_UNSAFE = _without(long=DANGEROUS_LONG_OPTIONS["git"], known=PREFIX_SAFE_OPTIONS["git"])
_BRANCH_LISTING = frozenset(
    {"-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose", "--list", "-l", "--show-current",
     "--merged", "--no-merged", "--contains", "--no-contains", "--points-at", "--sort", "--no-color",
     "--color", "--column", "--no-column", "-q", "--quiet", "--format"}
)


_BRANCH_VALUE_OPTIONS = frozenset({"--merged", "--no-merged", "--contains", "--no-contains", "--points-at",
                                   "--sort", "--format"})


def _git_branch(args: Sequence[str]) -> bool:
    """Listing only: ``git branch NAME`` creates, ``-d/-m/-c/-u`` change branches."""
    listing = any(a in ("--list", "-l") for a in args)
    after_value_option = False
    for arg in args:
        if arg.startswith("-"):
            if arg.split("=", 1)[0] not in _BRANCH_LISTING:
                return False
            after_value_option = arg in _BRANCH_VALUE_OPTIONS
        elif after_value_option:
            after_value_option = False
        elif not listing:
            return False
    return True


def _git_tag(args: Sequence[str]) -> bool:
    """Listing only (``git tag NAME`` creates a tag)."""
    if not args:
        return True
    listing = any(a in ("-l", "--list") for a in args)
    options_ok = all(
        not a.startswith("-") or a in ("-l", "--list", "-n") or a.startswith(("--sort", "--contains", "--format"))
        for a in args
    )
    return listing and options_ok


def _git_grep(args: Sequence[str]) -> bool:
    """``-O``/``--open-files-in-pager`` runs a program."""
    return not any(a.startswith("-O") or (a.startswith("--") and may_abbreviate(long_option_name(a), o))
                   for a in args for o in DANGEROUS_LONG_OPTIONS["git grep"])


def _git_remote(args: Sequence[str]) -> bool:
    return all(a in ("-v", "--verbose") for a in args)


def _git_stash(args: Sequence[str]) -> bool:
    return bool(args) and args[0] in ("list", "show")


def _git_reflog(args: Sequence[str]) -> bool:
    return not args or args[0] == "show" or args[0].startswith("-")


def _git_worktree(args: Sequence[str]) -> bool:
    return bool(args) and args[0] == "list"


_GIT_SUBCOMMANDS: dict[str, Checker] = {
    "status": _any_args, "log": _any_args, "diff": _any_args, "show": _any_args,
    "blame": _any_args, "shortlog": _any_args, "describe": _any_args, "rev-parse": _any_args,
    "rev-list": _any_args, "ls-files": _any_args, "ls-tree": _any_args, "cat-file": _any_args,
    "show-ref": _any_args, "merge-base": _any_args, "name-rev": _any_args, "grep": _git_grep,
    "whatchanged": _any_args, "count-objects": _any_args, "diff-tree": _any_args, "diff-files": _any_args,
    "diff-index": _any_args, "for-each-ref": _any_args, "branch": _git_branch, "tag": _git_tag,
    "remote": _git_remote, "stash": _git_stash, "reflog": _git_reflog, "worktree": _git_worktree,
}


def _git(args: Sequence[str]) -> bool:
    """Known read-only subcommands, with no ``-c`` (config that can run programs), no
    ``--output`` and no external diff or text conversion programs."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in _GIT_GLOBAL_WITH_VALUE:
            i += 2
        elif arg.split("=", 1)[0] in _GIT_GLOBAL_WITH_VALUE or arg in _GIT_GLOBAL_FLAGS:
            i += 1
        elif arg.startswith("-"):
            return False  # -c, --config-env, --exec-path=… and anything unknown
        else:
            break
    if i >= len(args):
        return False
    sub, rest = args[i], args[i + 1 :]
    check = _GIT_SUBCOMMANDS.get(sub)
    return check is not None and _GIT_UNSAFE(rest) and check(rest)


_PIP_GENERAL = {
    "safe": ("--verbose", "--quiet", "--isolated", "--no-color", "--disable-pip-version-check", "--no-input",
             "--require-virtualenv", "--no-python-version-warning", "--help", "--version"),
    "other": ("--debug", "--python", "--log", "--log-file", "--local-log", "--keyring-provider", "--proxy",
              "--retries", "--timeout", "--exists-action", "--trusted-host", "--cert", "--client-cert",
              "--cache-dir", "--no-cache-dir", "--use-feature", "--use-deprecated", "--resume-retries"),
}
_PIP_SUBCOMMANDS: dict[str, dict[str, tuple[str, ...] | str]] = {
    "list": {"safe": ("--local", "--user", "--not-required", "--format", "--exclude-editable", "--include-editable",
                      "--editable", "--pre", "--exclude"),
             "other": ("--outdated", "--uptodate", "--path", "--index-url", "--extra-index-url", "--no-index",
                       "--find-links"),
             "short": "vqle", "valued": ("--format", "--exclude")},
    "show": {"safe": ("--files",), "other": (), "short": "vqf", "valued": ()},
    "freeze": {"safe": ("--local", "--user", "--all", "--exclude-editable", "--exclude"),
               "other": ("--requirement", "--path"), "short": "vql", "valued": ("--exclude",)},
}
"""pip's options per read-only subcommand: ``safe`` ones only print; the ``other`` ones write
(``--log F``), reach the network (``--outdated``, ``--index-url``, a remote ``-r``), or run
another interpreter (``--python``). Every option must be a safe one; optparse accepts unique
prefixes, so a prefix counts only when every option it may mean is safe."""


def _pip(args: Sequence[str]) -> bool:
    """``pip list|show|freeze`` with options that only print, or ``pip --version``."""
    if args and args[0] in ("--version", "-V") and len(args) == 1:
        return True
    sub = next((a for a in args if not a.startswith("-")), None)
    table = _PIP_SUBCOMMANDS.get(sub or "")
    if table is None:
        return False
    safe = set(_PIP_GENERAL["safe"]) | set(table["safe"])
    known = safe | set(_PIP_GENERAL["other"]) | set(table["other"])
    skip = False
    for arg in args:
        if skip or arg == sub:
            skip = False
            continue
        if arg.startswith("--"):
            meanings = long_option_meanings(long_option_name(arg), known)
            if not meanings or not meanings <= safe:
                return False
            skip = "=" not in arg and bool(meanings & set(table["valued"]))
        elif arg.startswith("-") and arg != "-":
            if not all(c in table["short"] for c in arg[1:]):
                return False
        elif sub != "show":
            return False
    return True


READ_ONLY_COMMANDS: dict[str, Checker] = {
    "ls": _any_args, "cat": _any_args, "head": _any_args, "tail": _any_args, "wc": _any_args,
    "grep": _any_args, "egrep": _any_args, "fgrep": _any_args, "echo": _any_args, "printf": _without("-v"),
    "pwd": _any_args, "which": _any_args, "du": _any_args, "df": _any_args, "stat": _any_args,
    "file": _without(long=DANGEROUS_LONG_OPTIONS["file"], short="C"), "basename": _any_args, "dirname": _any_args,
    "realpath": _any_args, "readlink": _any_args, "true": _any_args, "false": _any_args,
    "test": _test, "[": _test, "cut": _any_args, "tr": _any_args, "nl": _any_args, "tac": _any_args,
    "rev": _any_args, "fold": _any_args, "column": _any_args, "od": _any_args, "strings": _any_args,
    "diff": _any_args, "cmp": _any_args, "comm": _any_args, "seq": _any_args, "sleep": _any_args,
    "md5sum": _any_args, "sha1sum": _any_args, "sha256sum": _any_args, "sha512sum": _any_args,
    "whoami": _any_args, "id": _any_args, "uname": _any_args, "nproc": _any_args, "uptime": _any_args,
    "free": _any_args, "hostname": _options_only("-f", "-s", "-i", "-I", "-d", "--fqdn", "--short"),
    "date": _date, "cd": _cd, "uniq": _at_most_positional(1), "xxd": _at_most_positional(1, _xxd),
    "sort": _without(long=DANGEROUS_LONG_OPTIONS["sort"], short="o"),
    "find": _without(*_FIND_UNSAFE, options_end=False),
    "rg": _without(long=DANGEROUS_LONG_OPTIONS["rg"]),
    "fd": _without(long=DANGEROUS_LONG_OPTIONS["fd"], short="xX"),
    "tree": _without(short="o"),
    "git": _git, "pip": _pip, "pip3": _pip,
}


def words_are_read_only(words: Sequence[str], cwd: str | None = None, own_directory: str | None = None) -> bool:
    """Whether a simple command (its words after wrappers) is listed read-only with safe
    options and does not reveal the environment (relative paths resolved against ``cwd``, the
    directory it runs in). ``own_directory`` is the session's working directory (default
    ``cwd``): git is read-only only in that directory's repository
    (`shell.git.runs_in_own_repository`)."""
    check = READ_ONLY_COMMANDS.get(words[0]) if words else None
    if check is None or not check(words[1:]) or reveals_environment(words, cwd):
        return False
    return words[0] != "git" or runs_in_own_repository(words, cwd, own_directory if own_directory is not None else cwd)
