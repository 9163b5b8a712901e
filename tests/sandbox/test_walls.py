"""The sandbox's promises, proved by running commands in real bubblewrap in a scratch project.

Each wall is checked with a generated family of attempts (hypothesis) and with an everyday
counterpart that must keep working, and — where the test could pass for the wrong reason —
with the same command run unsandboxed, which must get through.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import time
import uuid
from pathlib import Path
from typing import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sandbox_support import GIT_CONFIG, Listener, approved_policy, make_project, read_only_policy, run

from jupyter_toolagent.permissions import PermissionContext
from jupyter_toolagent.permissions.safety import PROTECTED_DIRS, PROTECTED_FILES
from jupyter_toolagent.sandbox import SandboxPolicy
from jupyter_toolagent.tools.bash import run_command

NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=12)
WRITES = [
    "echo x > {t}",
    "echo x >> {t}",
    "touch {t}",
    "cp data.csv {t}",
    "sort -o {t} data.csv",
    "tee {t} < data.csv > /dev/null",
    "mkdir {t}",
    "ln -s data.csv {t}",
    "python3 -c 'import sys; open(sys.argv[1], \"w\").write(\"x\")' {t}",
    "dd if=data.csv of={t} status=none",
]
HYPOTHESIS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture
def outside() -> Iterator[Path]:
    """A directory outside the project and outside /tmp (so the sandbox shows it, read-only)."""
    path = Path.home() / ".cache" / f"toolagent-sandbox-test-{uuid.uuid4().hex[:8]}"
    path.mkdir(parents=True)
    try:
        yield path.resolve()
    finally:
        shutil.rmtree(path, ignore_errors=True)


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() and not p.is_symlink() else b"<dir>")
            for p in sorted(root.rglob("*"))}


# --- read-only: a misclassified write fails ----------------------------------------------------
@HYPOTHESIS
@given(template=st.sampled_from(WRITES), name=NAMES, where=st.sampled_from(["", "secrets/", ".git/"]))
def test_a_misclassified_write_fails_inside_the_read_only_sandbox(tmp_path_factory: pytest.TempPathFactory,
                                                                  template: str, name: str, where: str) -> None:
    project = make_project(tmp_path_factory.mktemp("ro"))
    before = tree(project)
    outcome = run(read_only_policy(project), template.format(t=where + name), project)
    assert not outcome.ok, outcome.text()
    assert tree(project) == before


def test_deleting_and_renaming_fail_inside_the_read_only_sandbox(project: Path) -> None:
    before = tree(project)
    for command in ("rm data.csv", "mv data.csv moved.csv", "rm -rf .git", "chmod 000 data.csv", "truncate -s0 data.csv"):
        assert not run(read_only_policy(project), command, project).ok, command
    assert tree(project) == before


def test_reading_commands_work_inside_the_read_only_sandbox(project: Path) -> None:
    """The everyday counterpart: what read-only commands do still works, /tmp included."""
    outcome = run(read_only_policy(project), "pwd; cat data.csv | wc -l; ls -a | head -3; git --version >/dev/null; "
                  "sort data.csv > /tmp/sorted && cat /tmp/sorted | head -1; echo {1..3}", project)
    assert outcome.ok, outcome.text()
    lines = outcome.stdout.splitlines()
    assert lines[0] == str(project) and lines[1] == "2" and lines[-1] == "1 2 3"


def test_the_private_tmp_is_not_the_hosts(project: Path, tmp_path: Path) -> None:
    marker = tmp_path / "host-file"
    marker.write_text("host")
    outcome = run(approved_policy(project), f"cat {marker}; echo inside > /tmp/only-inside; ls /tmp", project)
    assert "host" not in outcome.stdout and "only-inside" in outcome.stdout
    assert not Path("/tmp/only-inside").exists()


# --- network ----------------------------------------------------------------------------------
CONNECT = "exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"


def test_a_loopback_connection_fails_inside_the_read_only_sandbox(project: Path, loopback: Listener) -> None:
    outcome = run(read_only_policy(project), CONNECT.format(port=loopback.port), project)
    assert not outcome.ok and "connected" not in outcome.stdout
    assert loopback.accepted == 0


def test_network_follows_the_settings_for_an_approved_command(project: Path, loopback: Listener) -> None:
    offline = SandboxPolicy("writable", project, network=False, writable=(project,))
    assert not run(offline, CONNECT.format(port=loopback.port), project).ok
    assert loopback.accepted == 0
    online = approved_policy(project)  # "network": true is the default for approved commands
    assert online.network
    outcome = run(online, CONNECT.format(port=loopback.port), project)
    assert outcome.ok and outcome.stdout.strip() == "connected", outcome.text()
    deadline = time.monotonic() + 3
    while loopback.accepted == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert loopback.accepted == 1


# --- /proc ------------------------------------------------------------------------------------
def test_another_processs_environment_is_invisible(project: Path) -> None:
    marker = f"toolagent-marker-{uuid.uuid4().hex}"
    child = subprocess.Popen(["sleep", "30"], env={**os.environ, "TOOLAGENT_TEST_MARKER": marker})
    try:
        deadline = time.monotonic() + 5
        while marker.encode() not in Path(f"/proc/{child.pid}/environ").read_bytes():
            assert time.monotonic() < deadline
            time.sleep(0.02)
        probe = (f"cat /proc/{child.pid}/environ; cat /proc/{os.getpid()}/environ; "
                 "grep -a -l TOOLAGENT_TEST_MARKER /proc/*/environ; ls /proc | grep -c '^[0-9]'")
        unsandboxed = run(None, probe, project)
        assert marker in unsandboxed.stdout  # the probe does find it when nothing confines it
        for policy in (read_only_policy(project), approved_policy(project)):
            outcome = run(policy, probe, project)
            assert marker not in outcome.stdout + outcome.stderr
            assert int(outcome.stdout.strip().splitlines()[-1]) < 10  # only the sandbox's own processes
    finally:
        child.kill()
        child.wait(timeout=5)


# --- writable: the working directory, and nothing protected ---------------------------------
def test_an_approved_write_inside_the_working_directory_succeeds(project: Path) -> None:
    outcome = run(approved_policy(project, "…"), "echo hi > out.txt && mkdir -p d/e && echo y > d/e/f && "
                  "sort -o sorted.csv data.csv && rm data.csv", project)
    assert outcome.ok, outcome.text()
    assert (project / "out.txt").read_text() == "hi\n" and (project / "d/e/f").read_text() == "y\n"
    assert not (project / "data.csv").exists()


@HYPOTHESIS
@given(template=st.sampled_from(WRITES), name=NAMES)
def test_an_approved_write_outside_the_working_directory_fails(outside: Path, tmp_path_factory: pytest.TempPathFactory,
                                                               template: str, name: str) -> None:
    project = make_project(tmp_path_factory.mktemp("rw"))
    target = outside / name
    outcome = run(approved_policy(project), template.format(t=target), project)
    assert not outcome.ok, outcome.text()
    assert list(outside.iterdir()) == []


def test_a_write_to_git_config_under_an_approval_for_something_else_fails(project: Path) -> None:
    command = "echo ok > notes.txt; printf '[core]\\n\\tfsmonitor = touch pwned\\n' >> .git/config"
    outcome = run(approved_policy(project, command, asked="default"), command, project)
    assert not outcome.ok
    assert (project / "notes.txt").read_text() == "ok\n"  # the approved part happened
    assert (project / ".git" / "config").read_text() == GIT_CONFIG
    for attempt in ("rm -rf .git", "mv .git g", "echo x > .git/hooks-pre-commit", "git config core.fsmonitor x"):
        assert not run(approved_policy(project, attempt, asked="default"), attempt, project).ok, attempt
    assert (project / ".git" / "config").read_text() == GIT_CONFIG and sorted(os.listdir(project / ".git")) == ["config"]


def test_a_safety_approval_that_named_the_path_may_write_it(project: Path) -> None:
    shutil.rmtree(project / ".git")
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=30)
    command = "git config core.editor vi"
    refused = run(approved_policy(project, command, asked="default"), command, project)
    assert not refused.ok and "editor = vi" not in (project / ".git" / "config").read_text()
    outcome = run(approved_policy(project, command, asked="safety"), command, project)
    assert outcome.ok, outcome.text()
    assert "editor = vi" in (project / ".git" / "config").read_text()


@HYPOTHESIS
@given(name=st.sampled_from(sorted(PROTECTED_FILES | PROTECTED_DIRS)), depth=st.sampled_from(["", "sub/"]))
def test_protected_paths_in_the_working_directory_stay_read_only(tmp_path_factory: pytest.TempPathFactory,
                                                                 name: str, depth: str) -> None:
    project = make_project(tmp_path_factory.mktemp("prot"))
    path = project / depth / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if name in PROTECTED_DIRS:
        path.mkdir(exist_ok=True)
        target = path / "file"
        target.write_text("orig")
    else:
        target = path
        target.write_text("orig")
    command = f"echo changed > {target}"
    outcome = run(approved_policy(project, "echo other > elsewhere.txt"), command, project)
    assert not outcome.ok and target.read_text() == "orig"
    assert run(approved_policy(project), "echo fine > elsewhere.txt", project).ok


# --- Read deny rules ----------------------------------------------------------------------------
def test_a_denied_read_path_is_invisible_to_cat(project: Path) -> None:
    perms = PermissionContext(cwd=project, deny=["Read(./secrets/**)", "Read(*.pem)"])
    probe = "cat secrets/token.txt server.pem data.csv; grep -r -a -e SECRET-VALUE -e PEM-PRIVATE . ; ls secrets"
    unsandboxed = run(None, probe, project)
    assert "SECRET-VALUE-IN-FILE" in unsandboxed.stdout  # the probe reads it when nothing hides it
    for policy in (read_only_policy(project, perms), approved_policy(project, perms=perms)):
        outcome = run(policy, probe, project)
        text = outcome.stdout + outcome.stderr
        assert "SECRET-VALUE" not in text and "PEM-PRIVATE" not in text
        assert "a,b" in outcome.stdout  # what no rule denies is still there
    whole_dir = PermissionContext(cwd=project, deny=["Read(./secrets)"])
    outcome = run(read_only_policy(project, whole_dir), "ls -A secrets | wc -l; cat secrets/token.txt", project)
    assert outcome.stdout.splitlines()[0] == "0" and "SECRET" not in outcome.stdout


# --- Stop ------------------------------------------------------------------------------------------
@pytest.mark.asyncio
async def test_cancelling_a_sandboxed_command_kills_everything_it_started(project: Path) -> None:
    beat = project / "beat"
    loop = f"while :; do echo x >> {beat}; sleep 0.05; done"
    task = asyncio.ensure_future(run_command(f"({loop}) & ({loop}) & {loop}", project, 60,
                                             sandbox=approved_policy(project)))
    deadline = time.monotonic() + 5
    while not (beat.exists() and beat.stat().st_size > 20):
        assert time.monotonic() < deadline
        await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(0.2)
    size = beat.stat().st_size
    await asyncio.sleep(0.6)
    assert beat.stat().st_size == size


def test_a_protected_symlink_protects_its_target_and_a_dangling_one_breaks_nothing(project: Path) -> None:
    (project / "dotfiles").mkdir()
    (project / "dotfiles" / "bashrc").write_text("orig\n")
    (project / ".bashrc").symlink_to("dotfiles/bashrc")
    (project / ".profile").symlink_to(project / "no-such-file")
    policy = approved_policy(project, "make")
    assert project / "dotfiles" / "bashrc" in policy.protected
    outcome = run(policy, "echo evil >> .bashrc; echo evil >> dotfiles/bashrc; echo ok > fine.txt", project)
    assert outcome.ok and "Read-only file system" in outcome.stderr
    assert (project / "dotfiles" / "bashrc").read_text() == "orig\n" and (project / "fine.txt").read_text() == "ok\n"


def test_an_early_path_directory_inside_the_working_directory_stays_read_only(project: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Anchored protected patterns (a directory early on PATH) hold below the working directory
    too: an executable placed there would shadow `git` for every later command."""
    bin_dir = project / "bin"
    bin_dir.mkdir()
    shadow = bin_dir / "git"
    shadow.write_text("orig")
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    outcome = run(approved_policy(project, "echo other > elsewhere.txt"), f"echo changed > {shadow}", project)
    assert not outcome.ok and shadow.read_text() == "orig"
    assert run(approved_policy(project), "echo fine > elsewhere.txt", project).ok
