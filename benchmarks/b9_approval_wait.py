"""B9 — waiting for an approval: what the kernel spends while a person has not clicked yet.

A real kernel (started with `jupyter_client`) runs ``%load_ext jupyter_toolagent`` and an
``%%agent --interactive`` cell whose scripted turn asks for a `RunPython` call — which asks
for approval by default. While the approval buttons wait, the kernel process's CPU time is read
from ``/proc/<pid>/stat`` (user + system, all threads) over the measuring window; the same
kernel idle (no cell running) is the comparison. The wait is then ended with a kernel
interrupt, which also checks that the wait is interruptible.

Click → decision latency needs a browser: it is read from the browser tests' record
(``test-artifacts/browser/``) when present, and reported as not measured otherwise.
"""

from __future__ import annotations

import json
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from .harness import Figure, Row, Size, Target, pick
from .kernel import ROOT, Execution, KernelHandle, process_cpu_seconds, started_kernel

KEY = "B9"
TITLE = "Waiting for approval: kernel CPU while the buttons wait"
MAX_CPU_SHARE = 0.02
LATENCY_FILES = ("test-artifacts/browser/latency.json", "test-artifacts/browser/approval_latency.json")

SETUP = """
%load_ext jupyter_toolagent
from jupyter_toolagent.models import tool_use_block
bench_turns = [[tool_use_block("RunPython", {"code": "bench_x = 41 + 1"})], "Done."]
"""
CELL = "%%agent --script bench_turns --interactive --approval-timeout 600 --new\nSet bench_x."


def run(size: Size = "full") -> Figure:
    window = pick(size, full=10.0, quick=5.0, smoke=1.0)
    figure = Figure(
        KEY, TITLE,
        method=(f"Kernel process CPU (utime + stime from /proc/<pid>/stat, 10 ms ticks) over {window:g} s: once idle, "
                "once while an `%%agent --interactive` cell waits on the approval buttons of a `RunPython` call (the "
                "window starts once the Allow/Deny buttons have been sent to the front end). One measurement each: "
                "a CPU-time integral over the window, not a sample. The wait is then ended by a kernel interrupt."),
        size=size,
    )
    waiting: float | None = None
    with started_kernel() as kernel:
        kernel.run(SETUP)
        idle = _cpu_share(kernel, window)
        idle_row = figure.add(Row("idle kernel: CPU", idle * 100, "%", 1, note=f"over {window:g} s"))
        execution = kernel.start(CELL, allow_stdin=True)
        if not _wait_for_buttons(kernel, execution, timeout=60.0):
            kernel.manager.interrupt_kernel()
            kernel.collect(execution, 30.0)
            raise RuntimeError("the approval buttons never appeared; kernel output: "
                               + " | ".join(execution.errors() or [execution.stdout()[-500:]]))
        share = _cpu_share(kernel, window)
        if _still_running(kernel, execution):
            waiting = share
            figure.add(Row("kernel waiting for an approval: CPU", share * 100, "%", 1,
                           note=f"over {window:g} s")).compare_to(idle_row)
        else:
            figure.add(Row.missing("kernel waiting for an approval: CPU", "%",
                                   "the cell finished during the window, so no wait was measured"))
        interrupted_at = time.perf_counter()
        kernel.manager.interrupt_kernel()
        kernel.collect(execution, 30.0)
        figure.add(Row("interrupt → cell finished", (time.perf_counter() - interrupted_at) * 1000, "ms", 1))
    figure.targets.append(Target(f"kernel CPU while waiting < {MAX_CPU_SHARE:.0%}",
                                 waiting * 100 if waiting is not None else None, MAX_CPU_SHARE * 100, "%"))
    _latency(figure)
    return figure


def _cpu_share(kernel: KernelHandle, window: float) -> float:
    pid = kernel.pid
    start_cpu, start = process_cpu_seconds(pid), time.perf_counter()
    time.sleep(window)
    return (process_cpu_seconds(pid) - start_cpu) / (time.perf_counter() - start)


def _wait_for_buttons(kernel: KernelHandle, execution: Execution, timeout: float) -> bool:
    """Read IOPub until a widget with an "Allow once" description is sent, then let it settle."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        before = len(execution.messages)
        kernel.collect(execution, 0.3, until_idle=False)
        for msg in execution.messages[before:]:
            if msg["msg_type"] == "status" and msg["content"].get("execution_state") == "idle":
                return False  # the cell ended without asking
            if msg["msg_type"] in ("comm_open", "comm_msg") and "Allow once" in json.dumps(msg["content"]):
                kernel.collect(execution, 1.0, until_idle=False)  # the rest of the card's messages
                return True
    return False


def _still_running(kernel: KernelHandle, execution: Execution) -> bool:
    kernel.collect(execution, 0.1, until_idle=False)
    return not any(m["msg_type"] == "status" and m["content"].get("execution_state") == "idle"
                   for m in execution.messages)


def _latency(figure: Figure) -> None:
    for name in LATENCY_FILES:
        path = ROOT / name
        if path.exists():
            values = _latencies(path)
            if values:
                when = datetime.fromtimestamp(path.stat().st_mtime).strftime("%Y-%m-%d %H:%M")
                figure.add(Row.from_samples("click → decision (browser tests)", values, "ms", scale=1000,
                                            note=f"from {name}, written {when} by the browser tests, not this run"))
                return
    figure.add(Row.missing("click → decision", "ms", "needs the browser tests' record "
                           "(test-artifacts/browser/approval_latency.json); none was present in this run"))


def _latencies(path: Path) -> list[float]:
    """Seconds from a list of records (``click_to_decision_s``, ``latency_s`` …) or a plain list."""
    try:
        data: Any = json.loads(path.read_text())
    except (OSError, ValueError):
        return []
    if isinstance(data, dict):
        data = data.get("latencies") or data.get("records") or list(data.values())
    values: list[float] = []
    for item in data if isinstance(data, list) else []:
        if isinstance(item, (int, float)):
            values.append(float(item))
        elif isinstance(item, dict):
            for key, value in item.items():
                if isinstance(value, (int, float)) and ("latency" in key or "decision" in key):
                    values.append(float(value))
                    break
    return [v for v in values if v >= 0]
