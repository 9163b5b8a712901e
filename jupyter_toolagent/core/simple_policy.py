"""A minimal permission policy: whole-tool allow/deny names, read-only calls allowed, every
other call asked (or denied when nobody can answer). The rule engine of
`jupyter_toolagent.permissions` is what runs normally; unit tests of the core and the overhead
benchmark use this one to stay independent of the engine."""

from __future__ import annotations

from typing import Iterable

from .events import PermissionAskedEvent
from .permission_types import Approver, ApprovalRequest, PermissionDecision, how_to_allow
from .tool import ToolUseContext
from .tool_call import ToolCall


class SimplePolicy:
    def __init__(self, *, allow: Iterable[str] = (), deny: Iterable[str] = (), approver: Approver | None = None) -> None:
        self.allow = set(allow)
        self.deny = set(deny)
        self.approver = approver
        self.decisions: list[tuple[str, str, str]] = []

    async def __call__(
        self, call: ToolCall, ctx: ToolUseContext, *, hook_decision: PermissionDecision | None = None,
    ) -> PermissionDecision:
        decision = await self._decide(call, ctx, hook_decision)
        self.decisions.append((call.tool_use_id, decision.behavior, decision.decided_by))
        return decision

    async def _decide(self, call: ToolCall, ctx: ToolUseContext,
                      hook_decision: PermissionDecision | None) -> PermissionDecision:
        tool, input, tool_use_id = call.tool, call.observable, call.tool_use_id
        if tool.name in self.deny:
            return PermissionDecision.deny(f"Permission to use {tool.name} was denied by the rule {tool.name!r}.", "rule",
                                           rule=tool.name)
        if hook_decision is not None and hook_decision.behavior == "deny":
            return PermissionDecision.deny(hook_decision.message or "Denied by a hook.", "hook")
        if tool.name in self.allow:
            return PermissionDecision.allow("rule", rule=tool.name)
        try:
            read_only = tool.is_read_only(call.input)
        except Exception:
            read_only = False
        if read_only and (hook_decision is None or hook_decision.behavior != "ask"):
            return PermissionDecision.allow("read_only")
        if self.approver is None:
            return PermissionDecision.deny(
                f"Permission to use {tool.name} needs approval and nobody can approve in this run. "
                f"To allow it, {how_to_allow(tool.name, ctx.options.rule_surface)}.", "policy",
                suggested_rule=tool.name)
        request = ApprovalRequest(tool.name, input, tool_use_id, reason=f"{tool.name} is not allowed by any rule",
                                  suggested_rule=tool.name)
        ctx.emit(PermissionAskedEvent(tool_use_id=tool_use_id, name=tool.name, input=input, reason=request.reason,
                                      suggested_rule=tool.name))
        answer = await self.approver(request)
        if answer.behavior == "allow":
            if answer.always:
                self.allow.add(tool.name)
            return PermissionDecision.allow(answer.decided_by, updated_input=answer.updated_input,
                                            rule_added=tool.name if answer.always else None)
        reason = f" Reason: {answer.reason}" if answer.reason else ""
        return PermissionDecision.deny(f"The user denied this {tool.name} call.{reason}", answer.decided_by)
