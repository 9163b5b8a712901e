"""The decision order of SPEC §5.3, step by step and mode by mode, and how hooks fold in (§5.4)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from fakes import BASH, EDIT, GREP, LIST_VARIABLES, PYTHON, READ, WRITE, FakeFileTool, OpinionTool, make_ctx

from jupyter_toolagent.core.permission_types import PermissionDecision
from jupyter_toolagent.core.run_tool_use import run_tool_use
from jupyter_toolagent.core.tool import Tool, ToolPool
from jupyter_toolagent.core.tool_call import ToolCall
from jupyter_toolagent.permissions import PermissionContext, path_denied, visible_tools
from jupyter_toolagent.permissions.engine import decide_input


async def run(perms: PermissionContext, tool: Tool, input: dict[str, Any],
              hook: str | None = None, hook_reason: str = "") -> PermissionDecision:
    hook_decision = PermissionDecision(hook, message=hook_reason, decided_by="hook") if hook else None  # type: ignore[arg-type]
    return await decide_input(tool, input, make_ctx(perms), hook_decision=hook_decision)


# --- modes × kinds of call ----------------------------------------------------------------------------

KINDS: dict[str, tuple[Tool, Any, tuple[str, ...]]] = {
    "python": (PYTHON, {"code": "x = 1"}, ()),
    "edit-inside": (EDIT, {"path": "notes.txt"}, ()),
    "edit-outside": (EDIT, {"path": "/tmp/elsewhere/notes.txt"}, ()),
    "read-only": (READ, {"path": "notes.txt"}, ()),
    "safety": (EDIT, {"path": ".git/config"}, ()),
    "content-ask": (BASH, {"command": "rm x"}, ("Bash(rm:*)",)),
}

MODE_TABLE = {
    #               default  acceptEdits  plan    bypassPermissions  dontAsk
    "python":       ("ask",  "ask",       "deny", "allow",           "deny"),
    "edit-inside":  ("ask",  "allow",     "deny", "allow",           "deny"),
    "edit-outside": ("ask",  "ask",       "deny", "allow",           "deny"),
    "read-only":    ("allow", "allow",    "allow", "allow",          "allow"),
    "safety":       ("ask",  "ask",       "deny", "ask",             "deny"),
    "content-ask":  ("ask",  "ask",       "deny", "ask",             "deny"),
}
MODE_NAMES = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk")


@pytest.mark.asyncio
@pytest.mark.parametrize("kind", list(MODE_TABLE))
@pytest.mark.parametrize("mode", MODE_NAMES)
async def test_mode_table(kind: str, mode: str, project: Path) -> None:
    tool, input, ask_rules = KINDS[kind]
    perms = PermissionContext(cwd=project, mode=mode, ask=ask_rules)
    decision = await run(perms, tool, input)
    assert decision.behavior == MODE_TABLE[kind][MODE_NAMES.index(mode)], decision


@pytest.mark.asyncio
async def test_dont_ask_denial_says_how_to_allow(perms: PermissionContext) -> None:
    perms.base_mode = "dontAsk"
    decision = await run(perms, BASH, {"command": "rm -rf build"})
    assert decision.behavior == "deny" and decision.decided_by == "mode"
    assert "Mode dontAsk denies every call that would need approval." in decision.message
    assert 'To allow it, pass `allow=["Bash(rm -rf build)"]` to `Agent(...)`.' in decision.message


@pytest.mark.asyncio
async def test_plan_denies_even_what_an_allow_rule_or_a_hook_allows(perms: PermissionContext) -> None:
    perms.base_mode = "plan"
    perms.add_rules({"allow": ["RunPython", "Bash(rm:*)"]}, source="flag")
    by_rule = await run(perms, PYTHON, {"code": "x"})
    by_hook = await run(perms, BASH, {"command": "touch x"}, hook="allow")
    shell_rule = await run(perms, BASH, {"command": "rm x"})
    for decision in (by_rule, by_hook, shell_rule):
        assert decision.behavior == "deny" and decision.decided_by == "mode"
        assert "plan mode only runs read-only tools" in decision.message
    assert (await run(perms, LIST_VARIABLES, {})).behavior == "allow"


@pytest.mark.asyncio
async def test_accept_edits_session_grant_lifts_default_only(perms: PermissionContext) -> None:
    perms.grant_session_mode()
    assert perms.mode == "acceptEdits"
    assert (await run(perms, EDIT, {"path": "notes.txt"})).behavior == "allow"
    perms.base_mode = "plan"
    assert perms.mode == "plan"
    assert (await run(perms, EDIT, {"path": "notes.txt"})).behavior == "deny"


# --- each step --------------------------------------------------------------------------------------

@pytest.mark.asyncio
async def test_step1_whole_tool_deny_beats_everything(perms: PermissionContext) -> None:
    perms.base_mode = "bypassPermissions"
    perms.add_rules({"deny": ["RunPython"], "allow": ["RunPython"], "ask": ["RunPython"]}, source="flag")
    decision = await run(perms, PYTHON, {"code": "x"}, hook="allow")
    assert (decision.behavior, decision.decided_by, decision.rule) == ("deny", "rule", "RunPython")
    assert "(flag)" in decision.message


@pytest.mark.asyncio
async def test_step1_whole_tool_deny_removes_the_tool_from_the_schemas(perms: PermissionContext) -> None:
    perms.add_rules({"deny": ["RunPython", "Bash(rm:*)"]}, source="flag")
    pool = ToolPool([PYTHON, BASH, READ])
    assert visible_tools(pool, perms).names() == ["Bash", "Read"]
    assert visible_tools(pool, make_ctx(perms)).names() == ["Bash", "Read"]
    assert visible_tools(pool, None).names() == ["Bash", "Read", "RunPython"]


@pytest.mark.asyncio
async def test_step1b_content_deny_of_any_part_beats_allow_and_bypass(perms: PermissionContext) -> None:
    perms.base_mode = "bypassPermissions"
    perms.add_rules({"deny": ["Bash(curl:*)"], "allow": ["Bash"]}, source="flag")
    decision = await run(perms, BASH, {"command": "ls && curl http://example.invalid"})
    assert decision.behavior == "deny" and decision.rule == "Bash(curl:*)"


@pytest.mark.asyncio
async def test_step2_whole_tool_ask_beats_allow_rules(perms: PermissionContext) -> None:
    perms.add_rules({"ask": ["Bash"], "allow": ["Bash(ls:*)", "Bash"]}, source="flag")
    decision = await run(perms, BASH, {"command": "ls"})
    assert (decision.behavior, decision.decided_by, decision.rule) == ("ask", "rule", "Bash")
    assert decision.suggested_rule is None


@pytest.mark.asyncio
async def test_step3_a_raising_check_is_passthrough(perms: PermissionContext) -> None:
    tool = OpinionTool(RuntimeError("boom"), read_only=True)
    assert (await run(perms, tool, {})).decided_by == "read_only"
    tool = OpinionTool(RuntimeError("boom"))
    assert (await run(perms, tool, {})).decided_by == "default"


@pytest.mark.asyncio
async def test_step4_the_tools_own_deny_beats_allow_rules_and_bypass(perms: PermissionContext) -> None:
    perms.base_mode = "bypassPermissions"
    perms.add_rules({"allow": ["Opinionated"]}, source="flag")
    decision = await run(perms, OpinionTool(PermissionDecision.deny("not on Sundays")), {})
    assert (decision.behavior, decision.decided_by, decision.message) == ("deny", "tool", "not on Sundays")


@pytest.mark.asyncio
async def test_step5_content_ask_beats_allow_rules_and_bypass(perms: PermissionContext) -> None:
    perms.base_mode = "bypassPermissions"
    perms.add_rules({"ask": ["Edit(./data/**)"], "allow": ["Edit"]}, source="flag")
    decision = await run(perms, WRITE, {"path": "data/a.csv"})
    assert (decision.behavior, decision.decided_by, decision.rule) == ("ask", "rule", "Edit(./data/**)")


@pytest.mark.asyncio
async def test_step5_comes_after_the_tools_own_deny(perms: PermissionContext) -> None:
    perms.add_rules({"ask": ["Opinionated"]}, source="flag")
    tool = OpinionTool(PermissionDecision.deny("no"))
    assert (await run(perms, tool, {})).behavior == "ask"  # whole-tool ask (step 2) comes first
    perms2 = PermissionContext(cwd=perms.cwd, ask=["Bash(rm:*)"])
    own_deny = OpinionTool(PermissionDecision.deny("no"), name="Bash")
    own_deny.input_model = BASH.input_model
    own_deny.permission_subject = BASH.permission_subject  # type: ignore[method-assign]
    assert (await run(perms2, own_deny, {"command": "rm x"})).decided_by == "tool"


@pytest.mark.asyncio
async def test_step6_safety_beats_bypass_allow_rules(perms: PermissionContext) -> None:
    perms.base_mode = "bypassPermissions"
    perms.add_rules({"allow": ["Edit", "Edit(./.git/**)"]}, source="flag")
    decision = await run(perms, EDIT, {"path": ".git/hooks/pre-commit"})
    assert (decision.behavior, decision.decided_by) == ("ask", "safety")
    assert decision.suggested_rule is None
    assert ".git/ is protected" in decision.message


@pytest.mark.asyncio
async def test_step6_safety_covers_protected_files_anywhere(perms: PermissionContext, home: Path) -> None:
    for path in ("~/.bashrc", "~/.ssh/authorized_keys", ".toolagent/settings.json", "~/.gitconfig",
                 "~/.config/git/config", "~/.ipython/profile_default/startup/a.py", "sub/.jupyter/x.json"):
        decision = await run(perms, WRITE, {"path": path})
        assert decision.decided_by == "safety", path
    # reading one is not a safety matter, but it is outside the working directory (step 9)
    outside = await run(perms, READ, {"path": "~/.bashrc"})
    assert (outside.behavior, outside.decided_by) == ("ask", "default")
    assert "outside the working directory" in outside.message
    assert (await run(perms, READ, {"path": "sub/.jupyter/x.json"})).behavior == "allow"


@pytest.mark.asyncio
async def test_step6_safety_follows_symlinks(perms: PermissionContext) -> None:
    (perms.cwd / "innocent").symlink_to(perms.cwd / ".git" / "config")
    decision = await run(perms, EDIT, {"path": "innocent"})
    assert decision.decided_by == "safety"


@pytest.mark.asyncio
async def test_step7_bypass_allows_what_nothing_else_stops(perms: PermissionContext) -> None:
    perms.base_mode = "bypassPermissions"
    decision = await run(perms, PYTHON, {"code": "x"})
    assert (decision.behavior, decision.decided_by) == ("allow", "mode")


@pytest.mark.asyncio
async def test_step8_allow_rules(perms: PermissionContext) -> None:
    perms.add_rules({"allow": ["RunPython", "Read(./data/**)", "Edit(*.txt)", "Bash(git push:*)"]}, source="flag")
    assert (await run(perms, PYTHON, {"code": "x"})).rule == "RunPython"
    assert (await run(perms, WRITE, {"path": "notes.txt"})).rule == "Edit(*.txt)"
    assert (await run(perms, EDIT, {"path": "data/a.csv"})).behavior == "ask"  # Read rules don't cover edits
    push = await run(perms, BASH, {"command": "git push origin"})
    assert (push.behavior, push.decided_by, push.rule) == ("allow", "rule", "Bash(git push:*)")


@pytest.mark.asyncio
async def test_read_rules_cover_every_reading_tool_and_edit_rules_every_editing_tool(perms: PermissionContext) -> None:
    perms.add_rules({"deny": ["Read(./data/**)", "Edit(./notes.txt)"]}, source="flag")
    for tool in (READ, GREP, FakeFileTool("Glob", "read")):
        assert (await run(perms, tool, {"path": "data/a.csv"})).behavior == "deny", tool.name
    for tool in (EDIT, WRITE, FakeFileTool("NotebookEdit", "edit")):
        assert (await run(perms, tool, {"path": "notes.txt"})).behavior == "deny", tool.name


@pytest.mark.asyncio
async def test_rules_name_a_tool_by_its_aliases_too(perms: PermissionContext) -> None:
    tool = FakeFileTool("Write", "edit", aliases=("CreateFile",))
    perms.add_rules({"deny": ["CreateFile"]}, source="flag")
    assert (await run(perms, tool, {"path": "x.txt"})).behavior == "deny"


@pytest.mark.asyncio
async def test_step9_the_tools_own_ask_is_honoured_before_read_only(perms: PermissionContext) -> None:
    asks = OpinionTool(PermissionDecision.ask("it looks at secrets"), read_only=True)
    decision = await run(perms, asks, {})
    assert (decision.behavior, decision.decided_by, decision.message) == ("ask", "tool", "it looks at secrets")
    assert decision.suggested_rule == "Opinionated"
    allows = OpinionTool(PermissionDecision.allow("", updated_input={"code": "safe"}))
    decision = await run(perms, allows, {"code": "x"})
    assert (decision.behavior, decision.decided_by, decision.updated_input) == ("allow", "tool", {"code": "safe"})


@pytest.mark.asyncio
async def test_step9_read_only_calls_are_allowed(perms: PermissionContext) -> None:
    assert (await run(perms, BASH, {"command": "git log --oneline | head"})).decided_by == "read_only"
    assert (await run(perms, LIST_VARIABLES, {})).decided_by == "read_only"


@pytest.mark.asyncio
@pytest.mark.parametrize(("tool", "input", "suggestion"), [
    (PYTHON, {"code": "x"}, "RunPython"),
    (BASH, {"command": "git push origin main"}, "Bash(git push:*)"),
    (BASH, {"command": "ls && rm -rf build"}, "Bash(rm -rf build)"),
    (BASH, {"command": "rm a; rm b"}, "Bash(rm a; rm b)"),
    (BASH, {"command": "rm *.tmp"}, None),
    (EDIT, {"path": "data/a.csv"}, "Edit(./data/a.csv)"),
    (EDIT, {"path": "/tmp/elsewhere/x.txt"}, "Edit(/tmp/elsewhere/x.txt)"),
])
async def test_step10_default_ask_suggests_the_narrowest_rule(perms: PermissionContext, tool: Tool,
                                                             input: dict[str, Any], suggestion: str | None) -> None:
    decision = await run(perms, tool, input)
    assert (decision.behavior, decision.decided_by) == ("ask", "default")
    assert decision.suggested_rule == suggestion


@pytest.mark.asyncio
async def test_suggested_rule_really_allows_the_call(perms: PermissionContext) -> None:
    for command in ("git push origin main", "ls && rm -rf build", "rm a; rm b", "echo x > out.txt"):
        decision = await run(perms, BASH, {"command": command})
        fresh = PermissionContext(cwd=perms.cwd, allow=[decision.suggested_rule])
        assert (await run(fresh, BASH, {"command": command})).behavior == "allow", command


@pytest.mark.asyncio
async def test_compound_default_ask_names_the_missing_parts(perms: PermissionContext) -> None:
    decision = await run(perms, BASH, {"command": "ls && rm x && curl y"})
    assert "`rm x`" in decision.message and "`curl y`" in decision.message and "`ls`" not in decision.message


@pytest.mark.asyncio
async def test_deny_beats_ask_beats_allow_whatever_the_source(project: Path) -> None:
    perms = PermissionContext(cwd=project)
    perms.add_rules({"allow": ["Bash(rm:*)"]}, source="settings")
    perms.add_rules({"ask": ["Bash(rm:*)"]}, source="session")
    assert (await run(perms, BASH, {"command": "rm x"})).behavior == "ask"
    perms.add_rules({"deny": ["Bash(rm:*)"]}, source="config")
    assert (await run(perms, BASH, {"command": "rm x"})).behavior == "deny"


@pytest.mark.asyncio
async def test_invalid_input_never_reaches_the_rules(perms: PermissionContext) -> None:
    """Schema validation comes before the permission decision (SPEC §3): the engine only ever
    sees a typed call whose input parsed, and an invalid one is refused without asking anybody."""
    ctx = make_ctx(perms)
    with pytest.raises(ValidationError):
        ToolCall.of(BASH, {"command": 42}, ctx)
    outcome = await run_tool_use({"type": "tool_use", "id": "toolu_1", "name": BASH.name, "input": {"command": 42}},
                                 ctx)
    assert outcome.status == "invalid" and "command" in outcome.result["content"]
    assert perms.decisions == []


@pytest.mark.asyncio
async def test_decide_is_pure(perms: PermissionContext) -> None:
    before = list(perms.rules)
    await run(perms, BASH, {"command": "rm x"})
    await run(perms, PYTHON, {"code": "x"}, hook="allow")
    assert perms.decisions == [] and perms.rules == before and perms.session_rules == []


@pytest.mark.asyncio
async def test_no_permission_context_means_an_empty_default(project: Path) -> None:
    ctx = make_ctx(None)
    assert (await decide_input(READ, {"path": "x"}, ctx)).behavior == "allow"
    assert (await decide_input(PYTHON, {"code": "x"}, ctx)).behavior == "ask"


def test_path_denied(perms: PermissionContext) -> None:
    perms.add_rules({"deny": ["Read(./data/**)", "Edit(*.txt)"]}, source="flag")
    assert path_denied(perms, str(perms.cwd / "data" / "a.csv")) is not None
    assert path_denied(perms, "data/a.csv").rule.content == "./data/**"  # type: ignore[union-attr]
    assert path_denied(perms, "notes.txt") is None
    assert path_denied(perms, "notes.txt", access="edit") is not None


# --- hooks fold in -----------------------------------------------------------------------------------------

HOOK_CASES = [
    # hook, tool, input, rules, mode, expected behavior, decided_by
    ("deny", READ, {"path": "notes.txt"}, {}, "default", "deny", "hook"),
    ("deny", PYTHON, {"code": "x"}, {"allow": ["RunPython"]}, "bypassPermissions", "deny", "hook"),
    ("ask", READ, {"path": "notes.txt"}, {}, "default", "ask", "hook"),
    ("ask", PYTHON, {"code": "x"}, {"allow": ["RunPython"]}, "default", "ask", "hook"),
    ("ask", EDIT, {"path": "notes.txt"}, {}, "acceptEdits", "ask", "hook"),
    ("ask", PYTHON, {"code": "x"}, {}, "bypassPermissions", "ask", "hook"),
    ("ask", PYTHON, {"code": "x"}, {}, "dontAsk", "deny", "mode"),
    ("ask", PYTHON, {"code": "x"}, {"deny": ["RunPython"]}, "default", "deny", "rule"),
    ("ask", BASH, {"command": "rm x"}, {"ask": ["Bash(rm:*)"]}, "default", "ask", "rule"),
    ("allow", PYTHON, {"code": "x"}, {}, "default", "allow", "hook"),
    ("allow", PYTHON, {"code": "x"}, {}, "dontAsk", "allow", "hook"),
    ("allow", BASH, {"command": "rm x"}, {"ask": ["Bash(rm:*)"]}, "default", "ask", "rule"),
    ("allow", PYTHON, {"code": "x"}, {"ask": ["RunPython"]}, "default", "ask", "rule"),
    ("allow", PYTHON, {"code": "x"}, {"deny": ["RunPython"]}, "default", "deny", "rule"),
    ("allow", BASH, {"command": "ls; rm x"}, {"deny": ["Bash(rm:*)"]}, "default", "deny", "rule"),
    ("allow", EDIT, {"path": ".git/config"}, {}, "default", "ask", "safety"),
    ("allow", PYTHON, {"code": "x"}, {}, "plan", "deny", "mode"),
    ("allow", READ, {"path": "notes.txt"}, {}, "default", "allow", "read_only"),
]


@pytest.mark.asyncio
@pytest.mark.parametrize(("hook", "tool", "input", "rules", "mode", "behavior", "by"), HOOK_CASES,
                         ids=[f"{c[0]}-{c[1].name}-{c[4]}-{c[5]}-{c[6]}" for c in HOOK_CASES])
async def test_hook_cases(project: Path, hook: str, tool: Tool, input: dict[str, Any], rules: dict[str, list[str]],
                          mode: str, behavior: str, by: str) -> None:
    perms = PermissionContext(cwd=project, mode=mode, **rules)
    decision = await run(perms, tool, input, hook=hook, hook_reason="policy says so")
    assert (decision.behavior, decision.decided_by) == (behavior, by), decision


@pytest.mark.asyncio
async def test_hook_allow_over_the_tools_own_deny_and_ask(perms: PermissionContext) -> None:
    denies = await run(perms, OpinionTool(PermissionDecision.deny("never")), {}, hook="allow")
    asks = await run(perms, OpinionTool(PermissionDecision.ask("careful")), {}, hook="allow")
    assert (denies.behavior, denies.decided_by) == ("deny", "tool")
    assert (asks.behavior, asks.decided_by) == ("ask", "tool")
    assert "hook allowed it" in asks.message


@pytest.mark.asyncio
async def test_hook_deny_and_ask_reasons_are_kept(perms: PermissionContext) -> None:
    denied = await run(perms, READ, {"path": "x"}, hook="deny", hook_reason="no reading on Fridays")
    assert denied.message == "no reading on Fridays"
    asked = await run(perms, READ, {"path": "x"}, hook="ask", hook_reason="double-check")
    assert "double-check" in asked.message and asked.suggested_rule is None
