"""Safety checks (SPEC §5.3 step 6): writes that ask in every mode, even bypassPermissions.

Some files change what runs later without anyone looking: git hooks and config (``.git/``,
``.gitconfig``), shell start-up files, IPython/Jupyter start-up and config, SSH keys, stored
credentials, and this project's own permission settings (``.toolagent/``). A call that may write
there is put to the person whatever the mode and whatever an allow rule or hook says; only a
deny rule is stronger.

File tools give a resolved path. For shell commands the check is deliberately broad: every
word of every part that is not read-only is looked at as a possible path (also the pieces of
``of=PATH``, ``>PATH`` and ``sh -c '…'`` strings), relative to the working directory and to
every directory a ``cd`` in the command names — so ``cd .git && echo x > config`` asks.
"""

from __future__ import annotations

import fnmatch
import os
import re
from typing import Iterable

from .shell import ParsedCommand, is_read_only_part

PROTECTED_DIRS = frozenset({".git", ".toolagent", ".ssh", ".ipython", ".jupyter", ".gnupg"})
"""A path with one of these components is protected (``.git/hooks/pre-commit``)."""

PROTECTED_FILES = frozenset(
    {
        ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zshenv",
        ".zprofile", ".zlogin", ".zlogout", ".cshrc", ".tcshrc", ".kshrc", ".inputrc", ".envrc",
        ".gitconfig", ".git-credentials", ".gitmodules", ".netrc", ".pypirc", ".npmrc",
    }
)
"""Files protected wherever they are (shell start-up files, git and credential files)."""

PROTECTED_CONFIG_DIRS = (("config", "git"), ("config", "fish"))
"""``~/.config/git/…`` and ``~/.config/fish/…`` (matched as ``.config/<name>``)."""

_PROTECTED_NAMES = PROTECTED_DIRS | PROTECTED_FILES
_GLOB = re.compile(r"[*?\[]")
_DYNAMIC_TARGET = re.compile(r"[$`]")
_TOKEN_SPLIT = re.compile(r"[\s;&|<>()'\"`=,]+")


def protected_reason(path: str) -> str | None:
    """Why writing ``path`` (resolved or as written) is protected, or None. A component with
    glob characters that starts with ``.`` counts if it could expand to a protected name
    (``~/.bash?c``).

    Names are compared without regard to case on every platform: on the case-insensitive file
    systems of macOS and Windows ``.GIT/config`` is ``.git/config``, and elsewhere asking about
    ``~/.BASHRC`` costs one question."""
    parts = [p for p in path.replace("\\", "/").split("/") if p]
    folded = [p.casefold() for p in parts]
    for i, part in enumerate(folded):
        if part in PROTECTED_DIRS:
            return f"{parts[i]}/ is protected"
        if part.startswith(".") and _GLOB.search(part):
            name = next((n for n in sorted(_PROTECTED_NAMES) if fnmatch.fnmatchcase(n, part)), None)
            if name is not None:
                return f"{parts[i]} may expand to {name}, which is protected"
        if part == ".config" and i + 1 < len(parts) and ("config", folded[i + 1]) in PROTECTED_CONFIG_DIRS:
            return f"{parts[i]}/{parts[i + 1]}/ is protected"
    if parts and folded[-1] in PROTECTED_FILES:
        return f"{parts[-1]} is protected"
    return None


def check_file_edit(path: str) -> str | None:
    """The safety ask for editing the resolved ``path``, or None."""
    why = protected_reason(path)
    if why is None:
        return None
    return f"editing {path} needs approval in every mode: {why} (it can change what runs later)"


def check_shell(parsed: ParsedCommand | None, command: str, cwd: str) -> str | None:
    """The safety ask for a shell command that may write a protected file, or None."""
    if parsed is None:
        tokens = _tokens([command])
        hit = _first_protected(tokens, [cwd])
        if hit is not None:
            return _shell_reason(command, hit)
        return None
    directories = [cwd, *_cd_targets(parsed, cwd)]
    for directory in directories[1:]:
        if protected_reason(directory) is not None and not all(is_read_only_part(c) for c in parsed.commands):
            return _shell_reason(command, (directory, protected_reason(directory) or ""))
    for part in parsed.commands:
        words = part.core_words
        if _is_git_config_write(words):
            return f"the command `{command.strip()}` changes git configuration: it needs approval in every mode"
        if is_read_only_part(part) and not part.writes:
            continue
        dynamic = next((w for w in part.writes if _DYNAMIC_TARGET.search(w)), None)
        if dynamic is not None:
            return (
                f"the command `{command.strip()}` writes to {dynamic}, a path known only when it runs "
                "(it could be a protected file); it needs approval in every mode"
            )
        hit = _first_protected(_tokens([*part.words, *part.writes]), directories)
        if hit is not None:
            return _shell_reason(command, hit)
    return None


def _shell_reason(command: str, hit: tuple[str, str]) -> str:
    token, why = hit
    return (
        f"the command `{command.strip()}` may write {token}: {why}; "
        "it needs approval in every mode"
    )


def _tokens(words: Iterable[str]) -> list[str]:
    found: list[str] = []
    for word in words:
        found.append(word)
        found.extend(t for t in _TOKEN_SPLIT.split(word) if t and t != word)
    return found


def _first_protected(tokens: Iterable[str], directories: list[str]) -> tuple[str, str] | None:
    for token in tokens:
        if token.startswith("-") and "=" not in token and "/" not in token:
            continue  # an option
        why = protected_reason(token)
        if why is not None:
            return token, why
        expanded = os.path.expanduser(token)
        for directory in directories:
            resolved = os.path.realpath(os.path.join(directory, expanded))
            why = protected_reason(resolved)
            if why is not None:
                return token, why
    return None


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
