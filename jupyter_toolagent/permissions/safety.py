"""Safety checks (SPEC §5.3 step 6): writes that ask in every mode, even bypassPermissions.

Some files change what runs later without anyone looking: git hooks and config (``.git/``,
``.gitconfig``, ``/etc/gitconfig``), shell start-up files (``~/.bashrc``, ``~/.bash_aliases``,
``/etc/profile.d/``), interpreter and kernel start-up files (``sitecustomize.py``, ``*.pth`` in
any ``site-packages``, ``…/etc/ipython/``, ``…/etc/jupyter/``, ``~/.ipython/``), user services
and autostart entries, executables in a ``PATH`` directory searched before ``/usr/bin``
(``~/.local/bin/git``), SSH keys, stored credentials (``~/.aws``, ``~/.kube``,
``~/.docker/config.json``), and this project's own permission settings (``.toolagent/``). A
call that may write there is put to the person whatever the mode and whatever an allow rule or
hook says; only a deny rule is stronger.

The list is data (`PROTECTED_PATTERNS`, and `protected_path_patterns` with the ``PATH``
entries of this process): the sandbox keeps the same paths read-only, so the two lines of
defence protect the same files. `is_protected_path` / `protected_reason` match one path.

File tools give a resolved path. For shell commands the check is deliberately broad: every
word of every part is looked at as a possible path (also the pieces of ``of=PATH``, ``>PATH``
and ``sh -c '…'`` strings), relative to the working directory and to every directory a ``cd``
in the command names — so ``cd .git && echo x > config`` asks. Parts classified read-only are
checked too (a misclassified write must not skip the check); for them only naming a protected
*directory itself* is not a hit (``ls .ssh``, ``grep --exclude-dir=.git``), since listing or
skipping a directory writes nothing in it.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice
from typing import Iterable

from .shell import ParsedCommand, is_read_only_part
from .shell.cwd import part_directories, resolve_word

__all__ = [
    "PROTECTED_DIRS", "PROTECTED_FILES", "PROTECTED_PATTERNS", "ProtectedPattern", "check_file_edit",
    "check_shell", "early_path_directories", "is_protected_path", "protected_path_globs", "protected_path_patterns",
    "protected_reason",
]


@dataclass(frozen=True)
class ProtectedPattern:
    """One protected place. ``pattern`` is ``/``-separated; each component is an `fnmatch`
    pattern compared without regard to case. A pattern starting with ``/`` is anchored at the
    root, any other matches at any depth (``.git`` is ``**/.git``). ``directory``: everything
    below the matched path is protected too."""

    pattern: str
    why: str
    directory: bool = False

    def glob(self) -> str:
        """The pattern as a gitignore-style glob (``**/.git/**``), for other components."""
        body = self.pattern if self.pattern.startswith("/") else "**/" + self.pattern
        return body + ("/**" if self.directory else "")


PROTECTED_DIRS = frozenset({".git", ".toolagent", ".ssh", ".ipython", ".jupyter", ".gnupg", ".aws", ".kube"})
"""A path with one of these components is protected (``.git/hooks/pre-commit``)."""

PROTECTED_FILES = frozenset(
    {
        ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".bash_aliases", ".profile", ".zshrc",
        ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".cshrc", ".tcshrc", ".kshrc", ".inputrc", ".envrc",
        ".gitconfig", ".git-credentials", ".gitmodules", ".netrc", ".pypirc", ".npmrc",
        "sitecustomize.py", "usercustomize.py",
    }
)
"""Files protected wherever they are (start-up files, git and credential files)."""

PROTECTED_CONFIG_DIRS = (("config", "git"), ("config", "fish"))
"""``~/.config/git/…`` and ``~/.config/fish/…`` (kept for callers; see `PROTECTED_PATTERNS`)."""

PROTECTED_PATTERNS: tuple[ProtectedPattern, ...] = (
    *(ProtectedPattern(name, f"{name}/ is protected", directory=True) for name in sorted(PROTECTED_DIRS)),
    *(ProtectedPattern(name, f"{name} is protected") for name in sorted(PROTECTED_FILES)),
    *(ProtectedPattern(f".config/{sub}", f".config/{sub}/ is protected (it runs at login or by git)", directory=True)
      for sub in ("git", "fish", "systemd/user", "autostart")),
    ProtectedPattern(".docker/config.json", "~/.docker/config.json holds registry credentials"),
    *(ProtectedPattern(f"{where}/*.pth", f"a .pth file in {where} runs when Python starts")
      for where in ("site-packages", "dist-packages")),
    *(ProtectedPattern(f"etc/{app}", f"etc/{app}/ holds {app} start-up configuration", directory=True)
      for app in ("ipython", "jupyter")),
    ProtectedPattern("/etc/profile.d", "/etc/profile.d/ runs in every login shell", directory=True),
    ProtectedPattern("/etc/bash.bashrc", "/etc/bash.bashrc runs in every interactive shell"),
    ProtectedPattern("/etc/profile", "/etc/profile runs in every login shell"),
    ProtectedPattern("/etc/environment", "/etc/environment sets every session's environment"),
    ProtectedPattern("/etc/gitconfig", "/etc/gitconfig configures every git command"),
)
"""The protected places that do not depend on this process's ``PATH``."""

_SEARCH_END = ("/usr/bin", "/bin")
_GLOB = re.compile(r"[*?\[]")
_DYNAMIC_TARGET = re.compile(r"[$`]")
_TOKEN_SPLIT = re.compile(r"[\s;&|<>()'\"`=,]+")
_MAX_GLOB_MATCHES = 200


def early_path_directories(path_variable: str | None = None) -> tuple[str, ...]:
    """The ``PATH`` directories searched before ``/usr/bin`` (all of them if it is absent): a
    program put there shadows the system's (``~/.local/bin/git``)."""
    entries = (path_variable if path_variable is not None else os.environ.get("PATH", "")).split(os.pathsep)
    found: list[str] = []
    for entry in entries:
        if not entry:
            continue
        resolved = os.path.realpath(os.path.expanduser(entry))
        if resolved in _SEARCH_END or entry in _SEARCH_END:
            break
        found.append(resolved)
    return tuple(dict.fromkeys(found))


def protected_path_patterns(path_variable: str | None = None) -> tuple[ProtectedPattern, ...]:
    """Every protected place: `PROTECTED_PATTERNS` plus the executables in the early ``PATH``
    directories (of ``path_variable``, default this process's ``PATH``)."""
    return _patterns_for(path_variable if path_variable is not None else os.environ.get("PATH", ""))


@lru_cache(maxsize=32)
def _patterns_for(path_variable: str) -> tuple[ProtectedPattern, ...]:
    early = tuple(
        ProtectedPattern(_bracket_glob_chars(d).rstrip("/") + "/*", f"{d} is searched for programs before /usr/bin")
        for d in early_path_directories(path_variable)
    )
    return PROTECTED_PATTERNS + early


def protected_path_globs(path_variable: str | None = None) -> tuple[str, ...]:
    """`protected_path_patterns` as gitignore-style globs (``**/.git/**``, ``/etc/gitconfig``,
    ``/home/u/.local/bin/*``), matched without regard to case."""
    return tuple(p.glob() for p in protected_path_patterns(path_variable))


def _bracket_glob_chars(text: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)


def is_protected_path(path: str) -> bool:
    """Whether writing ``path`` (resolved, or as written) needs approval in every mode."""
    return protected_reason(path) is not None


def protected_reason(path: str, *, directory_itself: bool = True) -> str | None:
    """Why writing ``path`` (resolved or as written) is protected, or None. A component with
    glob characters that starts with ``.`` counts if it could expand to a protected name
    (``~/.bash?c``). With ``directory_itself`` False a protected directory counts only when
    the path goes below it.

    Names are compared without regard to case on every platform: on the case-insensitive file
    systems of macOS and Windows ``.GIT/config`` is ``.git/config``, and elsewhere asking about
    ``~/.BASHRC`` costs one question."""
    return _reason(path, directory_itself, os.environ.get("PATH", ""))


@lru_cache(maxsize=8192)
def _reason(path: str, directory_itself: bool, path_variable: str) -> str | None:
    shown = [p for p in path.replace("\\", "/").split("/") if p]
    parts = [p.casefold() for p in shown]
    present = set(parts)
    globbed = any(p.startswith(".") and _GLOB.search(p) for p in parts)
    absolute = path.startswith(("/", "\\"))
    for pattern in _patterns_for(path_variable):
        first = pattern.pattern.strip("/").split("/", 1)[0].casefold()
        if not globbed and not _GLOB.search(first) and first not in present:
            continue  # cheap rejection: its first component is nowhere in the path
        hit = _match(pattern, parts, absolute, directory_itself)
        if hit is not None:
            if hit and _GLOB.search("".join(shown[:hit])) and not _GLOB.search(pattern.pattern):
                return f"{'/'.join(shown[:hit])} may expand to {pattern.pattern}, which is protected"
            return pattern.why
    return None


def _match(pattern: ProtectedPattern, parts: list[str], absolute: bool, directory_itself: bool) -> int | None:
    """The number of path components the pattern matched (None: no match)."""
    wanted = [p.casefold() for p in pattern.pattern.strip("/").split("/")]
    anchored = pattern.pattern.startswith("/")
    if anchored and not absolute:
        return None
    starts = [0] if anchored else range(len(parts) - len(wanted) + 1)
    for start in starts:
        end = start + len(wanted)
        if end > len(parts) or not all(_component(p, w) for p, w in zip(parts[start:end], wanted)):
            continue
        if end == len(parts) and pattern.directory and not directory_itself:
            continue
        if end == len(parts) or pattern.directory:
            return end
    return None


def _component(part: str, wanted: str) -> bool:
    """A path component against a pattern component; a dot-name glob in the path (``.gi?``)
    matches a literal protected name it could expand to."""
    if fnmatch.fnmatchcase(part, wanted):
        return True
    return part.startswith(".") and bool(_GLOB.search(part)) and not _GLOB.search(wanted) and fnmatch.fnmatchcase(wanted, part)


def check_file_edit(path: str) -> str | None:
    """The safety ask for editing the resolved ``path``, or None."""
    why = protected_reason(path)
    if why is None:
        return None
    return f"editing {path} needs approval in every mode: {why} (it can change what runs later)"


def check_shell(parsed: ParsedCommand | None, command: str, cwd: str) -> str | None:
    """The safety ask for a shell command that may write a protected file, or None. Every part
    is checked, read-only-classified or not (see the module docstring)."""
    if parsed is None:
        tokens = _tokens([command])
        hit = _first_protected(tokens, [cwd])
        if hit is not None:
            return _shell_reason(command, hit)
        return None
    followed = part_directories(parsed, cwd) or []
    directories = list(dict.fromkeys([os.path.realpath(cwd), *_cd_targets(parsed, cwd),
                                      *(d for d in followed if d is not None)]))
    for directory in directories[1:]:
        why = protected_reason(directory)
        if why is not None:
            return _shell_reason(command, (directory, why))
    for i, part in enumerate(parsed.commands):
        words = part.core_words
        if _is_git_config_write(words):
            return f"the command `{command.strip()}` changes git configuration: it needs approval in every mode"
        dynamic = next((w for w in part.writes if _DYNAMIC_TARGET.search(w)), None)
        if dynamic is not None:
            return (
                f"the command `{command.strip()}` writes to {dynamic}, a path known only when it runs "
                "(it could be a protected file); it needs approval in every mode"
            )
        where = followed[i] if i < len(followed) and followed[i] is not None else cwd
        read_only = not part.writes and is_read_only_part(part, where, cwd)
        hit = _first_protected(_tokens([*part.words, *part.writes]), directories, directory_itself=not read_only)
        if hit is not None:
            return _shell_reason(command, hit, "names" if read_only else "may write")
    return None


def _shell_reason(command: str, hit: tuple[str, str], verb: str = "may write") -> str:
    token, why = hit
    return (
        f"the command `{command.strip()}` {verb} {token}: {why}; "
        "it needs approval in every mode"
    )


def _tokens(words: Iterable[str]) -> list[str]:
    found: list[str] = []
    for word in words:
        found.append(word)
        found.extend(t for t in _TOKEN_SPLIT.split(word) if t and t != word)
    return found


def _first_protected(tokens: Iterable[str], directories: list[str], *, directory_itself: bool = True) -> tuple[str, str] | None:
    for token in tokens:
        if token.startswith("-") and "=" not in token and "/" not in token:
            continue  # an option
        why = protected_reason(token, directory_itself=directory_itself)
        if why is not None:
            return token, why
        expanded = os.path.expanduser(token)
        for directory in directories:
            for resolved in _resolutions(directory, expanded):
                why = protected_reason(resolved, directory_itself=directory_itself)
                if why is not None:
                    return token, why
    return None


def _resolutions(directory: str, word: str) -> list[str]:
    """The resolved path of ``word`` in the resolved ``directory``, and for a glob the resolved
    files it expands to now (bounded, and at most two wildcard components: a permission check
    must not walk the disk)."""
    path = os.path.join(directory, word)
    found = [resolve_word(directory, word)]
    if _GLOB.search(path) and sum(1 for c in path.split("/") if _GLOB.search(c)) <= 2:
        found.extend(os.path.realpath(m) for m in islice(glob.iglob(path), _MAX_GLOB_MATCHES))
    return found


def _cd_targets(parsed: ParsedCommand, cwd: str) -> list[str]:
    targets = []
    for part in parsed.commands:
        words = part.core_words
        if words and words[0] in ("cd", "pushd") and len(words) > 1:
            targets.append(os.path.realpath(os.path.join(cwd, os.path.expanduser(words[-1]))))
    return targets


def _is_git_config_write(words: tuple[str, ...]) -> bool:
    """``git config …`` (any form: reading and writing look alike), ``git remote add/set-url``."""
    if not words or words[0].rsplit("/", 1)[-1] != "git":
        return False
    rest = [w for w in words[1:] if not w.startswith("-")]
    # skip values of -C / -c and friends: the first word that is a known subcommand decides
    for word in rest:
        if word == "config":
            return True
        if word == "remote":
            i = rest.index(word)
            return i + 1 < len(rest) and rest[i + 1] in ("add", "set-url", "rename", "remove", "rm", "set-head")
        if word in ("status", "log", "diff", "show", "commit", "push", "pull", "fetch", "add", "branch", "checkout"):
            return False
    return False
