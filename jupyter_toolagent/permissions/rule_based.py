"""`RuleBasedPermissions`: the core's ``can_use_tool`` — decide, ask a person, remember.

`engine.decide` reaches allow, deny or ask without side effects. This wrapper resolves an ask:
with an approver and an interactive front end it emits `PermissionAskedEvent` and waits for the
answer (bounded by the approval timeout, cut short by an abort); without one it denies at once
with a message naming the rule that would allow the call, so a headless run never hangs.

"Always allow" adds whatever ``request.suggested_rule`` holds when the approver returns: the
approval UI may show the suggestion in an editable field and write the person's version back.
For a default ask on a file edit inside the working directory the grant is the session mode
acceptEdits (``mode:acceptEdits``) rather than a rule per file. Asks caused by a rule, a safety
check or a hook carry no suggestion, and "Always allow" adds nothing for them: no allow rule
could skip them.

Every decision, of every kind, is recorded in ``perms.decisions``.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from ..core.events import PermissionAskedEvent
from ..core.permission_types import ApprovalRequest, ApprovalResponse, Approver, PermissionDecision
from ..core.tool_call import ToolCall
from ..errors import RuleSyntaxError
from .context import ACCEPT_EDITS_GRANT, PermissionContext
from .engine import always_allow_grant, decide, permission_context
from .modes import allow_hint, rule_surface

if TYPE_CHECKING:
    from ..core.tool import ToolUseContext


class RuleBasedPermissions:
    """``CanUseTool`` backed by the rule engine and an optional approver."""

    def __init__(self, approver: Approver | None = None, *, interactive: bool = True,
                 approval_timeout: float = 600.0) -> None:
        self.approver = approver
        self.interactive = interactive
        self.approval_timeout = approval_timeout

    async def __call__(
        self, call: ToolCall, ctx: "ToolUseContext", *, hook_decision: PermissionDecision | None = None,
    ) -> PermissionDecision:
        perms = permission_context(ctx)
        decision = await decide(call, ctx, hook_decision=hook_decision)
        if decision.behavior == "ask":
            decision = await self._resolve_ask(call, ctx, decision, perms)
        perms.record_decision(call, decision)
        return decision

    async def _resolve_ask(self, call: ToolCall, ctx: "ToolUseContext", decision: PermissionDecision,
                           perms: PermissionContext) -> PermissionDecision:
        tool, input, tool_use_id = call.tool, call.observable, call.tool_use_id
        if self.approver is None or not self.interactive:
            return PermissionDecision.deny(
                f"{tool.name} was not run: {decision.message.rstrip('.')}. It needs approval and nobody can approve "
                f"in this run. {allow_hint(decision, rule_surface(ctx))}",
                "policy", rule=decision.rule, suggested_rule=decision.suggested_rule,
            )
        grant = always_allow_grant(call, ctx, decision)
        request = ApprovalRequest(tool.name, dict(input), tool_use_id, reason=decision.message, suggested_rule=grant,
                                  agent=ctx.options.agent_label)
        ctx.emit(PermissionAskedEvent(tool_use_id=tool_use_id, name=tool.name, input=dict(input),
                                      reason=decision.message, suggested_rule=grant))
        answer = await self._wait_for_answer(request, ctx)
        if isinstance(answer, PermissionDecision):
            return answer
        if answer.behavior != "allow":
            why = f" Reason given: {answer.reason}" if answer.reason else ""
            who = "The user" if answer.decided_by == "user" else f"The approval ({answer.decided_by})"
            return PermissionDecision.deny(f"{who} denied this {tool.name} call.{why}", answer.decided_by or "user")
        added, problem = self._remember(request, perms) if answer.always else (None, "")
        return PermissionDecision.allow(
            answer.decided_by or "user", message=problem or answer.reason, rule_added=added,
            updated_input=answer.updated_input if answer.updated_input is not None else decision.updated_input,
            asked=decision.decided_by,
        )

    async def _wait_for_answer(self, request: ApprovalRequest, ctx: "ToolUseContext") -> ApprovalResponse | PermissionDecision:
        """The approver's answer; a deny decision on timeout, abort or approver failure."""
        assert self.approver is not None
        answer_task = asyncio.ensure_future(self.approver(request))
        abort_task = asyncio.ensure_future(ctx.abort.wait())
        try:
            done, _ = await asyncio.wait({answer_task, abort_task}, timeout=self.approval_timeout,
                                         return_when=asyncio.FIRST_COMPLETED)
        finally:
            abort_task.cancel()
            if not answer_task.done():
                answer_task.cancel()
        if answer_task in done:
            try:
                return answer_task.result()
            except Exception as exc:
                return PermissionDecision.deny(
                    f"{request.tool_name} was not run: the approval failed ({type(exc).__name__}: {exc}).", "policy"
                )
        if abort_task in done or ctx.abort.aborted:
            return PermissionDecision.deny(
                f"{request.tool_name} was not run: the run was stopped ({ctx.abort.reason}) while waiting for approval.",
                "interrupted",
            )
        return PermissionDecision.deny(
            f"{request.tool_name} was not run: no answer to the approval request within "
            f"{self.approval_timeout:g} seconds.", "timeout",
        )

    @staticmethod
    def _remember(request: ApprovalRequest, perms: PermissionContext) -> tuple[str | None, str]:
        """Add the grant; (what was added, or None; why nothing was added)."""
        text = (request.suggested_rule or "").strip()
        if not text:
            return None, "allowed once: no rule can skip this check"
        if text == ACCEPT_EDITS_GRANT:
            return perms.grant_session_mode(), ""
        try:
            entry = perms.add_session_rule(text)
        except RuleSyntaxError as exc:
            return None, f"allowed once: {exc}"
        return str(entry.rule), ""
