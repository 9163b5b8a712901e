"""Permission modes (SPEC §5.1) and how each one maps the rule engine's verdict.

The mode is applied last, to the decision the rules (and hooks) reached, so every mode keeps
the deny rules and safety checks: ``bypassPermissions`` is handled inside the decision order
(step 7, after safety), and the others only turn an *ask* into something else — except
``plan``, which also denies a call the rules or a hook *allowed* when it is not read-only:
plan mode means "look, don't touch", whatever else was configured (§5.1).
"""

from __future__ import annotations

from typing import Literal, get_args

from ..core.permission_types import PermissionDecision, RuleSurface, how_to_allow
from ..errors import ConfigError

Mode = Literal["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"]
MODES: tuple[Mode, ...] = get_args(Mode)

_ALIASES = {m.lower(): m for m in MODES} | {
    "accept-edits": "acceptEdits", "accept_edits": "acceptEdits", "bypass": "bypassPermissions",
    "dont-ask": "dontAsk", "dont_ask": "dontAsk",
}

PLAN_DENIAL = (
    "plan mode only runs read-only tools: {what} has side effects, so it was not run. "
    "Describe the change you would make instead; the user can leave plan mode to let it run."
)
DONT_ASK_DENIAL = "Mode dontAsk denies every call that would need approval."


def parse_mode(text: str) -> Mode:
    """The mode named by ``text`` (case-insensitive); `ConfigError` listing the modes otherwise."""
    mode = _ALIASES.get(str(text).strip().lower())
    if mode is None:
        raise ConfigError(f"unknown permission mode {text!r}; choose one of: {', '.join(MODES)}")
    return mode


def rule_surface(ctx: object) -> RuleSurface:
    """The surface a context's run was configured on (``python`` when it does not say)."""
    surface = getattr(getattr(ctx, "options", None), "rule_surface", "python")
    return "cell" if surface == "cell" else "python"


def allow_hint(decision: PermissionDecision, surface: RuleSurface = "python") -> str:
    """What a person can do so that this ask no longer happens, said for the surface in use
    (``allow=[...]`` for `Agent`, ``--allow`` in a cell)."""
    if decision.suggested_rule:
        return f"To allow it, {how_to_allow(decision.suggested_rule, surface)}."
    if decision.decided_by == "rule" and decision.rule:
        return f"It asks because of the rule `{decision.rule}`; remove that rule to stop asking."
    if decision.decided_by == "safety":
        return "Safety checks always ask; no rule can allow this call without a person."
    if decision.decided_by == "hook":
        return "A PreToolUse hook asked for approval; change the hook to stop asking."
    return "An allow rule for this call would skip the question."


def apply_mode(
    decision: PermissionDecision,
    mode: Mode,
    *,
    read_only: bool,
    edit_inside_cwd: bool,
    tool_name: str,
    surface: RuleSurface = "python",
) -> PermissionDecision:
    """Map the rule engine's decision through ``mode``."""
    if mode == "plan" and not read_only and decision.behavior != "deny":
        return PermissionDecision.deny(
            PLAN_DENIAL.format(what=f"this {tool_name} call"), "mode", rule=decision.rule,
            suggested_rule=decision.suggested_rule,
        )
    if decision.behavior != "ask":
        return decision
    if mode == "dontAsk":
        return PermissionDecision.deny(
            f"{tool_name} was not run: {decision.message.rstrip('.')}. {DONT_ASK_DENIAL} {allow_hint(decision, surface)}",
            "mode", rule=decision.rule, suggested_rule=decision.suggested_rule,
        )
    if mode == "acceptEdits" and edit_inside_cwd and decision.decided_by == "default":
        return PermissionDecision.allow(
            "mode", message="acceptEdits allows file edits inside the working directory",
            updated_input=decision.updated_input,
        )
    return decision
