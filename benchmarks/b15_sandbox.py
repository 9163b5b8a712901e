"""B15 — what the Bash sandbox costs per command (SPEC §5.5): a trivial command with and without
bubblewrap, side by side in one run.

Two views of the same cost. *Process*: spawn to exit of ``bash -c true`` itself versus the same
inside ``bwrap`` with each policy's mounts (the sandbox's own start-up, nothing else). *Bash
tool*: `run_command` as the tool calls it, with the policy built for the call (the walk for
protected and hidden paths included); its exit poll waits a tenth of the time so far (1–20 ms), so samples are
slightly quantised, and the median of paired differences is what says how much the sandbox adds.
Samples are interleaved (unsandboxed, read-only, writable, again …) so load hits all alike.
"""

from __future__ import annotations

import asyncio
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from jupyter_toolagent.core.permission_types import PermissionDecision
from jupyter_toolagent.permissions import PermissionContext
from jupyter_toolagent.sandbox import policy_for, sandbox_status
from jupyter_toolagent.sandbox.bubblewrap import bwrap_argv
from jupyter_toolagent.tools.bash import run_command
from jupyter_toolagent.tools.secret_env import child_environment

from .harness import Figure, Row, Size, Target, pick

KEY = "B15"
TITLE = "Sandbox start-up per Bash command: bubblewrap vs no sandbox"
TARGET_MS = 15.0


def _project(root: Path) -> Path:
    """A small project like a notebook's: a git directory, some files, a settings file."""
    project = root / "project"
    (project / ".git" / "objects").mkdir(parents=True)
    (project / ".git" / "config").write_text("[core]\n")
    (project / ".toolagent").mkdir()
    (project / "data").mkdir()
    for i in range(50):
        (project / "data" / f"part{i}.csv").write_text("a,b\n1,2\n")
    (project / "analysis.ipynb").write_text("{}")
    return project.resolve()


async def _spawn(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(*argv, cwd=str(cwd), env=child_environment(),
                                                stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
                                                stderr=asyncio.subprocess.DEVNULL, start_new_session=True)
    await proc.wait()
    if proc.returncode != 0:
        raise RuntimeError(f"{argv[:3]}… exited {proc.returncode}")
    return time.perf_counter() - start


async def _tool(project: Path, perms: PermissionContext, decision: PermissionDecision | None) -> float:
    start = time.perf_counter()
    policy = None if decision is None else policy_for(decision, "true", perms, project)
    outcome = await run_command("true", project, 30, sandbox=policy)
    if not outcome.ok:
        raise RuntimeError(outcome.text())
    return time.perf_counter() - start


async def _build(project: Path, perms: PermissionContext) -> float:
    start = time.perf_counter()
    policy_for(PermissionDecision.allow("user"), "true", perms, project)
    return time.perf_counter() - start


async def _measure(project: Path, runs: int) -> dict[str, list[float]]:
    perms = PermissionContext(cwd=project, deny=["Read(./data/secret*)"])
    bash = shutil.which("bash") or "/bin/bash"
    status = sandbox_status()
    read_only = policy_for(PermissionDecision.allow("read_only"), "true", perms, project)
    writable = policy_for(PermissionDecision.allow("user"), "true", perms, project)
    cases = {
        "process: bash -c true": lambda: _spawn([bash, "-c", "true"], project),
        "process: in bwrap, read-only policy": lambda: _spawn(
            bwrap_argv(read_only, [bash, "-c", "true"], bwrap=status.executable or "bwrap"), project),
        "process: in bwrap, writable policy": lambda: _spawn(
            bwrap_argv(writable, [bash, "-c", "true"], bwrap=status.executable or "bwrap"), project),
        "Bash tool: not sandboxed": lambda: _tool(project, perms, None),
        "Bash tool: read-only sandbox (policy built per call)": lambda: _tool(
            project, perms, PermissionDecision.allow("read_only")),
        "Bash tool: writable sandbox (policy built per call)": lambda: _tool(
            project, perms, PermissionDecision.allow("user")),
    }
    cases["policy_for alone, writable (walks for protected and hidden paths)"] = lambda: _build(project, perms)
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for name, case in cases.items():  # warm-up: page cache, the probe, bwrap's first start
        await case()
    for _ in range(runs):
        for name, case in cases.items():
            samples[name].append(await case())
    return samples


def _paired(extra: list[float], base: list[float]) -> list[float]:
    return [e - b for e, b in zip(extra, base)]


def run(size: Size = "full") -> Figure:
    runs = pick(size, full=200, quick=40, smoke=3)
    figure = Figure(
        KEY, TITLE,
        method=(f"`true` run {runs} times per row after one warm-up each, rows interleaved in every round. "
                "Process rows spawn the argv and wait for it (asyncio); Bash-tool rows call `run_command` as the "
                "tool does, building the policy for each call (the walk for protected and hidden paths included) "
                "in a scratch project of 55 files with `.git/` and `.toolagent/`. Added cost = median of the "
                "paired differences (sandboxed sample − the unsandboxed sample of the same round)."),
        size=size,
    )
    status = sandbox_status()
    if not status.available:
        figure.add(Row.missing("sandboxed rows", "ms", f"no sandbox here: {status.reason}"))
        return figure
    root = Path(tempfile.mkdtemp(prefix="toolagent-b10-"))
    try:
        samples = asyncio.run(_measure(_project(root), runs))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    rows = {name: figure.add(Row.from_samples(name, values, "ms", scale=1000)) for name, values in samples.items()}
    base_process, base_tool = rows["process: bash -c true"], rows["Bash tool: not sandboxed"]
    for name, row in rows.items():
        if name.startswith("process: in"):
            row.compare_to(base_process)
        elif name.startswith("Bash tool: ") and row is not base_tool:
            row.compare_to(base_tool)
    for label, extra, base in (
        ("added by bwrap, read-only (process)", "process: in bwrap, read-only policy", "process: bash -c true"),
        ("added by bwrap, writable (process)", "process: in bwrap, writable policy", "process: bash -c true"),
        ("added per Bash command, read-only", "Bash tool: read-only sandbox (policy built per call)",
         "Bash tool: not sandboxed"),
        ("added per Bash command, writable", "Bash tool: writable sandbox (policy built per call)",
         "Bash tool: not sandboxed"),
    ):
        diffs = _paired(samples[extra], samples[base])
        row = figure.add(Row.from_samples(label, diffs, "ms", scale=1000, note="median of paired differences"))
        if label.startswith("added per Bash command"):
            figure.targets.append(Target(f"{label} ≤ {TARGET_MS:g} ms", row.value, TARGET_MS, "ms"))
    figure.notes.append(f"Sandbox backend: {status.describe()}.")
    mean = statistics.mean(_paired(samples["process: in bwrap, writable policy"], samples["process: bash -c true"]))
    figure.notes.append("The Bash tool polls for the shell's exit (every tenth of the time so far, 1–20 ms: a background "
                        "job holding the pipes must not delay the result), so its rows are slightly quantised; the process rows "
                        f"show the sandbox's own start-up (mean of the writable policy's differences: {mean * 1000:.2f} ms).")
    return figure
