"""B5 — what the live display costs: 20,000 text deltas through `RunDisplay` in a real kernel.

The deltas are fed inside a kernel started with `jupyter_client` (so every widget update is a
real comm message serialised and sent over ZeroMQ by the kernel), paced at a steady rate as a
stream would deliver them. The same loop without a renderer is the comparison: the CPU the
display adds is (CPU with it − CPU without) / wall time of the stream — the share of one core
the display keeps busy. "Display updates" are `RunDisplay.updates` (widget syncs that changed
something); the comm messages the front end receives are counted on IOPub beside them.

If ``benchmarks/display_cost.py`` exists (the in-process cost, without a kernel), it is run
too and its output attached.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .harness import Figure, Row, Size, Target, pick

KEY = "B5"
TITLE = "Display cost: 20,000 streamed text deltas through RunDisplay"
MAX_UPDATES_PER_SECOND = 20.0
MAX_CPU_SHARE = 0.10
RATE = 2_000.0
"""Deltas per second: the same pace as `display_cost.py`'s paced scenario, so the two agree."""
WORDS = ("the ", "model ", "streams ", "text ", "in ", "small ", "pieces, ", "**bold** ", "`code` ", "and\n\n")


# --------------------------------------------------------------------------------------------
# runs inside the kernel
# --------------------------------------------------------------------------------------------


async def feed(count: int, rate: float, render: bool) -> dict[str, Any]:
    """Feed ``count`` text deltas at ``rate`` per second; return wall, CPU and update counts."""
    from jupyter_toolagent.core.abort import AbortSignal
    from jupyter_toolagent.core.events import RequestStartedEvent, RunFinishedEvent, TextDeltaEvent
    from jupyter_toolagent.core.usage import Usage

    display = None
    if render:
        from jupyter_toolagent.notebook.display import RunDisplay

        display = RunDisplay(AbortSignal(), interactive=True)
        display.show()
        display.handle(RequestStartedEvent(index=0, model="bench"))
    tick = max(1, int(rate / 200))  # look at the clock every ~5 ms of stream
    snapshot = ""
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    for i in range(count):
        piece = WORDS[i % len(WORDS)]
        snapshot += piece  # as the stream accumulator does: each event carries the block so far
        event = TextDeltaEvent(text=piece, snapshot=snapshot, block_index=0)
        if display is not None:
            display.handle(event)
        if (i + 1) % tick == 0:
            due = start_wall + (i + 1) / rate
            await asyncio.sleep(max(0.0, due - time.perf_counter()))
    if display is not None:
        display.handle(RunFinishedEvent(reason="end_turn", usage=Usage()))
        display.finish()
    await asyncio.sleep(0)
    wall, cpu = time.perf_counter() - start_wall, time.process_time() - start_cpu
    return {"wall": wall, "cpu": cpu, "updates": display.updates if display is not None else 0,
            "chars": len(snapshot)}


def final_render_seconds(count: int) -> tuple[int, float]:
    """Characters of the final text and the seconds one full Markdown render of it takes."""
    from jupyter_toolagent.notebook.static_render import markdown_html

    text = "".join(WORDS[i % len(WORDS)] for i in range(count))
    markdown_html(text[:1000])
    start = time.perf_counter()
    markdown_html(text)
    return len(text), time.perf_counter() - start


# --------------------------------------------------------------------------------------------
# driven from the benchmark process
# --------------------------------------------------------------------------------------------


def run(size: Size = "full") -> Figure:
    count = pick(size, full=20_000, quick=10_000, smoke=400)
    runs = pick(size, full=2, quick=1, smoke=1)
    figure = Figure(
        KEY, TITLE,
        method=(f"{count:,} text deltas (one text block, {count / RATE:.1f} s at {RATE:,.0f} deltas/s — some 20–40× "
                "faster than a model streams, to load the display) fed to `RunDisplay(interactive=True)` inside a "
                "real kernel; the comparison is the same loop with no renderer. CPU = the kernel process's "
                f"`time.process_time()` (all its threads, so the IOPub thread's ZeroMQ sends count). Median of {runs} "
                "runs, alternating with and without the display."),
        size=size,
    )
    _measure(figure, count, RATE, runs)
    _attach_display_cost_script(figure, size)
    return figure


def _measure(figure: Figure, count: int, rate: float, runs: int) -> None:
    from .kernel import started_kernel

    with_display: list[dict[str, Any]] = []
    without: list[dict[str, Any]] = []
    comm_counts: list[int] = []
    with started_kernel() as kernel:
        kernel.run("import json\nfrom benchmarks.b5_display_cost import feed")
        kernel.run(f"await feed({min(count, 500)}, {rate}, True)")  # warm-up: imports, widget classes
        for _ in range(runs):
            for render in (False, True):
                code = f"print(json.dumps(await feed({count}, {rate}, {render})))"
                execution = kernel.run(code, timeout=count / rate * 10 + 60)
                result = json.loads(execution.stdout().strip().splitlines()[-1])
                if render:
                    with_display.append(result)
                    comm_counts.append(execution.count("comm_msg"))
                else:
                    without.append(result)

    cpu_base = figure.add(Row.from_samples("no renderer: CPU per delta", [r["cpu"] / count for r in without],
                                           "µs", scale=1e6))
    cpu_disp = figure.add(Row.from_samples("RunDisplay: CPU per delta", [r["cpu"] / count for r in with_display],
                                           "µs", scale=1e6)).compare_to(cpu_base)
    base_wall = figure.add(Row.from_samples("no renderer: wall time of the stream", [r["wall"] for r in without], "s"))
    disp_wall = figure.add(Row.from_samples("RunDisplay: wall time of the stream",
                                            [r["wall"] for r in with_display], "s"))
    shares = [(d["cpu"] - b["cpu"]) / d["wall"] for d, b in zip(with_display, without)]
    share = figure.add(Row.from_samples("CPU added by the display (share of one core)", shares, "%", scale=100))
    updates = figure.add(Row.from_samples("display updates per second (RunDisplay.updates / wall)",
                                          [r["updates"] / r["wall"] for r in with_display], "/s"))
    figure.add(Row.from_samples("comm messages per second sent to the front end",
                                [c / r["wall"] for c, r in zip(comm_counts, with_display)], "/s"))
    chars, render = final_render_seconds(count)
    figure.add(Row(f"one full Markdown render of the final text ({chars:,} characters)", render * 1000, "ms", 1,
                   note="for scale: what re-rendering the whole block on every update would cost"))
    figure.targets.append(Target(f"≤ {MAX_UPDATES_PER_SECOND:g} display updates per second", updates.value,
                                 MAX_UPDATES_PER_SECOND, "/s"))
    figure.targets.append(Target(f"≤ {MAX_CPU_SHARE:.0%} CPU overhead (share of one core during the stream)",
                                 share.value, MAX_CPU_SHARE * 100, "%"))
    if base_wall.value and disp_wall.value and disp_wall.value > 1.1 * base_wall.value:
        figure.notes.append(
            f"The display could not keep up: the {base_wall.value:.2f} s stream took {disp_wall.value:.2f} s with it, "
            f"because the kernel's loop was busy with the display (CPU per delta {cpu_disp.value:.0f} µs vs "
            f"{cpu_base.value:.0f} µs without).")


def _attach_display_cost_script(figure: Figure, size: Size) -> None:
    script = Path(__file__).with_name("display_cost.py")
    if size == "smoke" or not script.exists() or importlib.util.find_spec("benchmarks.display_cost") is None:
        return
    args = [sys.executable, "-m", "benchmarks.display_cost"] + (["--quick"] if size != "full" else [])
    try:
        done = subprocess.run(args, cwd=script.parents[1], capture_output=True, text=True, timeout=300)
        text = (done.stdout + done.stderr)[-4000:]
        figure.details.append(f"`benchmarks/display_cost.py` (in-process, no kernel; exit {done.returncode}):"
                              f"\n\n```\n{text}\n```")
    except subprocess.TimeoutExpired:
        figure.notes.append("benchmarks/display_cost.py did not finish within 300 s and was stopped.")
