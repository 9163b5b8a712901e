"""The ``%%agent`` options (SPEC §2.1): declared once, parsed argparse-style, checked up front.

The declarations are IPython ``magic_arguments`` decorators, so ``%%agent?`` shows generated
help. `parse_cell_options` turns the line into a `CellOptions` and checks everything that can
be checked before anything is sent — numbers in range, rule syntax, the mode — so a mistake
is one `UsageError` line naming the problem, and nothing runs.
"""

from __future__ import annotations

import argparse
import shlex
from dataclasses import dataclass, field
from typing import Any, Callable, Collection, Iterable, Iterator, Sequence

from IPython.core.error import UsageError
from IPython.core.magic_arguments import argument, magic_arguments

from ..errors import ConfigError

MODES = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk")


@dataclass
class CellOptions:
    """The options of one ``%%agent`` cell; ``None`` means "not given" (config decides)."""

    model: str | None = None
    new: bool = False
    session: str | None = None
    mode: str | None = None
    allow: list[str] = field(default_factory=list)
    deny: list[str] = field(default_factory=list)
    ask: list[str] = field(default_factory=list)
    tools: list[str] | None = None
    max_turns: int | None = None
    script: str | None = None
    interactive: bool | None = None
    approval_timeout: float | None = None
    dry_run: bool = False
    system: str | None = None


def agent_cell_arguments(func: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate the ``%%agent`` magic with its options (the order here is the help's order)."""
    decorators = [
        magic_arguments(name="%agent"),
        argument("--model", metavar="NAME", help="Claude model id (default: %%config AgentMagics.model, "
                 "else $TOOLAGENT_MODEL, else a current Sonnet)."),
        argument("--new", action="store_true", help="Start a fresh conversation in this session."),
        argument("--session", metavar="NAME", help="Use (or create) the named conversation; a saved one "
                 "(.toolagent/sessions/NAME.jsonl) is resumed."),
        argument("--mode", choices=MODES, help="Permission mode for this cell."),
        argument("--allow", metavar="RULE", action="append", default=[],
                 help="Allow calls matching RULE, e.g. 'Bash(git log:*)' or 'RunPython'. Repeatable."),
        argument("--deny", metavar="RULE", action="append", default=[],
                 help="Deny calls matching RULE (a whole-tool deny also hides the tool). Repeatable."),
        argument("--ask", metavar="RULE", action="append", default=[],
                 help="Always ask before calls matching RULE. Repeatable."),
        argument("--tools", metavar="LIST",
                 help="Comma-separated tool names the model may see; plain functions of the "
                      "notebook named here become tools."),
        argument("--max-turns", metavar="N", type=int, help="Most model requests in this cell (default 30)."),
        argument("--script", metavar="VAR",
                 help="Use a scripted model whose turns are in the notebook variable VAR."),
        argument("--interactive", action=argparse.BooleanOptionalAction, default=None,
                 help="Force (--interactive) or forbid (--no-interactive) approval buttons; "
                      "default: detected from the front end."),
        argument("--approval-timeout", metavar="SECONDS", type=float,
                 help="Seconds to wait for an approval; then the call is denied (default 600)."),
        argument("--dry-run", action="store_true", help="Show the exact request that would be sent; send nothing."),
        argument("--system", metavar="TEXT", help="Extra instructions appended to the system prompt."),
    ]
    for decorate in reversed(decorators[1:]):
        func = decorate(func)
    return decorators[0](func)


def parse_cell_options(magic_func: Callable[..., Any], line: str) -> CellOptions:
    """Parse and check the ``%%agent`` line, or raise one `UsageError`."""
    try:
        argv = shlex.split(line)  # POSIX quoting: --allow 'Bash(git log:*)' is one rule, unquoted
    except ValueError as exc:  # e.g. "No closing quotation"
        raise UsageError(f"cannot read the %%agent options: {exc}") from None
    # MagicArgumentParser raises UsageError; `magic_arguments()` attached it to the function
    ns = magic_func.parser.parse_args(argv)  # type: ignore[attr-defined]
    options = CellOptions(
        model=_nonempty(ns.model, "--model"),
        new=ns.new,
        session=_nonempty(ns.session, "--session"),
        mode=ns.mode,
        allow=list(ns.allow),
        deny=list(ns.deny),
        ask=list(ns.ask),
        tools=_tool_list(ns.tools),
        max_turns=ns.max_turns,
        script=_nonempty(ns.script, "--script"),
        interactive=ns.interactive,
        approval_timeout=ns.approval_timeout,
        dry_run=ns.dry_run,
        system=ns.system,
    )
    if options.max_turns is not None and options.max_turns < 1:
        raise UsageError(f"--max-turns must be at least 1, not {options.max_turns}")
    if options.approval_timeout is not None and not options.approval_timeout >= 0:
        raise UsageError(f"--approval-timeout must be a number of seconds >= 0, not {options.approval_timeout}")
    if options.script is not None and not options.script.isidentifier():
        raise UsageError(f"--script needs a variable name, not {options.script!r}")
    check_rules(allow=options.allow, deny=options.deny, ask=options.ask)
    return options


def check_rules(*, allow: Sequence[str] = (), deny: Sequence[str] = (), ask: Sequence[str] = (), origin: str = "--") -> None:
    """Parse every rule now so a typo is refused before the run (a silently ignored deny rule
    is worse than no rule)."""
    from ..permissions.rules import parse_rule

    for flag, rules in (("allow", allow), ("deny", deny), ("ask", ask)):
        for rule in rules:
            try:
                parse_rule(rule)
            except ConfigError as exc:
                raise UsageError(f"{origin}{flag}: {exc}") from None


def check_rule_tools(known: Collection[str], sources: Iterable[tuple[str, str, bool]]) -> list[str]:
    """Check that every rule names a tool this cell can see; return warnings to show.

    ``sources`` yields ``(origin, rule text, persistent)``. A rule that names no tool would
    never match — a misspelled deny rule (``bash(rm:*)``) is a deny that silently does not
    apply — so a likely typo is a `UsageError` wherever the rule comes from, and so is any
    unknown name in this cell's own flags (the cell's tools are all known now). A persistent
    rule (``%config``, the settings file) with no close name only warns: it may be for a
    ``@tool`` function defined in a later cell.
    """
    from ..permissions.rules import parse_rule, tool_name_problem

    warnings: list[str] = []
    for origin, text, persistent in sources:
        problem = tool_name_problem(parse_rule(text), known)
        if problem is None:
            continue
        if problem.meant is not None or not persistent:
            raise UsageError(f"{origin}: {problem.message}")
        warnings.append(f"{origin}: {problem.message}; it applies once a tool of that name exists")
    return warnings


def rule_sources(options: CellOptions, magics: Any, permissions: Any) -> Iterator[tuple[str, str, bool]]:
    """Every rule a cell runs with, as `check_rule_tools` reads them: the cell's flags, the
    ``AgentMagics`` traits and the settings file's rules (``permissions`` is the session's
    `PermissionContext`, or None)."""
    for flag in ("allow", "deny", "ask"):
        for text in getattr(options, flag):
            yield f"--{flag}", text, False
        for text in getattr(magics, flag):
            yield f"AgentMagics.{flag}", text, True
    settings = getattr(permissions, "settings", None)
    for entry in getattr(permissions, "rules", ()):
        if entry.source == "settings":
            where = settings.path if settings is not None and settings.path is not None else "settings file"
            yield f"{where}: permissions.{entry.behavior}", str(entry.rule), True


def check_mode(mode: str, origin: str) -> str:
    if mode not in MODES:
        raise UsageError(f"{origin}: unknown permission mode {mode!r}; expected one of: {', '.join(MODES)}")
    return mode


def _nonempty(value: str | None, flag: str) -> str | None:
    if value is not None and not value.strip():
        raise UsageError(f"{flag} needs a value")
    return value


def _tool_list(value: str | None) -> list[str] | None:
    if value is None:
        return None
    names = [part.strip() for part in value.split(",") if part.strip()]
    if not names:
        raise UsageError("--tools needs at least one tool name")
    return names
