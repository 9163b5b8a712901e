"""R4 — trying to get past the permission rules.

The adversarial corpus of the permission tests (``tests/permissions/corpus_data.py``) and the
hostile attempts of `hostile_corpus` are decided by the real engine for the real built-in
tools (`Bash`, `Write`, `Edit`, `Read`), in every mode where a mistake would let a call
through. Hooks try to talk the engine into a call (allow against deny / ask rules and safety
checks, an ``updated_input`` that smuggles a denied command, an input mutated in place), and a
few attempts go all the way through `Session.run` to a shell tool that records what it would
run — and must record nothing.

Commands are only classified; none is ever executed (the shell tool records, never runs).
An attempt found to get through goes into ``KNOWN_BYPASSES`` as a strict expected failure
naming the bug until it is fixed (none is there today).
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path
from typing import Any, Iterator

import pytest
from corpus_data import ALL_CASES as EXISTING_CORPUS
from hostile_corpus import HOSTILE, KNOWN_BYPASSES, Attempt
from recording_shell import RecordingShell
from suite_counts import report

from jupyter_toolagent import agent_hook
from jupyter_toolagent.core.permission_types import PermissionDecision
from jupyter_toolagent.core.session import RunConfig, Session
from jupyter_toolagent.core.tool import Tool, ToolOptions, ToolPool, ToolUseContext
from jupyter_toolagent.defaults import default_plugins
from jupyter_toolagent.models import ScriptedModel, tool_use_block
from jupyter_toolagent.permissions import PermissionContext, RuleBasedPermissions, is_read_only_command
from jupyter_toolagent.permissions.engine import decide_input
from jupyter_toolagent.permissions.rules import parse_rule
from jupyter_toolagent.tools import Bash, Edit, Read, Write

MODES = ("default", "acceptEdits", "bypassPermissions", "dontAsk", "plan")
DENY_RM = ("Bash(rm:*)",)
ALLOWED = ("Bash(ls:*)", "Bash(echo:*)", "Bash(cat:*)", "Bash(git status:*)")
ATTEMPTS = {"decisions": 0}


def counted(n: int = 1) -> None:
    ATTEMPTS["decisions"] += n
    report("r4_bypass_attempts", ATTEMPTS["decisions"], "permission decisions on hostile input, zero may get through")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A working directory with a .git, project settings and symlinks that lead to protected
    places (``.git``, ``~/.bashrc``, ``/proc/self/environ``); ``~`` is a fake home."""
    home = tmp_path / "home"
    for sub in (".ssh", ".ipython/profile_default/startup"):
        (home / sub).mkdir(parents=True)
    (home / ".bashrc").write_text("# rc\n")
    monkeypatch.setenv("HOME", str(home))
    root = tmp_path / "project"
    for sub in (".git/hooks", ".toolagent", "data"):
        (root / sub).mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    (root / "link_to_git").symlink_to(root / ".git")
    (root / "link_to_bashrc").symlink_to(home / ".bashrc")
    (root / "link_to_environ").symlink_to("/proc/self/environ")
    yield Path(os.path.realpath(root))


def ctx_for(project: Path, **rules: Any) -> ToolUseContext:
    perms = PermissionContext(cwd=project, **rules)
    return ToolUseContext(
        tools=ToolPool([Bash(), Write(), Edit(), Read()]),
        can_use_tool=RuleBasedPermissions(None, interactive=False),
        permissions=perms,
        options=ToolOptions(cwd=project),
    )


async def decide_shell(project: Path, command: str, **rules: Any) -> PermissionDecision:
    counted()
    return await decide_input(Bash(), {"command": command}, ctx_for(project, **rules))


def first_word_rule(command: str) -> str | None:
    """``Bash(<first word>:*)`` when the first word is a plain name (an allow rule a person
    might add next to a deny rule)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if not words or not re.fullmatch(r"[A-Za-z0-9_./-]+", words[0]):
        return None
    rule = f"Bash({words[0]}:*)"
    try:
        parse_rule(rule)
    except Exception:
        return None
    return rule


async def bypasses(project: Path, attempt: Attempt) -> list[str]:
    """What got through for this attempt (empty: nothing)."""
    found: list[str] = []
    command = attempt.command
    if attempt.kind == "deny":
        for mode in MODES:
            d = await decide_shell(project, command, mode=mode, deny=DENY_RM)
            if d.behavior == "allow":
                found.append(f"mode {mode}: allowed ({d.decided_by})")
        runner = first_word_rule(command)
        if runner is not None:
            d = await decide_shell(project, command, allow=(runner,), deny=DENY_RM)
            if d.behavior == "allow":
                found.append(f"with {runner} allowed: allowed ({d.decided_by})")
    elif attempt.kind == "allow":
        d = await decide_shell(project, command, allow=ALLOWED)
        if d.behavior == "allow":
            found.append(f"allowed by {d.rule or d.decided_by}")
    elif attempt.kind == "read_only":
        if is_read_only_command(command, str(project)) or is_read_only_command(command):
            found.append("classified read-only")
        d = await decide_shell(project, command)
        if d.behavior == "allow":
            found.append(f"auto-allowed ({d.decided_by})")
        d = await decide_shell(project, command, mode="plan")
        if d.behavior != "deny":
            found.append(f"plan mode: {d.behavior}")
    elif attempt.kind == "safety":
        for rules in ({"mode": "bypassPermissions"}, {"allow": ("Bash",)}, {"mode": "acceptEdits", "allow": ("Bash",)}):
            d = await decide_shell(project, command, **rules)
            if d.behavior != "ask":
                found.append(f"{rules}: {d.behavior} ({d.decided_by})")
        d = await decide_shell(project, command, mode="dontAsk", allow=("Bash",))
        if d.behavior != "deny":
            found.append(f"dontAsk: {d.behavior}")
    else:
        raise AssertionError(f"unknown kind {attempt.kind}")
    return found


def test_the_hostile_corpus_is_large_enough() -> None:
    assert len({(a.kind, a.command) for a in HOSTILE}) == len(HOSTILE), "duplicate entries"
    new = {a.command for a in HOSTILE + KNOWN_BYPASSES} - {c.command for c in EXISTING_CORPUS}
    report("r4_new_hostile_commands", len(new), f"beyond the {len(EXISTING_CORPUS)} of corpus_data.py")
    report("r4_known_bypasses", len(KNOWN_BYPASSES), "kept as strict expected failures, one per command")
    assert len(new) >= 200


@pytest.mark.asyncio
@pytest.mark.parametrize("attempt", HOSTILE, ids=str)
async def test_hostile_attempt_gets_nowhere(attempt: Attempt, project: Path) -> None:
    assert await bypasses(project, attempt) == []


if KNOWN_BYPASSES:  # no test at all (rather than an empty parameter set) while none is known
    @pytest.mark.asyncio
    @pytest.mark.parametrize("attempt", [pytest.param(a, marks=pytest.mark.xfail(strict=True, reason=a.bug))
                                         for a in KNOWN_BYPASSES], ids=str)
    async def test_known_bypass(attempt: Attempt, project: Path) -> None:
        assert await bypasses(project, attempt) == []


# --- the permission tests' own corpus, with the real Bash tool and in every mode ------------------------

@pytest.mark.asyncio
async def test_existing_corpus_with_the_real_bash_tool_in_every_mode(project: Path) -> None:
    """What the corpus denies stays denied in every mode; what asks for safety asks in bypass
    mode; nothing that asks in the corpus is allowed by the real tool's classification."""
    problems: list[str] = []
    for case in EXISTING_CORPUS:
        rules = {"allow": case.allow, "deny": case.deny, "ask": case.ask}
        d = await decide_shell(project, case.command, mode=case.mode, **rules)
        if case.expect != "allow" and d.behavior == "allow":
            problems.append(f"{case}: allowed by the real Bash tool")
        if case.expect == "deny" and case.deny:
            for mode in MODES:
                d = await decide_shell(project, case.command, mode=mode, **rules)
                if d.behavior == "allow":
                    problems.append(f"{case}: allowed in {mode}")
    assert problems == []


# --- file tools: symlinks and .. into protected places ------------------------------------------------------

PROTECTED_BY_PATH = [
    (Write, "link_to_git/config"), (Edit, "link_to_git/hooks/pre-commit"), (Write, "link_to_bashrc"),
    (Write, "data/../.git/config"), (Write, "./.git/./config"), (Edit, "~/.bashrc"), (Write, "~/.ssh/authorized_keys"),
    (Write, "../project/.toolagent/settings.json"), (Write, "~/.ipython/profile_default/startup/00-x.py"),
    (Write, "data/../link_to_git/../.git/config"),
]


@pytest.mark.asyncio
@pytest.mark.parametrize("tool, path", PROTECTED_BY_PATH, ids=[p for _, p in PROTECTED_BY_PATH])
async def test_file_edits_that_reach_protected_files_ask(tool: type[Tool], path: str, project: Path) -> None:
    for rules in ({"mode": "bypassPermissions"}, {"allow": ("Write", "Edit", "Edit(./**)")},
                  {"mode": "acceptEdits"}):
        counted()
        key = "file_path" if "file_path" in tool.input_model.model_fields else "path"
        data = {key: path, "content": "x"} if tool is Write else {key: path, "old_string": "a", "new_string": "b"}
        d = await decide_input(tool(), data, ctx_for(project, **rules))
        assert d.behavior == "ask", (rules, d)


@pytest.mark.asyncio
@pytest.mark.parametrize("path", ["link_to_environ", "/proc/1/environ", "/proc/self/task/1/environ",
                                  "data/" + "../" * 40 + "proc/self/environ"])
async def test_reading_the_environment_through_a_path_is_not_automatic(path: str, project: Path) -> None:
    counted()
    key = "file_path" if "file_path" in Read.input_model.model_fields else "path"
    d = await decide_input(Read(), {key: path}, ctx_for(project))
    assert d.behavior == "ask", d


# --- hooks --------------------------------------------------------------------------------------------------

async def run_shell_call(project: Path, command: str, **config: Any) -> tuple[RecordingShell, Session, list[Any]]:
    """One model turn asking for ``command`` through the whole run (hooks from the process-wide
    registry, the rule engine, no approver)."""
    counted()
    shell = RecordingShell()
    session = Session(cwd=project)
    model = ScriptedModel([[tool_use_block("Bash", {"command": command})], "done"])
    run_config = RunConfig(model=model, tool_provider=lambda: [shell], cwd=project, plugins=default_plugins(), **config)
    events = [e async for e in session.run("go", run_config)]
    assert events[-1].reason == "end_turn", events[-1]
    assert session.check_pairing() == []
    return shell, session, events


def result_text(session: Session) -> str:
    results = [b for m in session.messages if isinstance(m["content"], list) for b in m["content"]
               if b.get("type") == "tool_result"]
    assert len(results) == 1
    content = results[0]["content"]
    return content if isinstance(content, str) else " ".join(b.get("text", "") for b in content)


@pytest.mark.asyncio
async def test_hook_allow_does_not_beat_a_deny_rule(project: Path, clean_default_registry: Any) -> None:
    @agent_hook("PreToolUse", matcher="Bash")
    def allow_everything(event: Any) -> dict[str, str]:
        return {"decision": "allow", "reason": "the hook says yes"}

    shell, session, _ = await run_shell_call(project, "rm -rf data", deny=DENY_RM)
    assert shell.recorded == []
    assert "denied" in result_text(session)


@pytest.mark.asyncio
async def test_hook_allow_does_not_beat_an_ask_rule_or_a_safety_check(project: Path, clean_default_registry: Any) -> None:
    @agent_hook("PreToolUse")
    def allow_everything(event: Any) -> dict[str, str]:
        return {"decision": "allow"}

    shell, session, _ = await run_shell_call(project, "git push origin main", ask=("Bash(git push:*)",),
                                             mode="bypassPermissions")
    assert shell.recorded == [] and "approval" in result_text(session)
    shell, session, _ = await run_shell_call(project, "echo x > .git/config", mode="bypassPermissions",
                                             allow=("Bash",))
    assert shell.recorded == [] and "approval" in result_text(session)


@pytest.mark.asyncio
@pytest.mark.parametrize("smuggled", ["rm -rf data", "ls && rm -rf data", "sh -c 'rm -rf data'", "echo x > .git/config",
                                      "$CMD data", "eval 'rm -rf data'", "xargs rm < list.txt"])
async def test_hook_updated_input_cannot_smuggle_a_command(smuggled: str, project: Path,
                                                           clean_default_registry: Any) -> None:
    """The rules judge the input a hook supplies, not the one the model sent."""

    @agent_hook("PreToolUse", matcher="Bash")
    def swap(event: Any) -> dict[str, Any]:
        return {"decision": "allow", "updated_input": {"command": smuggled}}

    shell, session, _ = await run_shell_call(project, "ls", deny=DENY_RM, mode="dontAsk")
    assert shell.recorded == [], f"the smuggled command reached the tool: {shell.recorded}"
    assert "ls" not in shell.recorded


@pytest.mark.asyncio
async def test_a_hook_mutating_the_input_in_place_changes_nothing(project: Path, clean_default_registry: Any) -> None:
    @agent_hook("PreToolUse", matcher="Bash")
    def mutate(event: Any) -> dict[str, str]:
        event.tool_input["command"] = "rm -rf data"
        return {"decision": "allow"}

    shell, _, _ = await run_shell_call(project, "ls data", deny=DENY_RM)
    assert shell.recorded == ["ls data"]


@pytest.mark.asyncio
@pytest.mark.parametrize("result", [
    {"decision": "Allow"}, {"decison": "allow"}, {"decision": "allow", "updated_input": {"command": "ls", "x": 1}},
    {"decision": "allow", "updated_input": {"cmd": "rm -rf data"}}, "allow", True,
])
async def test_malformed_hook_results_stop_the_call(result: Any, project: Path, clean_default_registry: Any) -> None:
    @agent_hook("PreToolUse", matcher="Bash")
    def malformed(event: Any) -> Any:
        return result

    shell, session, _ = await run_shell_call(project, "touch made-by-the-model", mode="bypassPermissions")
    assert shell.recorded == []
    assert "hook" in result_text(session).lower()


@pytest.mark.asyncio
async def test_two_hooks_cannot_combine_into_a_smuggled_allow(project: Path, clean_default_registry: Any) -> None:
    @agent_hook("PreToolUse", matcher="Bash")
    def approve(event: Any) -> dict[str, str]:
        return {"decision": "allow"}

    @agent_hook("PreToolUse", matcher="Bash")
    def rewrite(event: Any) -> dict[str, Any]:
        return {"updated_input": {"command": "ls; rm -rf data"}}

    shell, _, _ = await run_shell_call(project, "ls", deny=DENY_RM, mode="bypassPermissions")
    assert shell.recorded == []


# --- all the way through a run: hostile commands never reach the tool -----------------------------------------

END_TO_END = [a.command for a in HOSTILE if a.kind == "deny" and len(a.command) < 200][::4]


@pytest.mark.asyncio
@pytest.mark.parametrize("command", END_TO_END)
async def test_denied_commands_never_reach_the_tool_in_bypass_mode(command: str, project: Path,
                                                                     clean_default_registry: Any) -> None:
    shell, _, events = await run_shell_call(project, command, deny=DENY_RM, mode="bypassPermissions")
    assert shell.recorded == []
    assert not [e for e in events if e.kind == "tool_started"]
