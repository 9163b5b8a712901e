"""Permission rules as text (SPEC §5.2): ``Tool`` or ``Tool(content)``.

A rule is parsed once, where it enters the system (a magic flag, an ``Agent`` argument, a
settings file, "Always allow"), so a typo is reported before anything is sent instead of
silently matching nothing. What the content *means* depends on what the call touches and is
decided at match time: a shell command for ``Bash(...)`` (`shell.rules`), a gitignore-style
path pattern for file tools (`file_rules`).

``Tool(*)`` is the same rule as ``Tool``: the whole tool.
"""

from __future__ import annotations

import difflib
import re
import shlex
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import RuleSyntaxError

RuleBehavior = Literal["allow", "deny", "ask"]
BEHAVIORS: tuple[RuleBehavior, ...] = ("allow", "deny", "ask")

SHELL_TOOLS = frozenset({"Bash"})
"""Tools whose rule content is a shell command (prefix ``cmd:*`` rules are checked to split)."""

_TOOL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
PREFIX_SUFFIX = ":*"
MCP_PREFIX = "mcp__"
"""MCP tools (``mcp__server__tool``) come and go with their servers, so a rule for one is never
refused for naming no tool; ``mcp__server`` rules every tool of that server."""


@dataclass(frozen=True)
class PermissionRule:
    """One parsed rule. ``content`` is None for a whole-tool rule."""

    tool: str
    content: str | None = None

    @property
    def whole_tool(self) -> bool:
        return self.content is None

    @property
    def is_prefix(self) -> bool:
        """``Bash(git push:*)``: the command's words start with ``git push``."""
        return self.content is not None and self.content.endswith(PREFIX_SUFFIX) and len(self.content) > 2

    def __str__(self) -> str:
        return self.tool if self.content is None else f"{self.tool}({self.content})"


@dataclass(frozen=True, eq=False)
class RuleEntry:
    """A rule with what it does and where it came from.

    ``base_dir`` is the directory relative file patterns are resolved against: the project
    directory for a settings-file rule, None (the working directory) otherwise. Entries compare
    by identity, so removing one (a cell's flags after the run) removes exactly that one.
    """

    rule: PermissionRule
    behavior: RuleBehavior
    source: str
    base_dir: Path | None = None

    def __str__(self) -> str:
        return f"{self.behavior} {self.rule} ({self.source})"

    def __repr__(self) -> str:
        return f"RuleEntry({str(self.rule)!r}, {self.behavior!r}, source={self.source!r})"


def parse_rule(text: str) -> PermissionRule:
    """Parse ``Tool`` or ``Tool(content)``; raise `RuleSyntaxError` naming the problem."""
    if not isinstance(text, str):
        raise RuleSyntaxError(repr(text), f"a rule must be a string, not {type(text).__name__}")
    rule = text.strip()
    if not rule:
        raise RuleSyntaxError(text, "empty rule")
    if _CONTROL.search(rule):
        raise RuleSyntaxError(text, "control characters (newlines, tabs…) are not allowed in a rule")
    if "(" not in rule:
        if ")" in rule:
            raise RuleSyntaxError(text, "unbalanced parentheses: ')' without '('")
        if rule.startswith(MCP_PREFIX) and rule.endswith("__*") and len(rule) > len(MCP_PREFIX) + 3:
            rule = rule[:-3]  # mcp__server__* is the server rule mcp__server
        _check_tool_name(text, rule)
        return PermissionRule(rule)
    tool, _, rest = rule.partition("(")
    tool = tool.strip()
    if not tool:
        raise RuleSyntaxError(text, "empty tool name before '('")
    _check_tool_name(text, tool)
    if not rest.endswith(")"):
        raise RuleSyntaxError(text, "unbalanced parentheses: the rule must end with ')'")
    content = rest[:-1]
    problem = _unbalanced(content)
    if problem:
        raise RuleSyntaxError(text, problem)
    if not content.strip():
        raise RuleSyntaxError(text, f"empty content: write `{tool}` (or `{tool}(*)`) for the whole tool")
    content = content.strip()
    if content == "*":
        return PermissionRule(tool)
    if tool in SHELL_TOOLS and content.endswith(PREFIX_SUFFIX):
        prefix = content[: -len(PREFIX_SUFFIX)]
        try:
            words = shlex.split(prefix)
        except ValueError as exc:
            raise RuleSyntaxError(text, f"the command prefix {prefix!r} does not split into words ({exc})") from None
        if not words:
            raise RuleSyntaxError(text, "empty command prefix before ':*'")
    return PermissionRule(tool, content)


def _check_tool_name(text: str, tool: str) -> None:
    if not _TOOL_NAME.fullmatch(tool):
        bad = sorted({c for c in tool if not re.match(r"[A-Za-z0-9_.\-]", c)})
        what = f"characters {''.join(bad)!r}" if bad else "a leading digit, '.' or '-'"
        raise RuleSyntaxError(text, f"bad tool name {tool!r}: {what} not allowed (letters, digits, _ . -)")


def _unbalanced(content: str) -> str | None:
    """Parentheses must balance, except inside quotes or after a backslash."""
    depth = 0
    quote: str | None = None
    escaped = False
    for ch in content:
        if escaped:
            escaped = False
        elif ch == "\\" and quote != "'":
            escaped = True
        elif quote is not None:
            if ch == quote:
                quote = None
        elif ch in ("'", '"'):
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                return "unbalanced parentheses: ')' without '(' in the content"
    if depth > 0:
        return "unbalanced parentheses: '(' without ')' in the content"
    return None


@dataclass(frozen=True)
class ToolNameProblem:
    """A rule naming no known tool. ``meant`` is the tool it most likely meant (None when no
    name is close): a likely typo is an error, a name with nothing close may be a tool that
    is defined later."""

    message: str
    meant: str | None


def tool_name_problem(rule: PermissionRule, known: Collection[str]) -> ToolNameProblem | None:
    """Why ``rule`` names none of the ``known`` tools (None when it names one).

    Rules match tool names exactly, so ``bash(rm:*)`` is a rule for a tool nobody has: as a deny
    rule it would silently never apply. The message names the tool most likely meant (same
    name in another case first, then a close spelling).
    """
    if rule.tool in known or rule.tool.startswith(MCP_PREFIX):
        return None
    folded = {name.casefold(): name for name in known}
    meant = folded.get(rule.tool.casefold())
    if meant is None:
        close = difflib.get_close_matches(rule.tool, sorted(known), n=1, cutoff=0.75)
        meant = close[0] if close else None
    if meant is not None:
        fixed = PermissionRule(meant, rule.content)
        return ToolNameProblem(f"rule {str(rule)!r} names no tool {rule.tool!r}; did you mean {str(fixed)!r}?", meant)
    return ToolNameProblem(f"rule {str(rule)!r} names no tool {rule.tool!r} (tools: {', '.join(sorted(known))})", None)


def parse_rule_text(text: str) -> tuple[RuleBehavior, PermissionRule]:
    """``deny:Bash(rm:*)`` / ``ask:…`` / plain ``Bash(ls:*)`` (allow), as session rules are listed."""
    head, sep, rest = text.partition(":")
    if sep and head in BEHAVIORS:
        return head, parse_rule(rest)
    return "allow", parse_rule(text)
