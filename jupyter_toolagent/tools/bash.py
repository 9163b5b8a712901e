"""`Bash`: run a shell command in the working directory and report its exit code and output.

The command runs in its own process group, so a timeout, a Stop or a kernel interrupt kills the
whole pipeline and whatever it started, not just the shell. Output is kept head and tail within
a fixed size however much the command prints (the start says what ran, the end how it ended).
Output that background jobs write to the command's pipes is collected for at most a second after
the shell exits; the call does not wait for them. The child environment lacks the product's own
credentials (`secret_env`); runs of every protected value are replaced in the output and the
progress lines by the core's one scrubber (`core.secrets`, applied in `run_tool_use`).

Whether a command is read-only (and so may run concurrently and without asking) is decided by
the permission package's shell parser; where the parser fails every command counts as not
read-only, which is the safe answer.

Every command runs inside the OS sandbox (`jupyter_toolagent.sandbox`) chosen by why it was
allowed (``ctx.decision``): read-only and offline when only the classifier vouched for it,
writable in the working directory otherwise. The card shows which ("sandbox: read-only, no
network", "sandbox: writes to …", or "not sandboxed" where no sandbox works), and so does the
result of a command that failed, where the model needs it to understand why. Inside a sandbox
the command's background jobs end with it: its pid namespace goes when the shell exits.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import shutil
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..core.permission_types import PermissionSubject, ShellCommand
from ..core.tool import Progress, Tool, ToolResult, ToolUseContext
from ..permissions.engine import permission_context
from ..permissions.shell import is_read_only_command
from ..permissions.shell.exit import no_answer
from ..sandbox import UNSANDBOXED_LABEL, SandboxPolicy, confine, policy_for, read_only_shell_blocked, sandbox_status
from .bounded import HeadTailBuffer
from .secret_env import child_environment

__all__ = ["Bash", "BashInput", "CommandOutcome", "run_command"]

DEFAULT_TIMEOUT = 120.0
MAX_TIMEOUT = 600.0
STDOUT_CHARS = 30_000
STDERR_CHARS = 10_000
BACKGROUND_GRACE = 1.0
"""Seconds output is still collected after the shell exits (background jobs holding the pipes)."""
PROGRESS_INTERVAL = 0.25
EXIT_POLL_INTERVAL = 0.02
"""The longest wait between two looks at whether the shell exited. Looks come sooner while the
command is young (a tenth of its run time so far, at least `FIRST_EXIT_POLL`), so a quick
command is not rounded up to 20 ms."""
FIRST_EXIT_POLL = 0.001


class BashInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    command: str = Field(min_length=1, description="The command to run with bash, in the working directory.")
    timeout: float | None = Field(
        None, gt=0, le=MAX_TIMEOUT,
        description=f"Seconds before the command is killed. Default {DEFAULT_TIMEOUT:g}, at most {MAX_TIMEOUT:g}.",
    )
    description: str | None = Field(None, description="A few words on what the command does, shown to the user.")


def exit_answer(command: str, exit_code: int | None) -> str | None:
    """What a "no" exit code answers (``grep`` 1: "no match"), or None when it is a failure
    (also when the permission package's shell parser fails)."""
    try:
        return no_answer(command, exit_code)
    except Exception:
        return None


def is_read_only_shell_command(command: str) -> bool:
    """The permission package's classification; not read-only if it fails."""
    try:
        return bool(is_read_only_command(command))
    except Exception:
        return False


class Bash(Tool[BashInput]):
    name = "Bash"
    description = (
        "Run a bash command in the working directory. Returns its output; a non-zero exit code is an error that "
        "shows the exit code, stdout and stderr, except where it means \"no\" (grep/rg 1: no match, diff/cmp 1: "
        "differ, test/[ 1: false). Default timeout 120 s (max 600). Output is cut to the first and "
        "last parts when long. Each command runs in a sandbox: one allowed because it only reads sees a read-only "
        "file system and no network; an approved one may write the working directory. Background jobs (cmd &) end "
        "when the command returns."
    )
    input_model = BashInput

    def is_read_only(self, input: BashInput) -> bool:
        return is_read_only_shell_command(input.command)

    def is_concurrency_safe(self, input: BashInput) -> bool:
        return is_read_only_shell_command(input.command)

    def permission_subject(self, input: BashInput, ctx: ToolUseContext) -> PermissionSubject | None:
        """The command, and — where no sandbox would contain it — why a misread of it would
        not be harmless, so the engine does not auto-allow it because it looks read-only."""
        return ShellCommand(input.command, unconfined=read_only_shell_blocked(permission_context(ctx)))

    async def call(self, input: BashInput, ctx: ToolUseContext, progress: Progress) -> ToolResult:
        cwd = Path(ctx.options.cwd)
        if not cwd.is_dir():
            return ToolResult(f"The working directory {cwd} does not exist.", is_error=True)
        timeout = input.timeout or DEFAULT_TIMEOUT
        policy, label = confinement(input.command, ctx, cwd)
        progress.label(label)
        outcome = await run_command(input.command, cwd, timeout, progress, sandbox=policy)
        if not outcome.ok and not outcome.timed_out:
            outcome.answer = exit_answer(input.command, outcome.exit_code)
        failed = not outcome.ok and outcome.answer is None
        text = f"{outcome.text()}\n[{label}]" if failed else outcome.text()
        return ToolResult(text, is_error=failed)


def confinement(command: str, ctx: ToolUseContext, cwd: Path) -> tuple[SandboxPolicy | None, str]:
    """The sandbox policy for this call and its label; (None, "not sandboxed") where no sandbox
    works (the permission engine has then asked about every command that ran)."""
    if not sandbox_status().available:
        return None, UNSANDBOXED_LABEL
    policy = policy_for(ctx.decision, command, permission_context(ctx), cwd)
    return policy, policy.label


@dataclass
class CommandOutcome:
    exit_code: int | None
    stdout: str
    stderr: str
    timeout: float
    timed_out: bool = False
    background_running: bool = False
    answer: str | None = None
    """Set when a non-zero exit code is an answer, not a failure (``grep`` 1: "no match")."""

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    def text(self) -> str:
        notes = []
        if self.background_running:
            notes.append(f"(Background processes still hold the output; what they print after {BACKGROUND_GRACE:g} s "
                         "is not collected.)")
        if self.ok or self.answer is not None:
            parts = [self.stdout.rstrip("\n")]
            if self.stderr.strip():
                parts.append(f"[stderr]\n{self.stderr.rstrip()}")
            if self.answer is not None:
                parts.append(f"(exit code {self.exit_code}: {self.answer})")
            return "\n".join(p for p in [*parts, *notes] if p)
        if self.timed_out:
            head = f"Command timed out after {self.timeout:g} s; its process group was killed."
        elif self.exit_code is not None and self.exit_code < 0:
            head = f"Command was killed by signal {_signal_name(-self.exit_code)}."
        else:
            head = f"Exit code {self.exit_code}"
        parts = [head]
        if self.stdout:
            parts.append(f"[stdout]\n{self.stdout.rstrip()}")
        if self.stderr:
            parts.append(f"[stderr]\n{self.stderr.rstrip()}")
        return "\n".join([*parts, *notes])


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


async def _drain(stream: asyncio.StreamReader, buffer: HeadTailBuffer, on_text: "_Throttle") -> None:
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    while chunk := await stream.read(65_536):
        text = decoder.decode(chunk)
        buffer.write(text)
        on_text(text)
    buffer.write(decoder.decode(b"", final=True))


class _Throttle:
    """Forwards output to the progress display at most every `PROGRESS_INTERVAL` seconds."""

    def __init__(self, progress: Progress | None) -> None:
        self.progress = progress
        self.pending: list[str] = []
        self.last = 0.0

    def __call__(self, text: str) -> None:
        if self.progress is None:
            return
        self.pending.append(text)
        now = time.monotonic()
        if now - self.last >= PROGRESS_INTERVAL:
            self.flush(now)

    def flush(self, now: float | None = None) -> None:
        if self.progress is not None and self.pending:
            self.progress("running", output="".join(self.pending)[-4_000:])
            self.pending.clear()
            self.last = now or time.monotonic()


async def run_command(command: str, cwd: Path, timeout: float, progress: Progress | None = None,
                      *, sandbox: SandboxPolicy | None = None) -> CommandOutcome:
    """Run ``command`` with bash in its own process group — inside ``sandbox`` when given —
    and kill the group on timeout or cancel (killing ``bwrap`` ends its whole pid namespace)."""
    bash = shutil.which("bash") or "/bin/bash"
    argv, env, cleanup = [bash, "-c", command], child_environment(), None
    if sandbox is not None:
        launch = confine(sandbox, argv)
        argv, env, cleanup = launch.argv, {**env, **launch.env}, launch.cleanup
    try:
        outcome = await _run(argv, cwd, env, timeout, progress)
    finally:
        if cleanup is not None:
            cleanup()
    if sandbox is not None and outcome.exit_code is not None and 128 < outcome.exit_code < 128 + 65:
        outcome.exit_code = 128 - outcome.exit_code  # bwrap reports a shell killed by signal N as 128+N
    return outcome


async def _run(argv: list[str], cwd: Path, env: dict[str, str], timeout: float,
               progress: Progress | None) -> CommandOutcome:
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=str(cwd), env=env, start_new_session=True,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    out, err = HeadTailBuffer(STDOUT_CHARS), HeadTailBuffer(STDERR_CHARS)
    throttle = _Throttle(progress)
    readers = asyncio.gather(_drain(proc.stdout, out, throttle), _drain(proc.stderr, err, throttle))
    timed_out = False
    try:
        try:
            await asyncio.wait_for(_exited(proc), timeout)
        except asyncio.TimeoutError:
            timed_out = True
            _kill_group(proc.pid)
            await _exited(proc)
        done, _ = await asyncio.wait({readers}, timeout=BACKGROUND_GRACE)
    except BaseException:  # Stop, a cancelled call, a kernel interrupt: nothing may outlive the call
        _kill_group(proc.pid)
        _close(proc)
        await _stop_readers(readers)
        raise
    background = not done
    if background:
        readers.cancel()
        await asyncio.gather(readers, return_exceptions=True)
    if timed_out:
        _kill_group(proc.pid)  # jobs started with & share the group: the timeout ends them too
    _close(proc)
    throttle.flush()
    return CommandOutcome(proc.returncode, out.getvalue(), err.getvalue(), timeout, timed_out, background and not timed_out)


async def _stop_readers(readers: "asyncio.Future[Any]") -> None:
    """Cancel the output readers and wait for them: a cancelled gather that nobody awaits logs
    "_GatheringFuture exception was never retrieved" when it is collected. Retrieving its
    outcome in a callback too covers a second cancellation arriving during the wait."""
    readers.add_done_callback(lambda f: f.cancelled() or f.exception())
    readers.cancel()
    try:
        await asyncio.gather(readers, return_exceptions=True)
    except BaseException:
        pass


async def _exited(proc: asyncio.subprocess.Process) -> None:
    """Wait for the shell itself to exit.

    Not ``proc.wait()``: on Python 3.11 that also waits for the pipes to close, which a
    background job holding them can postpone for as long as it runs.
    """
    loop = asyncio.get_running_loop()
    start = loop.time()
    while proc.returncode is None:  # the wait between looks is a tenth of the time so far, 1-20 ms
        await asyncio.sleep(min(EXIT_POLL_INTERVAL, max(FIRST_EXIT_POLL, (loop.time() - start) / 10)))


def _close(proc: asyncio.subprocess.Process) -> None:
    """Close our ends of the pipes (a background job may still hold the other ends)."""
    transport = getattr(proc, "_transport", None)
    if transport is not None:
        transport.close()
