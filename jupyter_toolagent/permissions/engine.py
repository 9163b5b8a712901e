"""The decision order of SPEC §5.3, as one side-effect-free function: `decide`.

    1  whole-tool deny rule                → deny
    1b content deny rule (any part)        → deny   (deny > ask > allow whatever the source)
    2  whole-tool ask rule                 → ask
    3  the tool's own check_permissions    (raising = passthrough)
    4  … its deny                          → deny
    5  content ask rule                    → ask    (also: a shell command nobody can check
                                                     against the content deny/ask rules)
    6  safety check                        → ask, in every mode (writes to protected files;
                                                     reads of /proc, /sys, /dev, credentials files)
    7  bypassPermissions                   → allow
    8  whole-tool or matching allow rule   → allow  (Bash: every part allowed or read-only)
    9  the tool's own allow / ask, then read-only tool or input → allow / ask / allow
                                           (a reading tool only inside the working directory;
                                           a read-only shell command only where a sandbox
                                           works, or the settings opt out: SPEC §5.5)
    10 otherwise                           → ask
    then the mode maps an ask (`modes.apply_mode`).

A PreToolUse hook's proposal (§5.4) is folded in before the mode: a hook deny denies; a hook
ask turns an allow into an ask; a hook allow only skips the *default* ask of step 10 — an ask
because of a rule, the tool or a safety check still asks, and every deny still denies.

`decide` asks nobody and records nothing; `RuleBasedPermissions` does that.

For shell commands the engine's own classification decides what is read-only (it knows the
working directory: ``cat link`` and ``cat < link`` where ``link`` points into ``/proc`` are not
read-only, and no allow rule covers them either), and in
a session whose working directory is ``/`` no shell command is read-only (``grep -r`` there
reaches every process's environment).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any, Iterable

from ..core.permission_types import FileAccess, NotebookEdit, PermissionDecision, PermissionSubject, ShellCommand
from ..core.result_texts import hook_denied
from ..core.tool import ToolPool
from ..core.tool_call import ToolCall
from .context import ACCEPT_EDITS_GRANT, PermissionContext
from .modes import apply_mode, rule_surface
from .file_rules import compile_pattern, is_inside, path_rule_content, resolve_for_rules
from .read_safety import check_file_read, read_auto_allowed
from .rules import RuleBehavior, RuleEntry, parse_rule
from .safety import check_file_edit, check_shell
from .shell import ParsedCommand, is_read_only_parsed, is_read_only_part
from .shell.cwd import part_directories
from .shell.named_paths import named_paths
from .shell.rules import (
    allow_matches_part,
    opaque_reason,
    restriction_matches,
    suggest_content,
    try_parse,
    uncovered_parts,
    whole_command_matches,
)

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ..core.tool import Tool, ToolUseContext

READ_RULE, EDIT_RULE = "Read", "Edit"
"""``Read(...)`` rules cover every reading tool, ``Edit(...)`` every editing tool."""

_RULE_CAUSES = frozenset({"rule", "tool", "safety"})
"""Asks a hook allow cannot skip (§5.4)."""


@dataclass
class _Call:
    """What the rules look at for one call."""

    tool: "Tool"
    names: frozenset[str]
    parsed_input: "BaseModel | None"
    subject: PermissionSubject | None
    read_only: bool
    path: str | None = None
    shell: ParsedCommand | None = None
    problem: str | None = None

    def describe(self) -> str:
        if isinstance(self.subject, ShellCommand):
            return f"the command `{self.subject.command.strip()}`"
        if isinstance(self.subject, FileAccess):
            return f"{'reading' if self.subject.access == 'read' else 'editing'} {self.path}"
        if isinstance(self.subject, NotebookEdit):
            return f"{self.tool.name} ({self.subject.action})"
        return f"{self.tool.name}"


def permission_context(ctx: "ToolUseContext") -> PermissionContext:
    """The context's rule state, or an empty default one rooted at ``ctx.options.cwd``."""
    perms = getattr(ctx, "permissions", None)
    return perms if isinstance(perms, PermissionContext) else PermissionContext(cwd=ctx.options.cwd)


def path_denied(perms: PermissionContext, path: str, *, access: str = "read") -> RuleEntry | None:
    """The deny rule covering ``path`` for reading (or ``access="edit"``), else None.

    For tools that list or search many files (Grep, Glob): the permission decision covers the
    directory they were given; they drop each result this returns a rule for."""
    resolved = resolve_for_rules(path, perms.cwd)
    kind = READ_RULE if access == "read" else EDIT_RULE
    for entry in perms.entries("deny"):
        if entry.rule.whole_tool or entry.rule.tool != kind:
            continue
        if compile_pattern(entry.rule.content or "", str(entry.base_dir or perms.cwd)).matches(resolved, widening=False):
            return entry
    return None


async def decide(
    call: ToolCall,
    ctx: "ToolUseContext",
    *,
    hook_decision: PermissionDecision | None = None,
) -> PermissionDecision:
    """Allow, deny or ask for one call, with ``decided_by``, ``rule``, ``message`` and
    ``suggested_rule`` filled in. Pure: it asks nobody and records nothing. The call's parsed
    input is used as it is (never re-validated from its observable dict)."""
    tool = call.tool
    if hook_decision is not None and hook_decision.behavior == "deny":
        return PermissionDecision.deny(hook_decision.message or hook_denied(tool.name), "hook")
    perms = permission_context(ctx)
    described = _describe(call, ctx, perms)
    decision = await _rule_decision(described, perms, ctx)
    decision = _fold_hook(decision, hook_decision, described)
    if decision.behavior == "ask" and decision.decided_by in ("default", "tool") and described.problem is None:
        decision.suggested_rule = suggested_rule(described, perms)  # an allow rule would skip this ask
    edit_inside = (
        isinstance(described.subject, FileAccess) and described.subject.access == "edit"
        and described.path is not None and is_inside(described.path, perms.cwd)
    ) or isinstance(described.subject, NotebookEdit)  # the open notebook: an edit acceptEdits allows
    return apply_mode(decision, perms.mode, read_only=described.read_only, edit_inside_cwd=edit_inside,
                      tool_name=tool.name, surface=rule_surface(ctx))


async def decide_input(
    tool: "Tool", input: dict[str, Any], ctx: "ToolUseContext", *, hook_decision: PermissionDecision | None = None
) -> PermissionDecision:
    """`decide` for a raw input, parsed strictly as the pipeline parses a model's input (raises
    on an invalid one): for a rule check outside a run (``%agent`` tooling, tests, benchmarks)."""
    return await decide(ToolCall.of(tool, input, ctx), ctx, hook_decision=hook_decision)


def visible_tools(pool: ToolPool, ctx: "PermissionContext | ToolUseContext | None") -> ToolPool:
    """The pool without the tools a whole-tool deny rule removes from the schemas (§5.3)."""
    if ctx is None:
        return pool
    perms = ctx if isinstance(ctx, PermissionContext) else permission_context(ctx)
    denied = [t.name for t in pool if _whole_tool(perms.entries("deny"), _names(t)) is not None]
    return pool.without(denied)


def _describe(call: ToolCall, ctx: "ToolUseContext", perms: PermissionContext) -> _Call:
    tool = call.tool
    names = _names(tool)
    try:
        subject = tool.permission_subject(call.input, ctx)
    except Exception as exc:  # fail closed: a call we cannot describe is asked about
        return _Call(tool, names, None, None, False, problem=f"its input could not be checked ({exc})")
    try:
        read_only = bool(tool.is_read_only(call.input))
    except Exception:
        read_only = False
    described = _Call(tool, names, call.input, subject, read_only)
    if isinstance(subject, FileAccess):
        described.path = resolve_for_rules(subject.path, perms.cwd)
    elif isinstance(subject, ShellCommand):
        described.shell = try_parse(subject.command)
        described.read_only = described.shell is not None and is_read_only_parsed(described.shell, str(perms.cwd))
    return described


async def _rule_decision(call: _Call, perms: PermissionContext, ctx: "ToolUseContext") -> PermissionDecision:
    tool = call.tool
    # 1, 1b — deny rules
    entry = _whole_tool(perms.entries("deny"), call.names)
    if entry is not None:
        return PermissionDecision.deny(
            f"{tool.name} was denied by the rule `{entry.rule}` ({entry.source}).", "rule", rule=str(entry.rule)
        )
    entry = _content_rule(perms, call, "deny")
    if entry is not None:
        return PermissionDecision.deny(
            f"{tool.name} was denied: {call.describe()} matches the deny rule `{entry.rule}` ({entry.source}).",
            "rule", rule=str(entry.rule),
        )
    read_denied, read_unresolved = _shell_reads(perms, call)
    if read_denied is not None:
        entry, path = read_denied
        return PermissionDecision.deny(
            f"{tool.name} was denied: {call.describe()} reads {path}, which the deny rule `{entry.rule}` "
            f"({entry.source}) covers.", "rule", rule=str(entry.rule),
        )
    # 2 — whole-tool ask
    entry = _whole_tool(perms.entries("ask"), call.names)
    if entry is not None:
        return PermissionDecision.ask(
            f"the rule `{entry.rule}` ({entry.source}) asks before every use of {tool.name}", "rule", rule=str(entry.rule)
        )
    if call.problem is not None:
        return PermissionDecision.ask(f"{tool.name}: {call.problem}", "tool")
    # 3, 4 — the tool's own opinion
    own = await _tool_opinion(call, ctx)
    if own.behavior == "deny":
        return PermissionDecision.deny(own.message or f"{tool.name} refused this call.", "tool")
    # 5 — content ask rule, or a command the content rules cannot see into
    entry = _content_rule(perms, call, "ask")
    if entry is not None:
        return PermissionDecision.ask(
            f"{call.describe()} matches the ask rule `{entry.rule}` ({entry.source})", "rule", rule=str(entry.rule)
        )
    if read_unresolved is not None:
        entry, word = read_unresolved
        return PermissionDecision.ask(
            f"{call.describe()} may read files the deny rule `{entry.rule}` ({entry.source}) covers: "
            f"{word} cannot be resolved before it runs", "rule", rule=str(entry.rule),
        )
    opaque = _opaque_restriction(perms, call)
    if opaque is not None:
        return opaque
    # 6 — safety
    reason = _safety(call, perms)
    if reason is not None:
        return PermissionDecision.ask(reason, "safety")
    # 7 — bypass
    if perms.mode == "bypassPermissions":
        return PermissionDecision.allow("mode", updated_input=own.updated_input)
    # 8 — allow rules
    entry = _whole_tool(perms.entries("allow"), call.names) or _allow_rule(perms, call)
    if entry is not None:
        return PermissionDecision.allow("rule", rule=str(entry.rule), updated_input=own.updated_input)
    # 9 — the tool's allow / ask, then read-only
    if own.behavior == "allow":
        return PermissionDecision.allow("tool", message=own.message, updated_input=own.updated_input)
    if own.behavior == "ask":
        return PermissionDecision.ask(own.message or f"{tool.name} asks for approval", "tool")
    if call.read_only:
        unconfined = _unconfined_shell(call, perms)
        if unconfined is not None:
            return PermissionDecision.ask(f"{call.describe()} looks read-only, but {unconfined}", "default")
        outside = _read_outside(call, perms)
        return PermissionDecision.ask(outside, "default") if outside else PermissionDecision.allow("read_only")
    # 10
    return PermissionDecision.ask(_not_allowed_reason(call, perms), "default")


async def _tool_opinion(call: _Call, ctx: "ToolUseContext") -> PermissionDecision:
    try:
        own = await call.tool.check_permissions(call.parsed_input, ctx)
    except Exception:
        return PermissionDecision.passthrough()
    return own if isinstance(own, PermissionDecision) else PermissionDecision.passthrough()


def _fold_hook(decision: PermissionDecision, hook: PermissionDecision | None, call: _Call) -> PermissionDecision:
    if hook is None or hook.behavior not in ("allow", "ask"):
        return decision
    if hook.behavior == "ask":
        if decision.behavior == "deny" or (decision.behavior == "ask" and decision.decided_by in _RULE_CAUSES):
            return decision
        why = hook.message or "no reason given"
        return PermissionDecision.ask(f"a PreToolUse hook asks for approval: {why}", "hook")
    # hook allow: only the clean default ask is skipped
    if decision.behavior == "ask" and decision.decided_by not in _RULE_CAUSES:
        return PermissionDecision.allow("hook", message=hook.message, updated_input=decision.updated_input)
    if decision.behavior == "ask":
        return replace(decision, message=f"{decision.message} (a PreToolUse hook allowed it, but this check still asks)")
    return decision


def _names(tool: "Tool") -> frozenset[str]:
    group = (tool.rule_group,) if getattr(tool, "rule_group", None) else ()
    return frozenset((tool.name, *tool.aliases, *group))


def _whole_tool(entries: Iterable[RuleEntry], names: frozenset[str]) -> RuleEntry | None:
    return next((e for e in entries if e.rule.whole_tool and e.rule.tool in names), None)


def _applies_to(entry: RuleEntry, call: _Call) -> bool:
    if entry.rule.whole_tool:
        return False
    if isinstance(call.subject, FileAccess):
        rule_tool = entry.rule.tool
        return rule_tool in call.names or (
            (rule_tool, call.subject.access) in ((READ_RULE, "read"), (EDIT_RULE, "edit"))
        )
    return isinstance(call.subject, ShellCommand) and entry.rule.tool in call.names


def _content_rule(perms: PermissionContext, call: _Call, behavior: RuleBehavior) -> RuleEntry | None:
    """The first deny or ask rule whose content matches (lenient matching)."""
    for entry in perms.entries(behavior):
        if not _applies_to(entry, call):
            continue
        content = entry.rule.content or ""
        if isinstance(call.subject, ShellCommand):
            if restriction_matches(content, call.subject.command, call.shell):
                return entry
        elif call.path is not None:
            if compile_pattern(content, str(entry.base_dir or perms.cwd)).matches(call.path, widening=False):
                return entry
    return None


def _shell_reads(
    perms: PermissionContext, call: _Call
) -> tuple[tuple[RuleEntry, str] | None, tuple[RuleEntry, str] | None]:
    """``Read(...)`` deny rules against the files a shell command names (`shell_paths`): the
    rule and path it reads (→ deny), or the rule and a word that cannot be resolved, or a
    directory read recursively that may hold denied files (→ ask)."""
    if not isinstance(call.subject, ShellCommand):
        return None, None
    entries = [e for e in perms.entries("deny") if not e.rule.whole_tool and e.rule.tool == READ_RULE]
    if not entries:
        return None, None
    if call.shell is None:
        return None, (entries[0], "a command that cannot be parsed")
    named = named_paths(call.shell, str(perms.cwd))
    patterns = [(e, compile_pattern(e.rule.content or "", str(e.base_dir or perms.cwd))) for e in entries]
    for path in named.paths:
        for entry, pattern in patterns:
            if pattern.matches(path, widening=False):
                return (entry, path), None
    for directory in named.walked:
        for entry, pattern in patterns:
            if pattern.matches(os.path.join(directory, "\0probe"), widening=False):  # all it holds is denied
                return (entry, directory), None
            if pattern.unanchored or pattern.anchor == directory or pattern.anchor.startswith(directory.rstrip("/") + "/"):
                return None, (entry, f"{directory} (read recursively)")
    if named.unresolved:
        return None, (entries[0], f"`{named.unresolved[0]}`")
    return None, None


def _allow_rule(perms: PermissionContext, call: _Call) -> RuleEntry | None:
    """The allow rule that covers the call; for a shell command, every part must be covered by
    some allow rule or be read-only (the rule returned is the first one used)."""
    entries = [e for e in perms.entries("allow") if _applies_to(e, call)]
    if not entries:
        return None
    if isinstance(call.subject, ShellCommand):
        command = call.subject.command
        for entry in entries:
            if whole_command_matches(entry.rule.content or "", command):
                return entry
        shell = call.shell
        if shell is None or shell.defines_function or shell.redirect_expansions:
            return None  # only an exact rule for the whole text allows these
        directories = part_directories(shell, str(perms.cwd))
        if directories is None:
            return None  # a change of directory nobody can follow: no part can be checked
        used: RuleEntry | None = None
        for part, cwd in zip(shell.commands, directories):
            if is_read_only_part(part, cwd, str(perms.cwd)):
                continue
            match = next((e for e in entries if allow_matches_part(e.rule.content or "", part, cwd)), None)
            if match is None:
                return None
            used = used or match
        return used
    if call.path is not None:
        for entry in entries:
            if compile_pattern(entry.rule.content or "", str(entry.base_dir or perms.cwd)).matches(call.path, widening=True):
                return entry
    return None


def _opaque_restriction(perms: PermissionContext, call: _Call) -> PermissionDecision | None:
    """A shell command that hides what it runs, while content deny/ask rules exist for the
    tool: no rule can be checked, so a person decides (never bypass, a hook or an allow rule)."""
    if not isinstance(call.subject, ShellCommand):
        return None
    restrictions = [e for e in perms.rules if e.behavior != "allow" and _applies_to(e, call)]
    if not restrictions:
        return None
    why = opaque_reason(call.shell)
    if why is None:
        return None
    first = restrictions[0]
    return PermissionDecision.ask(
        f"{call.describe()} cannot be checked against the rule `{first.rule}` ({first.source}): {why}",
        "rule", rule=str(first.rule),
    )


def _unconfined_shell(call: _Call, perms: PermissionContext) -> str | None:
    """Why a read-only shell command may not be auto-allowed: the sandbox that makes a misread
    harmless does not work here (SPEC §5.5). The tool that runs the command says so in its
    subject: the sandbox builds on this package, so this package cannot ask it."""
    if not isinstance(call.subject, ShellCommand):
        return None
    return call.subject.unconfined


def _safety(call: _Call, perms: PermissionContext) -> str | None:
    if isinstance(call.subject, FileAccess) and call.subject.access == "edit" and call.path is not None:
        return check_file_edit(call.path)
    if isinstance(call.subject, FileAccess) and call.subject.access == "read" and call.path is not None:
        return check_file_read(call.subject.written or call.subject.path, call.path)
    if isinstance(call.subject, ShellCommand):
        return check_shell(call.shell, call.subject.command, str(perms.cwd))
    return None


def _read_outside(call: _Call, perms: PermissionContext) -> str | None:
    """Step 9 for reading tools: why a read-only file read is not auto-allowed (outside cwd)."""
    if not isinstance(call.subject, FileAccess) or call.subject.access != "read" or call.path is None:
        return None
    if read_auto_allowed(call.path, perms.cwd):
        return None
    return f"{call.describe()} is outside the working directory {perms.cwd}; reads there are not allowed by default"


def _not_allowed_reason(call: _Call, perms: PermissionContext) -> str:
    if isinstance(call.subject, ShellCommand) and call.shell is None:
        return f"{call.describe()} could not be parsed, so no rule can allow it except its exact text"
    if isinstance(call.subject, ShellCommand) and call.shell is not None and call.shell.compound:
        contents = [e.rule.content or "" for e in perms.entries("allow") if _applies_to(e, call)]
        missing = uncovered_parts(call.shell, contents, partial(is_read_only_part, own_directory=str(perms.cwd)),
                                  str(perms.cwd))
        listed = ", ".join(f"`{p.text}`" for p in missing)
        return f"parts of {call.describe()} are not allowed by any rule: {listed}"
    return f"{call.describe()} is not allowed by any rule"


def suggested_rule(call: _Call, perms: PermissionContext) -> str | None:
    """The narrowest allow rule that would permit the call (checked to parse)."""
    if isinstance(call.subject, ShellCommand):
        contents = [e.rule.content or "" for e in perms.entries("allow") if _applies_to(e, call)]
        missing = uncovered_parts(call.shell, contents, partial(is_read_only_part, own_directory=str(perms.cwd)),
                                  str(perms.cwd)) if call.shell is not None else []
        content = suggest_content(call.subject.command, call.shell, missing)
        if content is None:
            return None
        text = f"{call.tool.name}({content})"
    elif isinstance(call.subject, FileAccess) and call.path is not None:
        kind = READ_RULE if call.subject.access == "read" else EDIT_RULE
        text = f"{kind}({path_rule_content(call.path, perms.cwd)})"
    else:
        text = call.tool.name
    try:
        return str(parse_rule(text))
    except Exception:
        return None


def always_allow_grant(call: ToolCall, ctx: "ToolUseContext", decision: PermissionDecision) -> str | None:
    """What "Always allow" adds for this ask: a shell rule (prefix or exact), acceptEdits for a
    file edit inside the working directory, a path rule for other file access, else the whole
    tool. None when no allow rule could skip the ask (rule, safety and hook asks)."""
    if decision.behavior != "ask" or decision.decided_by not in ("default", "tool") or decision.suggested_rule is None:
        return None
    perms = permission_context(ctx)
    described = _describe(call, ctx, perms)
    if (
        decision.decided_by == "default"
        and isinstance(described.subject, FileAccess)
        and described.subject.access == "edit"
        and described.path is not None
        and is_inside(described.path, perms.cwd)
        and perms.mode == "default"
    ):
        return ACCEPT_EDITS_GRANT
    return decision.suggested_rule
