"""Policies as data: which policy a decision gets, the bwrap argv it becomes (order matters),
the macOS profile text, the probe and its knob."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sandbox_support import approved_policy, read_only_policy

from jupyter_toolagent.core.permission_types import PermissionDecision
from jupyter_toolagent.permissions import PermissionContext
from jupyter_toolagent.sandbox import SandboxPolicy, policy_for, sandbox_status
from jupyter_toolagent.sandbox.bubblewrap import bwrap_argv, empty_file
from jupyter_toolagent.sandbox.seatbelt import sandbox_exec_argv, seatbelt_profile


def pairs(argv: list[str], option: str) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv) if a == option]


def test_only_a_read_only_classification_gets_the_read_only_policy(project: Path) -> None:
    perms = PermissionContext(cwd=project)
    for decided_by in ("user", "rule", "mode", "hook", "tool", "session"):
        policy = policy_for(PermissionDecision.allow(decided_by), "make", perms, project)
        assert policy.confinement == "writable" and policy.writable == (project,), decided_by
        assert policy.label == f"sandbox: writes to {project}"
    assert policy_for(PermissionDecision.allow("read_only"), "ls", perms, project).label == "sandbox: read-only, no network"
    assert policy_for(None, "ls", perms, project).confinement == "read_only"  # a call no check saw: the stricter one


def test_the_read_only_argv_has_no_network_and_binds_the_project_read_only_after_tmp(project: Path) -> None:
    argv = bwrap_argv(read_only_policy(project), ["bash", "-c", "ls"])
    assert argv[:2] == ["bwrap", "--unshare-all"] and "--share-net" not in argv
    assert {"--die-with-parent", "--new-session"} <= set(argv)
    assert pairs(argv, "--proc") == ["/proc"] and pairs(argv, "--dev") == ["/dev"]
    assert "--bind" not in argv  # nothing writable but the private /tmp
    assert argv.index("--tmpfs") < argv.index(str(project))  # the project under /tmp stays the real one
    assert pairs(argv, "--chdir") == [str(project)] and argv[-4:] == ["--", "bash", "-c", "ls"]


def test_the_writable_argv_binds_writable_roots_then_protected_ones_read_only(project: Path) -> None:
    argv = bwrap_argv(approved_policy(project), ["true"])
    assert "--share-net" in argv
    assert pairs(argv, "--bind") == [str(project)]
    git = str(project / ".git")
    assert git in pairs(argv, "--ro-bind")
    assert argv.index("--bind") < argv.index(git)


def test_hidden_paths_are_mounted_last_an_empty_dir_or_an_empty_file(project: Path) -> None:
    perms = PermissionContext(cwd=project, deny=["Read(./secrets)", "Read(*.pem)"])
    policy = read_only_policy(project, perms)
    assert set(policy.hidden) >= {project / "secrets", project / "server.pem"}
    argv = bwrap_argv(policy, ["true"])
    assert str(project / "secrets") in pairs(argv, "--tmpfs") and str(project / "secrets") in pairs(argv, "--remount-ro")
    i = argv.index(str(project / "server.pem"))
    assert argv[i - 2:i] == ["--ro-bind", empty_file()] and Path(empty_file()).stat().st_size == 0
    assert i > argv.index(str(project))  # after the project's own bind


def test_settings_add_write_directories_and_turn_network_off(project: Path, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    settings_dir = project / ".toolagent"
    settings_dir.mkdir()
    (settings_dir / "settings.json").write_text(json.dumps({"sandbox": {"network": False, "write": ["../shared", "missing"]}}))
    perms = PermissionContext.from_sources(cwd=project)
    policy = policy_for(PermissionDecision.allow("user"), "make", perms, project)
    assert policy.writable == (project, shared.resolve()) and not policy.network
    assert policy.label == f"sandbox: writes to {project}, {shared.resolve()}, no network"
    assert "--share-net" not in bwrap_argv(policy, ["true"])
    assert project / ".toolagent" in policy.protected


def test_the_macos_profile_denies_by_default_and_allows_what_the_policy_says(project: Path, tmp_path: Path) -> None:
    ro = seatbelt_profile(read_only_policy(project, PermissionContext(cwd=project, deny=["Read(./secrets)"])), tmp_path)
    lines = ro.splitlines()
    assert lines[:2] == ["(version 1)", "(deny default)"]
    assert "(allow file-read*)" in lines and "(allow network*)" not in lines
    writes = [line for line in lines if line.startswith("(allow file-write*")]
    assert writes == ['(allow file-write* (literal "/dev/null") (literal "/dev/tty") (regex #"^/dev/fd/"))',
                      f'(allow file-write* (subpath "{tmp_path}"))']
    assert f'(deny file-read* file-write* (subpath "{project / "secrets"}"))' in lines
    assert "(allow process-info* (target same-sandbox))" in lines
    rw = seatbelt_profile(approved_policy(project), tmp_path).splitlines()
    allow_project = rw.index(f'(allow file-write* (subpath "{project}"))')
    assert rw.index(f'(deny file-write* (subpath "{project / ".git"}"))') > allow_project  # later rules win
    assert "(allow network*)" in rw
    argv = sandbox_exec_argv(approved_policy(project), ["bash", "-c", "ls"], tmp_path)
    assert argv[:2] == ["/usr/bin/sandbox-exec", "-p"] and argv[-3:] == ["bash", "-c", "ls"]


def test_profile_strings_are_quoted(tmp_path: Path) -> None:
    odd = tmp_path / 'we"ird\\dir'
    odd.mkdir()
    text = seatbelt_profile(SandboxPolicy("writable", odd, writable=(odd,)), tmp_path)
    assert '(subpath "' + str(odd).replace("\\", "\\\\").replace('"', '\\"') + '")' in text


def test_the_probe_is_cached_and_the_knob_turns_the_sandbox_off(monkeypatch: pytest.MonkeyPatch) -> None:
    first = sandbox_status()
    assert first.available and first.backend == "bubblewrap"
    assert sandbox_status() is first  # asked once
    monkeypatch.setenv("TOOLAGENT_SANDBOX", "off")
    off = sandbox_status()
    assert not off.available and "TOOLAGENT_SANDBOX=off" in off.reason
    monkeypatch.delenv("TOOLAGENT_SANDBOX")
    assert sandbox_status() is first


def test_describe_lists_the_protected_and_hidden_paths(project: Path) -> None:
    lines = approved_policy(project, perms=PermissionContext(cwd=project, deny=["Read(*.pem)"])).describe()
    assert lines[0] == f"sandbox: writes to {project}"
    assert any(str(project / ".git") in line for line in lines if line.startswith("protected"))
    assert any(str(project / "server.pem") in line for line in lines if line.startswith("hidden"))
