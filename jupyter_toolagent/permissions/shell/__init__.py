"""Reading shell commands the way bash does, for permission checks (one concept per module).

``parse`` turns a command into parts on top of `bashlex`; the other modules answer one question
each about a parsed command: which words brace expansion makes (``braces``), which directory each
part runs in (``cwd``), whether a non-zero exit is a plain "no" (``exit``), whether git stays in
the working directory's own repository (``git``), what an interpreter or runner will execute
(``interpreters``, ``runners``, ``unwrap``, ``sed``), how long options abbreviate (``options``),
which paths a command touches (``named_paths``), whether it only reads (``readonly``) and how a
``Bash(...)`` rule matches it (``rules``). Nothing here decides; `permissions.engine` does.
"""

from __future__ import annotations

from .parse import (
    HARMLESS_WRAPPERS,
    ParsedCommand,
    SimpleCommand,
    is_dangerous_variable,
    is_read_only_command,
    is_read_only_parsed,
    is_read_only_part,
    parse_command,
    split_command,
    try_parse,
)

__all__ = [
    "HARMLESS_WRAPPERS",
    "ParsedCommand",
    "SimpleCommand",
    "is_dangerous_variable",
    "is_read_only_command",
    "is_read_only_parsed",
    "is_read_only_part",
    "parse_command",
    "split_command",
    "try_parse",
]
