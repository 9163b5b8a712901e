"""Matching ``Bash(...)`` rules against commands (SPEC §5.2).

Rule content is one of three kinds: a prefix (``git push:*`` — the command's words start with
``git push``), a wildcard (``npm run *`` — ``*`` matches any text), or an exact command.

The two directions are matched differently on purpose:

* **deny and ask rules match leniently.** They narrow what may run, so they look at every part
  and nested command, at ``/bin/rm`` as ``rm``, and through everything that runs another
  command (`shell.unwrap`: ``sudo``, ``xargs``, ``env -S``, ``sh -c '…'``, ``eval``, ``trap``,
  ``watch``, ``find -exec``, ``git rebase --exec`` …). Text that cannot be parsed, commands
  whose substitutions hide from the parser, and strings run as commands are also searched as
  plain text. `opaque_reason` names the commands nobody can check (``$CMD -rf x``,
  ``curl … | sh``, ``python3 -c …``, see `shell.interpreters`).
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
from typing import Callable, Literal, Sequence

from ..rules import PREFIX_SUFFIX
from .parse import INDIRECT, ParsedCommand, SimpleCommand, try_parse
from .cwd import part_directories
from .git import git_opaque_reason
from .interpreters import SHELLS, inline_program, reads_program_from_input, shell_scripts
from .readonly import reads_reveal_environment, reveals_environment
from .unwrap import MAX_CANDIDATES, RUNNERS, unwrap

__all__ = [
    "MAX_CANDIDATES",
    "RUNNERS",
    "SHELLS",
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

_SENSITIVE_NAME = re.compile(r"KEY|TOKEN|SECRET|PASS|CRED|AUTH|ANTHROPIC|PRIVATE|COOKIE|SESSION", re.IGNORECASE)
_TEXT_TOKENS = re.compile(r"[\s;&|()<>`'\"{}$=\\]+")
_WHITESPACE = re.compile(r"\s+")
_MESSAGE_WORDS = 80


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


def allow_matches_part(content: str, part: SimpleCommand, cwd: str | None = None) -> bool:
    """Whether an allow rule covers one part (see the module docstring for the conditions).
    Paths are resolved against ``cwd``; without it an input redirection from a relative path
    is never allowed (it may be a link into ``/proc``)."""
    if not part.plain or any(_sensitive(name) for name in part.expansions):
        return False
    pattern = compile_shell_rule(content)
    words = part.core_words
    if pattern.kind == "prefix":
        matched = pattern.words is not None and words[: len(pattern.words)] == pattern.words
    elif pattern.kind == "wildcard":
        matched = glob_match(pattern.text, _normalize(part.core_text))
    elif part.braced:  # the words bash runs, never the text with its braces
        matched = pattern.words is not None and words == pattern.words
    else:
        matched = (pattern.words is not None and words == pattern.words) or pattern.text == _normalize(part.core_text)
    # No allow rule reaches another process's environment through /proc (it holds the API key);
    # checked last, as it may look at the file system. An explicitly allowed `printenv` is fine:
    # Bash's child environment has no keys.
    return matched and not (
        reveals_environment(words, cwd, environment_commands=False) or reads_reveal_environment(part.reads, cwd)
    )


def _sensitive(name: str) -> bool:
    return name == INDIRECT or bool(_SENSITIVE_NAME.search(name))


def uncovered_parts(
    parsed: ParsedCommand, contents: Sequence[str], is_read_only: Callable[[SimpleCommand, str | None], bool],
    cwd: str | None = None,
) -> list[SimpleCommand]:
    """The commands neither read-only nor allowed by one of ``contents``, each checked in the
    directory it runs in (`shell.cwd`); all of them after a ``cd`` nobody can follow."""
    directories = part_directories(parsed, cwd)
    if directories is None:
        return list(parsed.commands)
    return [c for c, directory in zip(parsed.commands, directories)
            if not is_read_only(c, directory) and not any(allow_matches_part(x, c, directory) for x in contents)]


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
    unwrapped = unwrap(command) if parsed is not None else None
    if unwrapped is None or not unwrapped.complete:  # unparseable, or too convoluted: search the text
        return _text_matches(pattern, command)
    if any(_pattern_matches(pattern, words) for words in unwrapped.candidates):
        return True
    hidden = parsed is not None and (parsed.has_substitution or any(c.dynamic for c in parsed.commands))
    if hidden or unwrapped.runs_text:
        return _text_matches(pattern, command)  # quoting inside quoting: trust the text, not the parse
    return False


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
    """Why nobody can tell from the text what the command runs, or None: a command name known
    only when it runs, a program read from the input (``curl … | sh``, ``source /dev/stdin``,
    ``at``), program text in another language (``python3 -c``, ``perl -e``, an awk program
    calling ``system()``, ``vim -c '!…'``), git running what the text does not show — also
    behind runners (``sudo python3 -c …``).

    Unparseable text is not opaque here: the textual fallback sees all of it."""
    if parsed is None:
        return None
    for part in parsed.commands:
        words = part.core_words
        if part.unexpandable is not None:
            return f"`{_shown((part.text,))}` cannot be checked: {part.unexpandable}"
        if part.dynamic and words:
            return f"the command name in `{part.text}` is only known when it runs"
        if not words:
            continue
        name = words[0].rsplit("/", 1)[-1]
        if name == "eval" and (part.expansions or part.substitution):
            return f"`{part.text}` runs a command built when it runs"
        if name in SHELLS and part.expansions and shell_scripts(name, words):
            return f"`{part.text}` runs a command built when it runs"
    unwrapped = unwrap(parsed.source)
    for words in unwrapped.commands if unwrapped is not None else ():
        why = _opaque_words(words)
        if why is not None:
            return why
    return None


def _opaque_words(words: tuple[str, ...]) -> str | None:
    shown = _shown(words)
    if "$" in words[0] or "`" in words[0]:
        return f"the command name in `{shown}` is only known when it runs"
    if reads_program_from_input(words):
        return f"`{shown}` runs commands it reads from its input"
    inline = inline_program(words)
    if inline is not None:
        return f"{inline} (`{shown}`), which no rule can look into"
    if words[0].rsplit("/", 1)[-1] == "git":
        why = git_opaque_reason(words)
        if why is not None:
            return f"{why} (`{shown}`)"
    return None


def _shown(words: tuple[str, ...]) -> str:
    text = " ".join(words)
    return text if len(text) <= _MESSAGE_WORDS else text[: _MESSAGE_WORDS - 1] + "…"
