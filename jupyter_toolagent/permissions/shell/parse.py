"""Shell command parsing for permission checks, on top of `bashlex`.

Rules about shell commands are only as good as the splitting under them: ``ls; rm -rf x`` must be
two commands, ``echo "a;b"`` one. A real parser gets quoting, escapes, pipelines, newlines,
subshells and substitutions right; when it cannot parse a command (``[[ ]]``, ``case``,
arithmetic ``$((…))``), callers treat it as unknown: never allowed by content rules, never
read-only, and checked against deny rules by a conservative textual fallback.

Vocabulary:

* a *part* is one simple command of the top-level list or pipeline (also those inside
  ``if``/``for``/``while`` bodies, subshells, brace groups and function bodies);
* *nested* commands run inside ``$(…)``, backticks or ``<(…)``/``>(…)``; they are checked like
  parts, and their presence alone makes a command not read-only;
* *harmless wrappers* are stripped before matching (`HARMLESS_WRAPPERS`), so ``timeout 5 git log``
  is matched as ``git log`` — by allow and deny rules alike;
* leading ``NAME=value`` assignments are stripped for matching; a part that only assigns, or sets
  a variable that changes what runs (`is_dangerous_variable`), is never auto-allowed;
* *expansions* are the variables a command expands (``$HOME``, ``"${X}"``, in a here-document
  or a here-string). A command that expands any variable is never read-only: its output can
  carry a secret such as the API key (``echo $ANTHROPIC_API_KEY``).

A redirection on a compound command (``{ ls; } > out``) is a write by every command inside it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ...errors import BraceOverflow, BraceUnreadable, ShellParseError
from .braces import MAX_BRACE_WORDS, expand_braces
from .cwd import part_directories
from .readonly import reads_reveal_environment, words_are_read_only
from .wrappers import HARMLESS_WRAPPERS, strip_wrappers  # noqa: F401 (HARMLESS_WRAPPERS re-exported)

SAFE_SINKS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/fd/1", "/dev/fd/2", "-"})
"""Output redirection to these is not a file write (``2>/dev/null``, ``>&2``, ``>&-``)."""

MAX_COMMAND_CHARS = 50_000
"""Longer commands are not parsed (treated as unknown) so a check can never take long."""

_OUTPUT_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
_NETWORK_PATH = re.compile(r"^/dev/(tcp|udp)/")
_HIDDEN_SUBSTITUTION = re.compile(r"\$\(|`|<\(|>\(")
_TIME_KEYWORD = re.compile(r"(^\s*|[;&|(\n!]\s*|\b(?:then|do|else)\s+)(time(?:\s+-p)?)(?=\s)")
_PARAMETER_NAME = re.compile(r"^[#!]?([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!\-])")
_TEXT_EXPANSION = re.compile(r"\$(\{[#!]?)?([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!\-])")
INDIRECT = "!"
"""Expansion name recorded for ``${!name}`` / ``${!prefix*}``: could be any variable."""

DANGEROUS_VARIABLES = frozenset(
    {
        "PATH", "IFS", "ENV", "BASH_ENV", "SHELLOPTS", "BASHOPTS", "PROMPT_COMMAND", "PS4", "HOME",
        "ZDOTDIR", "XDG_CONFIG_HOME", "PAGER", "MANPAGER", "LESSOPEN", "LESSCLOSE", "EDITOR",
        "VISUAL", "BROWSER", "NODE_OPTIONS", "PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT",
        "RUBYLIB", "JAVA_TOOL_OPTIONS", "TMPDIR", "CDPATH", "GLOBIGNORE",
    }
)
_DANGEROUS_PREFIXES = ("LD_", "DYLD_", "GIT_", "PYTHON", "BASH_FUNC_", "SSH_")


def is_dangerous_variable(name: str) -> bool:
    """Setting this variable changes what a command runs (``PATH=…``, ``LD_PRELOAD=…``)."""
    return name in DANGEROUS_VARIABLES or name.startswith(_DANGEROUS_PREFIXES)


@dataclass(frozen=True)
class SimpleCommand:
    """One simple command as the permission checks see it.

    ``words`` are the command's words after quote removal, without leading assignments and
    redirections; ``core_index`` points past the harmless wrappers; ``core_text`` is the source
    text from that word to the end of the command (used for exact and wildcard rules).
    ``dynamic`` means the text does not say what runs: the command word is an expansion or a
    glob, or a substitution hides inside ``${…}`` or an unquoted here-document.
    """

    text: str
    words: tuple[str, ...]
    core_index: int
    core_text: str
    assignments: tuple[str, ...]
    writes: tuple[str, ...]
    dynamic: bool
    nested: bool
    substitution: bool = False
    """A ``$(…)``, backtick or process substitution in its words (its commands are listed
    separately, as nested commands)."""
    expansions: tuple[str, ...] = ()
    """Names of the variables it expands (`INDIRECT` for ``${!…}``)."""
    reads: tuple[str, ...] = ()
    """Files its input redirections read (``< /proc/1/environ``), its own and its enclosing
    compound commands' — what it reads without naming it among its words."""
    braced: bool = False
    """Brace expansion changed its words (``words`` and ``core_text`` are the expanded ones)."""
    unexpandable: str | None = None
    """Why its braces could not be expanded (too many words, unreadable quoting): it is then
    `dynamic` and nobody can check it."""

    @property
    def core_words(self) -> tuple[str, ...]:
        return self.words[self.core_index :]

    @property
    def only_assignments(self) -> bool:
        return not self.core_words

    @property
    def sets_dangerous_variable(self) -> bool:
        return any(is_dangerous_variable(name) for name in self.assignments)

    @property
    def plain(self) -> bool:
        """No file writes, no dynamic parts, no dangerous variables, a real command word:
        the only kind of command prefix and wildcard allow rules may match."""
        return not (self.writes or self.dynamic or self.sets_dangerous_variable or self.only_assignments)


@dataclass(frozen=True)
class ParsedCommand:
    source: str
    commands: tuple[SimpleCommand, ...]
    """Every simple command, parts and nested ones, in source order."""
    has_substitution: bool
    defines_function: bool = False
    """``f() { …; }``: later parts may call a name that now means something else."""
    redirect_expansions: tuple[str, ...] = ()
    """Variables expanded by a compound command's redirections (``{ cat; } <<< "$KEY"``)."""
    redirect_reads: tuple[str, ...] = ()
    """Files a compound command's input redirections read (``(cat) < /proc/1/environ``)."""

    @property
    def parts(self) -> tuple[SimpleCommand, ...]:
        return tuple(c for c in self.commands if not c.nested)

    @property
    def compound(self) -> bool:
        return len(self.commands) > 1

    @property
    def writes(self) -> tuple[str, ...]:
        return tuple(w for c in self.commands for w in c.writes)


def parse_command(command: str) -> ParsedCommand:
    """Parse ``command`` into simple commands, or raise `ShellParseError` (results cached)."""
    result = _parse_cached(command)
    if isinstance(result, ShellParseError):
        raise ShellParseError(result.command, result.problem)
    return result


def try_parse(command: str) -> ParsedCommand | None:
    """`parse_command`, or None for a command that cannot be parsed."""
    result = _parse_cached(command)
    return None if isinstance(result, ShellParseError) else result


@lru_cache(maxsize=2048)
def _parse_cached(command: str) -> ParsedCommand | ShellParseError:
    try:
        return _parse(command)
    except ShellParseError as exc:
        return exc
    except RecursionError:
        return ShellParseError(command, "nested too deeply")
    except Exception as exc:  # a tree shape the walker does not know: unknown, never allowed
        return ShellParseError(command, f"unexpected parse tree ({type(exc).__name__}: {exc})")


def _parse(command: str) -> ParsedCommand:
    if not command.strip():
        raise ShellParseError(command, "empty command")
    if len(command) > MAX_COMMAND_CHARS:
        raise ShellParseError(command, f"longer than {MAX_COMMAND_CHARS} characters")
    source = command
    # bashlex has no `time` keyword; blank it out (same length, so positions hold).
    blanked = _TIME_KEYWORD.sub(lambda m: m.group(1) + " " * len(m.group(2)), source)
    try:
        trees = _bashlex_parse(source)
    except ShellParseError:
        if blanked == source:
            raise
        try:
            trees = _bashlex_parse(blanked)
        except ShellParseError as exc:
            raise ShellParseError(command, exc.problem) from None
        source = blanked
    walker = _Walker(source)
    for tree in trees:
        walker.walk(tree, nested=False, inherited_writes=())
    if not walker.commands:
        raise ShellParseError(command, "no command found")
    return ParsedCommand(
        command, tuple(walker.commands), walker.substitution, walker.function, tuple(walker.redirect_expansions),
        tuple(walker.inherited_reads)
    )


def split_command(command: str) -> list[str]:
    """The text of each part of ``command`` (``ls; rm x`` → ``["ls", "rm x"]``).

    Raises `ShellParseError` when the command cannot be parsed.
    """
    return [part.text for part in parse_command(command).parts]


def is_read_only_part(part: SimpleCommand, cwd: str | None = None, own_directory: str | None = None) -> bool:
    """A known read-only command without unsafe options, writes, substitutions or expansions,
    that does not reveal the environment (relative paths resolved against ``cwd``, the
    directory the part runs in; ``own_directory`` is the session's, default ``cwd``). Nothing
    is read-only when it runs in ``/``: ``grep -r KEY .`` there reaches ``/proc``."""
    if cwd == "/" or not part.plain or part.substitution or part.expansions:
        return False
    if reads_reveal_environment(part.reads, cwd):  # `cat < /proc/1/environ`, `cat < link_to_it`
        return False
    return words_are_read_only(part.core_words, cwd, own_directory)


def is_read_only_parsed(parsed: ParsedCommand, cwd: str | None = None) -> bool:
    """Every part read-only in the directory it runs in (`shell.cwd`): never one after a
    change of directory that cannot be followed, nor one that runs in ``/``."""
    directories = part_directories(parsed, cwd)
    return (
        directories is not None
        and not parsed.has_substitution
        and not parsed.defines_function
        and not parsed.redirect_expansions
        and not reads_reveal_environment(parsed.redirect_reads, cwd)
        and all(is_read_only_part(c, directory, cwd) for c, directory in zip(parsed.commands, directories))
    )


def is_read_only_command(command: str, cwd: str | None = None) -> bool:
    """True only if every part is a known read-only command without unsafe options, and the
    command has no substitution, no output redirection to a file, no dynamic command word,
    no variable expansion and no dangerous assignment. Unparseable and unknown commands are not
    read-only, and without ``cwd`` neither is an input redirection from a relative path (it
    cannot be resolved, and may be a link into ``/proc``)."""
    parsed = try_parse(command)
    return parsed is not None and is_read_only_parsed(parsed, cwd)


def _bashlex_parse(source: str) -> list[Any]:
    import bashlex  # on first use: it builds its parser tables at import (~0.1 s), %load_ext need not wait

    try:
        return list(bashlex.parse(source))
    except NotImplementedError as exc:
        raise ShellParseError(source, f"unsupported syntax ({exc})") from None
    except RecursionError:
        raise
    except Exception as exc:  # ParsingError, MatchedPairError, and the odd internal error
        raise ShellParseError(source, str(exc) or type(exc).__name__) from None


class _Walker:
    """Collects simple commands from a bashlex tree, noting substitutions on the way."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.commands: list[SimpleCommand] = []
        self.substitution = False
        self.function = False
        self.redirect_expansions: list[str] = []
        self.inherited_reads: list[str] = []
        self._word_ends: dict[int, int] = {}

    def walk(self, node: Any, *, nested: bool, inherited_writes: tuple[str, ...]) -> None:
        kind = node.kind
        if kind in ("commandsubstitution", "processsubstitution"):
            self.substitution = True
            self.walk(node.command, nested=True, inherited_writes=())
            return
        if kind == "function":
            self.function = True
        if kind == "command":
            self.commands.append(self._simple(node, nested, inherited_writes))
        redirects = getattr(node, "redirects", None) or []
        if kind != "command" and redirects:
            extra = tuple(t for r in redirects for t in self._targets(r, _write_target(r)))
            inherited_writes = inherited_writes + extra
            self.inherited_reads.extend(t for r in redirects for t in self._targets(r, _read_target(r)))
            for redirect in redirects:
                self.walk(redirect, nested=nested, inherited_writes=())
                self.redirect_expansions.extend(_redirect_expansions(redirect))
        for child in _children(node):
            self.walk(child, nested=nested, inherited_writes=inherited_writes)

    def _simple(self, node: Any, nested: bool, inherited_writes: tuple[str, ...]) -> SimpleCommand:
        assignments: list[str] = []
        words: list[tuple[str, int, bool]] = []
        writes: list[str] = list(inherited_writes)
        reads: list[str] = []
        expansions: list[str] = []
        dynamic = False
        substitution = _has_substitution(node)
        for part in node.parts:
            if part.kind == "assignment" and not words:
                assignments.append(part.word.split("=", 1)[0])
                dynamic = dynamic or _hides_substitution(part)
                expansions.extend(_expansions(part))
            elif part.kind in ("word", "assignment"):
                words.append((part.word, part.pos[0], _is_expansion(part)))
                self._word_ends[part.pos[0]] = part.pos[1]
                dynamic = dynamic or _hides_substitution(part)
                expansions.extend(_expansions(part))
            elif part.kind == "redirect":
                writes.extend(self._targets(part, _write_target(part)))
                reads.extend(self._targets(part, _read_target(part)))
                expansions.extend(_redirect_expansions(part))
                heredoc = getattr(part, "heredoc", None)
                if heredoc is not None and _HIDDEN_SUBSTITUTION.search(heredoc.value or ""):
                    dynamic = True
        words, braced, brace_problem = self._expand_braces(words)
        if brace_problem:
            dynamic = True
        plain_words = [w for w, _, _ in words]
        core, env_assigned = strip_wrappers(plain_words)
        if core < len(words):
            word, start, expansion = words[core]
            globbed = word != "[" and bool(re.search(r"[*?\[]", word))  # `[` is the test command
            dynamic = dynamic or expansion or not word or globbed
            core_text = self.source[start : node.pos[1]].strip()
            if braced:  # rules see the words bash runs, not the braces
                core_text = " ".join(plain_words[core:])
        else:
            core_text = ""
        return SimpleCommand(
            text=self.source[node.pos[0] : node.pos[1]].strip(),
            words=tuple(plain_words),
            core_index=core,
            core_text=core_text,
            assignments=tuple(assignments) + env_assigned,
            writes=tuple(writes),
            dynamic=dynamic,
            nested=nested,
            substitution=substitution,
            expansions=tuple(dict.fromkeys(expansions)),
            reads=tuple(reads),
            braced=braced,
            unexpandable=brace_problem,
        )

    def _targets(self, redirect: Any, target: str | None) -> list[str]:
        """A redirection's file as written and as brace expansion makes it (``> .git/confi{g..g}``
        is ``> .git/config``; more than one word is an error in bash, but all count here)."""
        if target is None:
            return []
        output = redirect.output
        try:
            expanded = expand_braces(self.source[output.pos[0] : output.pos[1]])
        except (BraceOverflow, BraceUnreadable):
            return [target, "$unexpandable"]  # `$`: a target known only when it runs
        return [target, *(w for w in expanded or () if w != target)]

    def _expand_braces(
        self, words: list[tuple[str, int, bool]]
    ) -> tuple[list[tuple[str, int, bool]], bool, str | None]:
        """Each word replaced by the words its brace expansion makes (`shell.braces`), whether
        any word changed, and why expansion failed (too many words, unreadable quoting)."""
        out: list[tuple[str, int, bool]] = []
        braced = False
        for word, start, expansion in words:
            end = self._word_ends.get(start)
            try:
                expanded = expand_braces(self.source[start:end]) if end is not None else None
            except (BraceOverflow, BraceUnreadable) as exc:
                return words, False, str(exc)
            if expanded is None or expanded == (word,):
                out.append((word, start, expansion))
                continue
            braced = True
            out.extend((w, start, expansion) for w in expanded)
            if len(out) > MAX_BRACE_WORDS:
                return words, False, f"brace expansion yields more than {MAX_BRACE_WORDS} words"
        return out, braced, None


def _children(node: Any) -> list[Any]:
    children: list[Any] = []
    for attr in ("parts", "list"):
        children.extend(getattr(node, attr, None) or [])
    output = getattr(node, "output", None)
    if hasattr(output, "kind"):
        children.append(output)
    return children


def _has_substitution(node: Any) -> bool:
    for child in _children(node):
        if child.kind in ("commandsubstitution", "processsubstitution") or _has_substitution(child):
            return True
    return False


def _is_expansion(word: Any) -> bool:
    return any(p.kind in ("parameter", "commandsubstitution", "processsubstitution") for p in word.parts or [])


def _expansions(node: Any) -> list[str]:
    """Variable names expanded anywhere under ``node`` (not inside nested substitutions,
    which are commands of their own)."""
    found: list[str] = []
    for p in getattr(node, "parts", None) or []:
        if p.kind == "parameter":
            found.append(_parameter_name(getattr(p, "value", "") or ""))
        elif p.kind not in ("commandsubstitution", "processsubstitution"):
            found.extend(_expansions(p))
    return found


def _parameter_name(value: str) -> str:
    if value.startswith("!"):
        return INDIRECT
    match = _PARAMETER_NAME.match(value)
    return match.group(1) if match else INDIRECT


def _redirect_expansions(redirect: Any) -> list[str]:
    found: list[str] = []
    output = getattr(redirect, "output", None)
    if hasattr(output, "kind"):
        found.extend(_expansions(output))
    heredoc = getattr(redirect, "heredoc", None)
    if heredoc is not None:
        for match in _TEXT_EXPANSION.finditer(heredoc.value or ""):
            found.append(INDIRECT if (match.group(1) or "").endswith("!") else match.group(2))
    return found


def _hides_substitution(node: Any) -> bool:
    """A substitution bashlex did not parse, e.g. inside ``${x:-$(cmd)}``."""
    for p in getattr(node, "parts", None) or []:
        if p.kind == "parameter" and _HIDDEN_SUBSTITUTION.search(getattr(p, "value", "") or ""):
            return True
        if _hides_substitution(p):
            return True
    return False


def _read_target(redirect: Any) -> str | None:
    """The file an input redirection reads (``<``, ``0<``, ``<>``), or None."""
    output: Any = getattr(redirect, "output", None)
    if redirect.type not in ("<", "<>") or not hasattr(output, "word"):
        return None
    return output.word


def _write_target(redirect: Any) -> str | None:
    """The file an output redirection writes, or None for input, fd duplication and sinks.

    ``/dev/tcp/…`` and ``/dev/udp/…`` count as writes in either direction (network access)."""
    output = redirect.output
    if not hasattr(output, "word"):  # a file descriptor number, or `-` (close)
        return None
    target = output.word
    if _NETWORK_PATH.match(target):
        return target
    if redirect.type not in _OUTPUT_REDIRECTS or target in SAFE_SINKS:
        return None
    if redirect.type == ">&" and target.isdigit():
        return None
    return target
