"""Matching ``Bash(...)`` rules against commands (SPEC §5.2).

Rule content is one of three kinds: a prefix (``git push:*`` — the command's words start with
``git push``), a wildcard (``npm run *`` — ``*`` matches any text), or an exact command.

The two directions are matched differently on purpose:

* **deny and ask rules match leniently.** They narrow what may run, so they look at every part
  and nested command, at ``/bin/rm`` as ``rm``, and through everything that runs another
  command: ``sudo``, ``xargs``, ``command``, ``exec``, ``env``, ``sh -c '…'``, ``eval``,
  ``find -exec``, ``git -c … push``. Text that cannot be parsed, and commands whose
  substitutions hide from the parser, are also searched as plain text. `opaque_reason` names
  the commands nobody can check (``$CMD -rf x``, ``curl … | sh``).
* **allow rules match strictly,** one part at a time: every part must be allowed by some rule
  or be read-only, and a prefix, wildcard or exact rule only matches a part with no file
  write, no dynamic command word, no dangerous variable and no expansion of a variable that
  looks like a secret. Only an exact rule equal to the whole command text allows a compound
  command as written.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice
from typing import Callable, Iterator, Literal, Sequence

from .rules import PREFIX_SUFFIX
from .shell import INDIRECT, ParsedCommand, SimpleCommand, try_parse
from .shell_readonly import reveals_environment

__all__ = [
    "ShellPattern",
    "allow_matches_part",
    "compile_shell_rule",
    "glob_match",
    "opaque_reason",
    "restriction_matches",
    "suggest_content",
    "try_parse",
    "uncovered_parts",
    "whole_command_matches",
]

SUBCOMMAND_TOOLS = frozenset(
    {"git", "npm", "npx", "pnpm", "yarn", "pip", "pip3", "uv", "poetry", "conda", "mamba", "cargo", "go",
     "docker", "podman", "kubectl", "helm", "gh", "make", "brew", "apt", "apt-get", "systemctl", "jupyter",
     "terraform", "dotnet", "bundle", "gem", "rustup", "hatch", "tox", "nox", "pytest"}
)
"""Commands whose second word names what they do: the suggested rule is ``git push:*``."""

RUNNERS = frozenset(
    {"sudo", "doas", "xargs", "command", "builtin", "exec", "nohup", "time", "nice", "timeout", "env", "stdbuf",
     "ionice", "chrt", "taskset", "setsid", "unbuffer", "watch", "flock", "strace", "ltrace", "nsenter", "chroot",
     "runuser", "caffeinate", "busybox", "parallel", "firejail", "then", "do", "!"}
)
"""Commands that run the command named in their later words (looked through by deny rules)."""

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "ash", "su", "runuser"})
"""``sh -c '…'`` runs its string; without ``-c`` and a script a shell reads commands from stdin."""

_SENSITIVE_NAME = re.compile(r"KEY|TOKEN|SECRET|PASS|CRED|AUTH|ANTHROPIC|PRIVATE|COOKIE|SESSION", re.IGNORECASE)
_TEXT_TOKENS = re.compile(r"[\s;&|()<>`'\"{}$=\\]+")
_WHITESPACE = re.compile(r"\s+")
_MAX_DEPTH = 4
MAX_CANDIDATES = 2000
_UNKNOWN = ("\0unknown",)
"""Yielded where unwrapping stops (too deep, an inner script that does not parse): the caller
falls back to searching the whole text."""


@dataclass(frozen=True)
class ShellPattern:
    """A compiled rule content. ``words`` is None when the text does not split into words."""

    kind: Literal["prefix", "wildcard", "exact"]
    text: str
    words: tuple[str, ...] | None


@lru_cache(maxsize=1024)
def compile_shell_rule(content: str) -> ShellPattern:
    content = _normalize(content)
    if content.endswith(PREFIX_SUFFIX) and len(content) > len(PREFIX_SUFFIX):
        return ShellPattern("prefix", content, _split(content[: -len(PREFIX_SUFFIX)]))
    if "*" in content:
        return ShellPattern("wildcard", content, None)
    return ShellPattern("exact", content, _split(content))


def _split(text: str) -> tuple[str, ...] | None:
    try:
        return tuple(shlex.split(text))
    except ValueError:
        return None


def _normalize(text: str) -> str:
    return _WHITESPACE.sub(" ", text.strip())


def glob_match(pattern: str, text: str) -> bool:
    """Whole-text match where ``*`` matches any run of characters (nothing else is special).

    Linear in the text for any number of ``*`` (greedy leftmost search is exact for patterns
    whose only metacharacter is ``*``). A trailing `` *`` also matches nothing: ``git *``
    matches ``git``."""
    if pattern.endswith(" *") and text == pattern[:-2]:
        return True
    pieces = pattern.split("*")
    if len(pieces) == 1:
        return text == pattern
    first, *middle, last = pieces
    if len(text) < len(first) + len(last) or not text.startswith(first) or not text.endswith(last):
        return False
    position, end = len(first), len(text) - len(last)
    for piece in middle:
        found = text.find(piece, position, end)
        if found < 0:
            return False
        position = found + len(piece)
    return True


# --- allow: strict -----------------------------------------------------------------------------

def whole_command_matches(content: str, command: str) -> bool:
    """An exact rule written as this whole command (compound commands included)."""
    pattern = compile_shell_rule(content)
    return pattern.kind == "exact" and pattern.text == _normalize(command)


def allow_matches_part(content: str, part: SimpleCommand) -> bool:
    """Whether an allow rule covers one part (see the module docstring for the conditions)."""
    if not part.plain or any(_sensitive(name) for name in part.expansions):
        return False
    if reveals_environment(("<", *part.core_words[1:], *part.reads)):
        # No allow rule reaches another process's environment through /proc (it holds the API
        # key). An explicitly allowed `printenv` is fine: Bash's child environment has no keys.
        return False
    pattern = compile_shell_rule(content)
    words = part.core_words
    if pattern.kind == "prefix":
        return pattern.words is not None and words[: len(pattern.words)] == pattern.words
    if pattern.kind == "wildcard":
        return glob_match(pattern.text, _normalize(part.core_text))
    return (pattern.words is not None and words == pattern.words) or pattern.text == _normalize(part.core_text)


def _sensitive(name: str) -> bool:
    return name == INDIRECT or bool(_SENSITIVE_NAME.search(name))


def uncovered_parts(
    parsed: ParsedCommand, contents: Sequence[str], is_read_only: Callable[[SimpleCommand], bool]
) -> list[SimpleCommand]:
    """The commands neither read-only nor allowed by one of ``contents``."""
    return [c for c in parsed.commands
            if not is_read_only(c) and not any(allow_matches_part(x, c) for x in contents)]


def suggest_content(command: str, parsed: ParsedCommand | None, missing: Sequence[SimpleCommand]) -> str | None:
    """The narrowest content that would allow the command: ``git push:*`` for a tool with
    subcommands, else the one missing part exactly, else the whole command exactly. None when
    exact text would read as a wildcard or prefix rule (it would allow more than asked)."""
    content = _normalize(command)
    if parsed is not None and len(missing) == 1 and missing[0].plain and not parsed.defines_function:
        part = missing[0]
        words = part.core_words
        if words[0] in SUBCOMMAND_TOOLS and len(words) > 1 and re.fullmatch(r"[A-Za-z][\w.:-]*", words[1]):
            return f"{words[0]} {words[1]}{PREFIX_SUFFIX}"
        content = _normalize(part.core_text)
    if "*" in content:
        return None
    return content


# --- deny and ask: lenient -----------------------------------------------------------------------

def restriction_matches(content: str, command: str, parsed: ParsedCommand | None) -> bool:
    """Whether a deny or ask rule applies to any part of the command, looked at every way."""
    pattern = compile_shell_rule(content)
    if pattern.kind == "exact" and pattern.text == _normalize(command):
        return True
    candidates = _all_candidates(command) if parsed is not None else None
    if candidates is None:  # unparseable, or too convoluted to unwrap: search the text
        return _text_matches(pattern, command)
    if any(_pattern_matches(pattern, words) for words in candidates):
        return True
    hidden = parsed is not None and (parsed.has_substitution or any(c.dynamic for c in parsed.commands))
    if hidden or any(_runs_a_string(words) for words in candidates):
        return _text_matches(pattern, command)  # quoting inside quoting: trust the text, not the parse
    return False


def _runs_a_string(words: tuple[str, ...]) -> bool:
    name = words[0].rsplit("/", 1)[-1] if words else ""
    return bool((name in SHELLS or name == "eval") and _scripts(name, words)) or (
        name == "git" and any("=!" in w for w in words))


@lru_cache(maxsize=1024)
def _all_candidates(command: str) -> tuple[tuple[str, ...], ...] | None:
    """Every word list the command may run, or None when unwrapping stopped (`_UNKNOWN`) or went
    past `MAX_CANDIDATES` (the unwrapping is lazy, so the bound also bounds the work:
    ``sudo sudo sudo …`` cannot blow up)."""
    parsed = try_parse(command)
    if parsed is None:
        return None
    found = tuple(islice(_candidates(parsed, 0), MAX_CANDIDATES + 1))
    return None if len(found) > MAX_CANDIDATES or _UNKNOWN in found else found


def _pattern_matches(pattern: ShellPattern, words: tuple[str, ...]) -> bool:
    if not words:
        return False
    if pattern.kind == "wildcard":
        return glob_match(pattern.text, " ".join(words))
    if pattern.words is None or not pattern.words:
        return False
    if pattern.kind == "prefix":
        return words[: len(pattern.words)] == pattern.words
    return words == pattern.words


def _candidates(parsed: ParsedCommand, depth: int) -> Iterator[tuple[str, ...]]:
    for part in parsed.commands:
        yield from _run_candidates(part.core_words, depth)
        if part.core_text:
            yield (part.core_text,)  # a wildcard rule may be written against the source text


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
    if name in RUNNERS:
        for i in range(1, len(words)):
            if not words[i].startswith("-"):
                yield from _run_candidates(words[i:], depth + 1)
    if name in SHELLS or name == "eval":
        for script in _scripts(name, words):
            inner = try_parse(script)
            if inner is None:
                yield _UNKNOWN
            else:
                yield from _candidates(inner, depth + 1)
    if name in ("find", "fd"):
        yield from _exec_candidates(words, depth)
    if name == "git":
        yield from _git_candidates(words, depth)


def _scripts(name: str, words: tuple[str, ...]) -> list[str]:
    if name == "eval":
        return [" ".join(words[1:])] if len(words) > 1 else []
    for i, word in enumerate(words[1:], start=1):
        if word.startswith("-") and not word.startswith("--") and "c" in word[1:] and i + 1 < len(words):
            return [words[i + 1]]
    return []


def _exec_candidates(words: tuple[str, ...], depth: int) -> Iterator[tuple[str, ...]]:
    for i, word in enumerate(words):
        if word in ("-exec", "-execdir", "-ok", "-okdir", "-x", "--exec", "-X", "--exec-batch"):
            rest = words[i + 1 :]
            end = next((j for j, w in enumerate(rest) if w in (";", "+")), len(rest))
            yield from _run_candidates(tuple(rest[:end]), depth + 1)


def _git_candidates(words: tuple[str, ...], depth: int) -> Iterator[tuple[str, ...]]:
    """``git -C x -c k=v push`` is ``git push``; ``-c alias.x='!cmd'`` runs ``cmd``."""
    i = 1
    while i < len(words) and words[i].startswith("-"):
        if words[i] in ("-c", "-C", "--git-dir", "--work-tree", "--namespace", "--config-env"):
            if words[i] == "-c" and i + 1 < len(words) and "=!" in words[i + 1]:
                inner = try_parse(words[i + 1].split("=!", 1)[1])
                yield from (_candidates(inner, depth + 1) if inner is not None else (_UNKNOWN,))
            i += 2
        else:
            i += 1
    if 1 < i < len(words):
        yield ("git", *words[i:])


def _text_matches(pattern: ShellPattern, text: str) -> bool:
    """The textual fallback: search the rule in the text, token by token."""
    tokens = [t for t in _TEXT_TOKENS.split(text) if t]
    tokens = [t.rsplit("/", 1)[-1] if "/" in t and not t.endswith("/") else t for t in tokens]
    if pattern.kind == "wildcard":
        return glob_match("*" + pattern.text + "*", _normalize(text)) or glob_match(
            "*" + pattern.text + "*", " ".join(tokens)
        )
    if not pattern.words:
        return False
    n = len(pattern.words)
    return any(tuple(tokens[i : i + n]) == pattern.words for i in range(len(tokens) - n + 1))


def opaque_reason(parsed: ParsedCommand | None) -> str | None:
    """Why nobody can tell from the text what the command runs, or None.

    Unparseable text is not opaque here: the textual fallback sees all of it."""
    if parsed is None:
        return None
    for part in parsed.commands:
        words = part.core_words
        if part.dynamic and words:
            return f"the command name in `{part.text}` is only known when it runs"
        if not words:
            continue
        name = words[0].rsplit("/", 1)[-1]
        if name in SHELLS and not _scripts(name, words) and all(w.startswith("-") for w in words[1:]):
            return f"`{part.text}` runs commands it reads from its input"
        if name == "eval" and (part.expansions or part.substitution):
            return f"`{part.text}` runs a command built when it runs"
        if name in SHELLS and part.expansions and _scripts(name, words):
            return f"`{part.text}` runs a command built when it runs"
    return None
