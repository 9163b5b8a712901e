"""A real IPython kernel for the benchmarks that measure the notebook front end (B5, B9).

Started with `jupyter_client` from a private kernelspec that runs this interpreter, with this
checkout first on ``PYTHONPATH`` (so the kernel runs the code under test and can import
``benchmarks``) and no Anthropic settings from the environment. Stopped by its manager
(shutdown, then kill) whatever happens.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Execution:
    msg_id: str
    reply: dict[str, Any] | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    """IOPub messages whose parent is this execution, in arrival order."""

    def stdout(self) -> str:
        return "".join(m["content"].get("text", "") for m in self.messages
                       if m["msg_type"] == "stream" and m["content"].get("name") == "stdout")

    def errors(self) -> list[str]:
        return [f"{m['content'].get('ename')}: {m['content'].get('evalue')}" for m in self.messages
                if m["msg_type"] == "error"]

    def count(self, msg_type: str) -> int:
        return sum(1 for m in self.messages if m["msg_type"] == msg_type)


class KernelHandle:
    def __init__(self, manager: Any, client: Any) -> None:
        self.manager = manager
        self.client = client

    @property
    def pid(self) -> int:
        provisioner = getattr(self.manager, "provisioner", None)
        process = getattr(provisioner, "process", None)
        if process is None:
            raise RuntimeError("cannot find the kernel's process")
        return int(process.pid)

    def start(self, code: str, *, allow_stdin: bool = True) -> Execution:
        """Send an execute request; return at once (see `collect`)."""
        return Execution(self.client.execute(code, allow_stdin=allow_stdin, stop_on_error=True))

    def collect(self, execution: Execution, timeout: float, *, until_idle: bool = True) -> Execution:
        """Read IOPub until the execution is idle (or ``timeout`` seconds passed), then its reply."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                msg = self.client.get_iopub_msg(timeout=min(0.2, max(0.01, deadline - time.monotonic())))
            except queue.Empty:
                if not until_idle:
                    return execution
                continue
            if msg.get("parent_header", {}).get("msg_id") != execution.msg_id:
                continue
            execution.messages.append(msg)
            if until_idle and msg["msg_type"] == "status" and msg["content"].get("execution_state") == "idle":
                break
        else:
            if until_idle:
                raise TimeoutError(f"the kernel did not finish within {timeout:g} s")
        if until_idle:
            execution.reply = self.client.get_shell_msg(timeout=max(1.0, deadline - time.monotonic()))
        return execution

    def run(self, code: str, timeout: float = 120.0, **kw: Any) -> Execution:
        execution = self.collect(self.start(code, **kw), timeout)
        errors = execution.errors()
        if errors:
            raise RuntimeError(f"the kernel raised {errors[0]}")
        return execution

    def run_json(self, code: str, timeout: float = 120.0) -> Any:
        """Run code whose last printed line is JSON; return it parsed."""
        out = self.run(code, timeout).stdout().strip().splitlines()
        if not out:
            raise RuntimeError("the kernel printed nothing")
        return json.loads(out[-1])


def kernel_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "TOOLAGENT_")) and k not in ("PYTHONPATH", "JPY_PARENT_PID")}
    env["PYTHONPATH"] = str(ROOT)
    env["MPLBACKEND"] = "Agg"
    env.update(extra or {})
    return env


@contextlib.contextmanager
def started_kernel(startup_timeout: float = 60.0, *, env: dict[str, str] | None = None) -> Iterator[KernelHandle]:
    """A fresh kernel; ``env`` is added to `kernel_env` (e.g. the fake server's base URL)."""
    from jupyter_client import KernelManager
    from jupyter_client.kernelspec import KernelSpecManager

    with tempfile.TemporaryDirectory(prefix="toolagent-bench-") as tmp:
        name = "toolagent-bench"
        spec_dir = Path(tmp) / "kernels" / name
        spec_dir.mkdir(parents=True)
        (spec_dir / "kernel.json").write_text(json.dumps({
            "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "toolagent bench", "language": "python",
        }))
        specs = KernelSpecManager()
        specs.kernel_dirs = [str(Path(tmp) / "kernels")]
        specs.ensure_native_kernel = False
        manager = KernelManager(kernel_name=name, kernel_spec_manager=specs, transport="ipc",
                                ip=str(Path(tmp) / "kernel-ipc"))
        manager.start_kernel(env=kernel_env(env), cwd=tmp)
        pid = KernelHandle(manager, None).pid
        client = manager.client()
        try:
            client.start_channels()
            client.wait_for_ready(timeout=startup_timeout)
            yield KernelHandle(manager, client)
        finally:
            client.stop_channels()
            try:
                manager.shutdown_kernel(now=False)  # asks politely, kills after a grace period
            except Exception:
                manager.shutdown_kernel(now=True)
            _reap(pid)


def _reap(pid: int, timeout: float = 5.0) -> None:
    """Make sure the kernel process is gone: wait for it, then kill it by its pid."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:  # already reaped by its manager
            return
        if done:
            return
        time.sleep(0.05)
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process (all its threads), from ``/proc/<pid>/stat``."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
        stat = fh.read()
    fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) "
    utime, stime = int(fields[11]), int(fields[12])  # fields 14 and 15 of proc(5)
    return (utime + stime) / os.sysconf("SC_CLK_TCK")
