"""Bash: output and exit codes, timeouts and cancellation that kill the process group, bounded
output, background jobs, a child environment without the product's credentials, and read-only
classification delegated to the permission package."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from tool_support import call, text_of

import jupyter_toolagent.tools.bash as bash_module
from jupyter_toolagent.core.permission_types import ShellCommand
from jupyter_toolagent.core.simple_policy import SimplePolicy
from jupyter_toolagent.core.tool import Progress, ToolOptions, ToolPool, ToolUseContext
from jupyter_toolagent.tools import Bash
from jupyter_toolagent.tools.bash import run_command


def alive(pid: int) -> bool:
    """A process that exists and is not a zombie waiting to be reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):  # gone before or while reading
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_dead(pids: list[int], seconds: float = 3.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(alive(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.asyncio
async def test_success_returns_just_the_output_in_the_working_directory(tmp_path: Path, ctx_in: Any) -> None:
    outcome = await call(ctx_in(), "Bash", command="pwd; echo second line")
    assert outcome.status == "done" and text_of(outcome) == f"{tmp_path}\nsecond line"
    outcome = await call(ctx_in(), "Bash", command="echo out; echo warn >&2")
    assert text_of(outcome) == "out\n[stderr]\nwarn"


@pytest.mark.asyncio
async def test_a_non_zero_exit_is_an_error_with_code_stdout_and_stderr(tmp_path: Path, ctx_in: Any) -> None:
    outcome = await call(ctx_in(), "Bash", command="echo partial; echo broken >&2; exit 3")
    assert outcome.is_error
    assert text_of(outcome) == "Exit code 3\n[stdout]\npartial\n[stderr]\nbroken\n[sandbox: writes to " \
        f"{tmp_path.resolve()}]"
    killed = await call(ctx_in(), "Bash", command="kill -9 $$")
    assert killed.is_error and "SIGKILL" in text_of(killed)


HEARTBEATS = "while :; do echo x >> {name}; sleep 0.05; done"


def stopped_growing(path: Path, seconds: float = 3.0) -> bool:
    """A file that heartbeat loops append to no longer grows: every loop is dead. Works the
    same inside a sandbox, whose pid namespace makes the processes' own pids meaningless here."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        before = path.stat().st_size
        time.sleep(0.3)
        if path.stat().st_size == before:
            return True
    return False


@pytest.mark.asyncio
async def test_a_timeout_kills_the_whole_process_group(tmp_path: Path, ctx_in: Any) -> None:
    command = f"{HEARTBEATS.format(name='beat')} & {HEARTBEATS.format(name='beat')}"
    start = time.perf_counter()
    outcome = await call(ctx_in(), "Bash", command=command, timeout=1)
    assert time.perf_counter() - start < 5
    assert outcome.is_error and "timed out after 1 s" in text_of(outcome)
    assert (tmp_path / "beat").stat().st_size > 0 and stopped_growing(tmp_path / "beat")


@pytest.mark.asyncio
async def test_cancelling_the_call_kills_the_process_group(tmp_path: Path) -> None:
    task = asyncio.ensure_future(run_command("sleep 30 & echo $! > job.pid; echo $$ > shell.pid; wait", tmp_path, 60))
    for _ in range(100):
        if (tmp_path / "job.pid").exists() and (tmp_path / "shell.pid").exists():
            break
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    pids = [int((tmp_path / name).read_text()) for name in ("shell.pid", "job.pid")]
    assert wait_dead(pids)


@pytest.mark.asyncio
async def test_long_output_keeps_head_and_tail(ctx_in: Any) -> None:
    outcome = await call(ctx_in(), "Bash", command="seq 1 300000")
    text = text_of(outcome)
    assert text.startswith("1\n2\n3\n") and text.endswith("299999\n300000")
    assert "cut from the middle" in text and len(text) < 32_000


@pytest.mark.asyncio
async def test_background_output_is_collected_for_at_most_a_second(tmp_path: Path) -> None:
    """Unsandboxed (where no sandbox works): jobs outlive the shell; their output is collected
    for a second, and the call does not wait for them."""
    outcome = await run_command("(sleep 0.3; echo soon) & echo now", tmp_path, 10)
    assert outcome.stdout.splitlines()[:2] == ["now", "soon"]
    start = time.perf_counter()
    outcome = await run_command("(sleep 5; echo late) & echo now", tmp_path, 10)
    elapsed = time.perf_counter() - start
    assert elapsed < 2.5 and outcome.ok
    assert outcome.text().startswith("now") and "late" not in outcome.text()
    assert "Background processes" in outcome.text()


@pytest.mark.asyncio
async def test_inside_the_sandbox_background_jobs_end_with_the_command(tmp_path: Path, ctx_in: Any) -> None:
    """The sandbox's pid namespace ends when its shell exits: a job started with & cannot
    outlive the call (nor keep writing after it), and the call returns at once."""
    start = time.perf_counter()
    outcome = await call(ctx_in(), "Bash", command=f"({HEARTBEATS.format(name='beat')}) & sleep 0.3; echo now")
    assert time.perf_counter() - start < 2.5 and not outcome.is_error
    assert text_of(outcome) == "now"
    assert stopped_growing(tmp_path / "beat")


@pytest.mark.asyncio
async def test_the_child_environment_lacks_every_secret_looking_variable(ctx_in: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key-0000000000")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "auth-token-0000000000")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("GITHUB_TOKEN", "users-own-token")
    outcome = await call(ctx_in(), "Bash", command="printenv ANTHROPIC_API_KEY; echo rc=$?")
    assert text_of(outcome) == "rc=1"
    outcome = await call(ctx_in(), "Bash", command="env | cut -d= -f1 | sort")
    names = text_of(outcome).splitlines()
    assert "ANTHROPIC_API_KEY" not in names and "ANTHROPIC_AUTH_TOKEN" not in names
    assert "GITHUB_TOKEN" not in names, "SPEC §5.5: no keys in the command's environment"
    assert "ANTHROPIC_BASE_URL" in names and "PATH" in names


@pytest.mark.asyncio
async def test_credential_values_are_masked_in_output(tmp_path: Path, ctx_in: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key-1111111111")
    (tmp_path / "leak.txt").write_text("key=sk-ant-test-key-1111111111\n")
    outcome = await call(ctx_in(), "Bash", command="cat leak.txt")
    assert text_of(outcome) == "key=[secret]"


@pytest.mark.asyncio
async def test_progress_carries_the_output_as_it_comes(tmp_path: Path) -> None:
    seen: list[str] = []
    progress = Progress(lambda message, output, fraction: seen.append(output))
    outcome = await run_command("echo first; sleep 0.4; echo second", tmp_path, 10, progress)
    assert outcome.ok and "".join(seen) == "first\nsecond\n"


@pytest.mark.asyncio
async def test_a_missing_working_directory_is_an_error(tmp_path: Path) -> None:
    from tool_support import make_ctx

    outcome = await call(make_ctx(tmp_path / "gone"), "Bash", command="true")
    assert outcome.is_error and "does not exist" in text_of(outcome)


def test_the_permission_subject_is_the_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bash = Bash()
    parsed = bash.input_model.model_validate({"command": "git status"})
    ctx = ToolUseContext(tools=ToolPool([bash]), can_use_tool=SimplePolicy(), options=ToolOptions(cwd=tmp_path))
    monkeypatch.delenv("TOOLAGENT_SANDBOX", raising=False)
    assert bash.permission_subject(parsed, ctx) == ShellCommand("git status")  # contained here: bwrap works
    monkeypatch.setenv("TOOLAGENT_SANDBOX", "off")
    subject = bash.permission_subject(parsed, ctx)
    assert isinstance(subject, ShellCommand) and subject.command == "git status"
    assert subject.unconfined is not None and "no sandbox works on this machine" in subject.unconfined
    assert bash.input_model.model_validate({"command": "x", "timeout": 600}).timeout == 600
    with pytest.raises(ValueError):
        bash.input_model.model_validate({"command": "x", "timeout": 601})


READS = ["ls -la", "cat data.csv", "git status", "wc -l a b", "grep -n x f | head -3"]
CHANGES = ["rm -rf build", "touch a", "git commit -m x", "echo x > f", "ls && rm f"]


@pytest.mark.parametrize("command, read_only", [(c, True) for c in READS] + [(c, False) for c in CHANGES])
def test_read_only_classification_decides_concurrency_safety(command: str, read_only: bool) -> None:
    bash = Bash()
    parsed = bash.input_model.model_validate({"command": command})
    assert bash.is_read_only(parsed) is read_only
    assert bash.is_concurrency_safe(parsed) is read_only


def test_a_failing_classifier_counts_as_not_read_only(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(command: str) -> bool:
        raise RuntimeError("parser bug")

    monkeypatch.setattr(bash_module, "is_read_only_command", broken)
    bash = Bash()
    ls = bash.input_model.model_validate({"command": "ls"})
    assert not bash.is_concurrency_safe(ls) and not bash.is_read_only(ls)
