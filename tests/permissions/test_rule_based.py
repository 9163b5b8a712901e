"""`RuleBasedPermissions`: asking, timeouts, aborts, "Always allow", and the decision log."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from fakes import BASH, EDIT, PYTHON, READ, ScriptedApprover, SilentApprover, make_ctx

from jupyter_toolagent.core.abort import AbortSignal
from jupyter_toolagent.core.events import PermissionAskedEvent
from jupyter_toolagent.core.permission_types import ApprovalRequest, ApprovalResponse, PermissionDecision
from jupyter_toolagent.core.tool import Tool
from jupyter_toolagent.core.tool_call import ToolCall
from jupyter_toolagent.permissions import ACCEPT_EDITS_GRANT, PermissionContext, RuleBasedPermissions

ALLOW = ApprovalResponse("allow")
ALWAYS = ApprovalResponse("allow", always=True)


async def ask(policy: RuleBasedPermissions, perms: PermissionContext, tool: Tool, input: dict[str, Any], *,
              events: list[Any] | None = None, hook: PermissionDecision | None = None, abort: AbortSignal | None = None,
              tool_use_id: str = "toolu_1") -> PermissionDecision:
    ctx = make_ctx(perms, events=events, **({"abort": abort} if abort else {}))
    return await policy(ToolCall.of(tool, input, ctx, tool_use_id), ctx, hook_decision=hook)


@pytest.mark.asyncio
async def test_allow_and_deny_need_nobody_and_are_recorded(perms: PermissionContext) -> None:
    approver = ScriptedApprover()
    policy = RuleBasedPermissions(approver)
    perms.add_rules({"deny": ["RunPython"]}, source="flag")
    allowed = await ask(policy, perms, READ, {"path": "notes.txt"}, tool_use_id="a")
    denied = await ask(policy, perms, PYTHON, {"code": "x"}, tool_use_id="b")
    assert (allowed.behavior, denied.behavior) == ("allow", "deny")
    assert approver.requests == []
    assert [(d.tool_use_id, d.behavior, d.decided_by, d.rule) for d in perms.decisions] == [
        ("a", "allow", "read_only", None), ("b", "deny", "rule", "RunPython")]


@pytest.mark.asyncio
@pytest.mark.parametrize("interactive", [True, False])
async def test_no_approver_denies_at_once_naming_the_rule(perms: PermissionContext, interactive: bool) -> None:
    approver = ScriptedApprover(ALLOW)
    policy = RuleBasedPermissions(approver if not interactive else None, interactive=interactive)
    start = time.perf_counter()
    decision = await ask(policy, perms, BASH, {"command": "git push origin main"})
    assert time.perf_counter() - start < 1
    assert (decision.behavior, decision.decided_by) == ("deny", "policy")
    assert 'To allow it, pass `allow=["Bash(git push:*)"]` to `Agent(...)`.' in decision.message
    assert "nobody can approve" in decision.message
    assert approver.requests == []
    assert perms.decisions[-1].decided_by == "policy"


@pytest.mark.asyncio
async def test_no_approver_denial_for_a_rule_ask_names_that_rule(perms: PermissionContext) -> None:
    perms.add_rules({"ask": ["Bash(rm:*)"]}, source="settings")
    decision = await ask(RuleBasedPermissions(None, interactive=False), perms, BASH, {"command": "rm x"})
    assert decision.behavior == "deny"
    assert "the rule `Bash(rm:*)`" in decision.message and "--allow" not in decision.message


@pytest.mark.asyncio
async def test_ask_emits_an_event_and_allows_once(perms: PermissionContext) -> None:
    approver = ScriptedApprover(ALLOW)
    events: list[Any] = []
    decision = await ask(RuleBasedPermissions(approver), perms, BASH, {"command": "git push"}, events=events)
    assert (decision.behavior, decision.decided_by, decision.rule_added) == ("allow", "user", None)
    request = approver.requests[0]
    assert (request.tool_name, request.input, request.tool_use_id) == ("Bash", {"command": "git push"}, "toolu_1")
    assert request.suggested_rule == "Bash(git push:*)"
    assert "not allowed by any rule" in request.reason
    asked = [e for e in events if isinstance(e, PermissionAskedEvent)]
    assert len(asked) == 1 and asked[0].suggested_rule == "Bash(git push:*)" and asked[0].reason == request.reason
    assert perms.session_rules == []
    second = ScriptedApprover(ALLOW)
    await ask(RuleBasedPermissions(second), perms, BASH, {"command": "git push"})
    assert len(second.requests) == 1  # allowed once means asked again


@pytest.mark.asyncio
async def test_always_allow_adds_the_suggested_rule(perms: PermissionContext) -> None:
    policy = RuleBasedPermissions(ScriptedApprover(ALWAYS))
    first = await ask(policy, perms, BASH, {"command": "git push origin main"})
    assert first.rule_added == "Bash(git push:*)" and perms.session_rules == ["Bash(git push:*)"]
    assert perms.decisions[-1].rule_added == "Bash(git push:*)"
    nobody = RuleBasedPermissions(None, interactive=False)
    again = await ask(nobody, perms, BASH, {"command": "git push upstream dev"})
    assert (again.behavior, again.decided_by, again.rule) == ("allow", "rule", "Bash(git push:*)")
    other = await ask(nobody, perms, BASH, {"command": "git push && rm -rf x"})
    assert other.behavior == "deny"


@pytest.mark.asyncio
async def test_always_allow_adds_what_the_ui_edited(perms: PermissionContext) -> None:
    def narrower(request: ApprovalRequest) -> ApprovalResponse:
        request.suggested_rule = "Bash(git push origin main)"
        return ALWAYS

    decision = await ask(RuleBasedPermissions(ScriptedApprover(narrower)), perms, BASH,
                         {"command": "git push origin main"})
    assert decision.rule_added == "Bash(git push origin main)"
    assert perms.session_rules == ["Bash(git push origin main)"]


@pytest.mark.asyncio
async def test_an_invalid_edited_rule_allows_once_and_adds_nothing(perms: PermissionContext) -> None:
    def broken(request: ApprovalRequest) -> ApprovalResponse:
        request.suggested_rule = "Bash(("
        return ALWAYS

    decision = await ask(RuleBasedPermissions(ScriptedApprover(broken)), perms, BASH, {"command": "git push"})
    assert decision.behavior == "allow" and decision.rule_added is None
    assert "allowed once" in decision.message and "invalid permission rule" in decision.message
    assert perms.session_rules == []


@pytest.mark.asyncio
async def test_always_allow_on_an_edit_inside_cwd_grants_accept_edits(perms: PermissionContext) -> None:
    approver = ScriptedApprover(ALWAYS)
    decision = await ask(RuleBasedPermissions(approver), perms, EDIT, {"path": "notes.txt"})
    assert approver.requests[0].suggested_rule == ACCEPT_EDITS_GRANT
    assert decision.rule_added == ACCEPT_EDITS_GRANT and perms.mode == "acceptEdits"
    nobody = RuleBasedPermissions(None, interactive=False)
    assert (await ask(nobody, perms, EDIT, {"path": "data/new.csv"})).decided_by == "mode"
    assert (await ask(nobody, perms, EDIT, {"path": "/tmp/elsewhere.txt"})).behavior == "deny"


@pytest.mark.asyncio
async def test_always_allow_on_an_edit_outside_cwd_adds_a_path_rule(perms: PermissionContext) -> None:
    approver = ScriptedApprover(ALWAYS)
    decision = await ask(RuleBasedPermissions(approver), perms, EDIT, {"path": "/tmp/elsewhere/x.txt"})
    assert decision.rule_added == "Edit(/tmp/elsewhere/x.txt)" and perms.mode == "default"


@pytest.mark.asyncio
@pytest.mark.parametrize(("setup", "tool", "input", "hook"), [
    ({"ask": ["Bash(rm:*)"]}, BASH, {"command": "rm x"}, None),
    ({}, EDIT, {"path": ".git/config"}, None),
    ({}, READ, {"path": "notes.txt"}, PermissionDecision("ask", message="check", decided_by="hook")),
])
async def test_always_adds_nothing_when_no_rule_could_skip_the_ask(perms: PermissionContext, setup: dict[str, list[str]],
                                                                    tool: Tool, input: dict[str, Any],
                                                                    hook: PermissionDecision | None) -> None:
    perms.add_rules(setup, source="flag")
    approver = ScriptedApprover(ALWAYS)
    decision = await ask(RuleBasedPermissions(approver), perms, tool, input, hook=hook)
    assert approver.requests[0].suggested_rule is None
    assert decision.behavior == "allow" and decision.rule_added is None
    assert perms.session_rules == [] and perms.mode == "default"


@pytest.mark.asyncio
async def test_denial_reason_goes_to_the_model(perms: PermissionContext) -> None:
    approver = ScriptedApprover(ApprovalResponse("deny", reason="use the staging branch instead"))
    decision = await ask(RuleBasedPermissions(approver), perms, BASH, {"command": "git push"})
    assert (decision.behavior, decision.decided_by) == ("deny", "user")
    assert "The user denied this Bash call." in decision.message
    assert "use the staging branch instead" in decision.message


@pytest.mark.asyncio
async def test_updated_input_from_the_approver(perms: PermissionContext) -> None:
    approver = ScriptedApprover(ApprovalResponse("allow", updated_input={"command": "git push --dry-run"}))
    decision = await ask(RuleBasedPermissions(approver), perms, BASH, {"command": "git push"})
    assert decision.updated_input == {"command": "git push --dry-run"}


@pytest.mark.asyncio
async def test_timeout_denies(perms: PermissionContext) -> None:
    approver = SilentApprover()
    start = time.perf_counter()
    decision = await ask(RuleBasedPermissions(approver, approval_timeout=0.05), perms, PYTHON, {"code": "x"})
    assert time.perf_counter() - start < 1
    assert (decision.behavior, decision.decided_by) == ("deny", "timeout")
    assert "0.05 seconds" in decision.message
    await asyncio.sleep(0)
    assert approver.cancelled
    assert perms.decisions[-1].decided_by == "timeout"


@pytest.mark.asyncio
async def test_abort_ends_the_wait_promptly(perms: PermissionContext) -> None:
    approver = SilentApprover()
    abort = AbortSignal()
    task = asyncio.ensure_future(ask(RuleBasedPermissions(approver, approval_timeout=600), perms, PYTHON,
                                     {"code": "x"}, abort=abort))
    await asyncio.sleep(0.02)
    assert approver.requests and not task.done()
    start = time.perf_counter()
    abort.abort("stop button")
    decision = await asyncio.wait_for(task, 2)
    assert time.perf_counter() - start < 0.5
    assert (decision.behavior, decision.decided_by) == ("deny", "interrupted")
    assert "stop button" in decision.message
    await asyncio.sleep(0)
    assert approver.cancelled


@pytest.mark.asyncio
async def test_a_failing_approver_denies(perms: PermissionContext) -> None:
    def explode(request: ApprovalRequest) -> ApprovalResponse:
        raise RuntimeError("widget gone")

    decision = await ask(RuleBasedPermissions(ScriptedApprover(explode)), perms, PYTHON, {"code": "x"})
    assert decision.behavior == "deny" and "widget gone" in decision.message


@pytest.mark.asyncio
async def test_hook_deny_is_recorded_as_hook(perms: PermissionContext) -> None:
    hook = PermissionDecision("deny", message="nope", decided_by="hook")
    decision = await ask(RuleBasedPermissions(ScriptedApprover()), perms, READ, {"path": "x"}, hook=hook)
    assert decision.message == "nope" and perms.decisions[-1].decided_by == "hook"


@pytest.mark.asyncio
async def test_decide_with_32_rules_is_fast(perms: PermissionContext) -> None:
    perms.add_rules({"allow": [f"Bash(tool{i}:*)" for i in range(16)] + [f"Edit(./d{i}/**)" for i in range(8)],
                     "deny": [f"Bash(bad{i}:*)" for i in range(4)] + [f"Read(./s{i}/**)" for i in range(4)]},
                    source="flag")
    policy = RuleBasedPermissions(None, interactive=False)
    timings = {}
    for label, tool, input in (("bash", BASH, {"command": "tool3 x && tool7 y | tool9"}),
                               ("edit", EDIT, {"path": "d5/file.txt"}),
                               ("whole-tool", PYTHON, {"code": "x"})):
        await ask(policy, perms, tool, input)
        start = time.perf_counter()
        for _ in range(50):
            await ask(policy, perms, tool, input)
        timings[label] = (time.perf_counter() - start) / 50 * 1000
    print("\ndecide with 32 rules (ms per call): " + ", ".join(f"{k} {v:.3f}" for k, v in timings.items()))
    assert all(v < 20 for v in timings.values())
