"""B2 — concurrency: one assistant turn asks for 8 concurrency-safe calls of 200 ms each.

The ideal is 200 ms of tool time (all eight overlap). Measured twice: with async functions
(``await asyncio.sleep``) and with blocking functions (``time.sleep``, which every loop runs in
worker threads). The "tool phase" is read from the tools' own clock (first start → last end),
so it is the same quantity for every runner; the whole run (two HTTP requests through the fake
server, SSE decoding included) is shown beside it.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from . import runners
from .harness import Figure, Row, Size, Target, pick
from .server_process import fake_server_process

KEY = "B2"
TITLE = "Concurrency: 8 concurrency-safe calls of 200 ms in one turn"
CALLS = 8
SLEEP = 0.2
SPEEDUP_TARGET = 5.0
IDEAL_FACTOR_TARGET = 1.15
SEQUENTIAL_RUNS = 3
"""Sequential runners take 8 × 200 ms a run and vary little: fewer repeats keep the run short."""


def run(size: Size = "full") -> Figure:
    runs = pick(size, full=5, quick=3, smoke=1)
    seconds = pick(size, full=SLEEP, quick=SLEEP, smoke=0.02)
    figure = Figure(
        KEY, TITLE,
        method=(f"{CALLS} tool_use blocks in one streamed assistant turn from the fake server, each tool sleeping "
                f"{seconds * 1000:.0f} ms, then a final text turn; the server runs in a child process. Median of "
                f"{runs} runs per runner ({min(runs, SEQUENTIAL_RUNS)} for the sequential ones) after one untimed "
                "warm-up run. 'tool phase' = first tool start → last tool end (the tools' own clock); "
                "'whole run' = call → final answer (2 requests). Ratios of tool phases are against the ideal "
                f"({seconds * 1000:.0f} ms: all calls overlap). Ours starts each call as its block arrives, so its "
                "tool phase also spans the rest of the stream; the peers start their calls after the stream."),
        size=size,
    )
    asyncio.run(_measure(figure, runs, seconds))
    return figure


async def _measure(figure: Figure, runs: int, seconds: float) -> None:
    for variant in ("async", "sync"):
        await _variant(figure, variant, runs, seconds)


async def _variant(figure: Figure, variant: str, runs: int, seconds: float) -> None:
    timeline = runners.Timeline()
    name = f"wait_{variant}"
    fn = (timeline.async_sleeper if variant == "async" else timeline.sync_sleeper)(name, seconds)
    tag = "async def + asyncio.sleep" if variant == "async" else "def + time.sleep (threads)"
    ideal = figure.add(Row(f"[{variant}] ideal (all overlap)", seconds, "s", note="by construction"))
    sdk_label = "anthropic SDK tool runner (async)" if variant == "async" else "anthropic SDK tool runner (sync client)"

    candidates: list[tuple[str, Any]] = []
    with fake_server_process("fan_out", tool_name=name, calls=CALLS) as served:
        url = served.base_url
        if served.note not in figure.notes:
            figure.notes.append(served.note)
        candidates.append(("ours", lambda: runners.prepare_ours(url, [fn])))
        candidates.append(("ours, tools marked not concurrency-safe (sequential)",
                           lambda: runners.prepare_ours(url, [fn], concurrency_safe=False)))
        if variant == "async":
            candidates.append((sdk_label, lambda: runners.prepare_sdk_async(url, [fn])))
        else:
            candidates.append((sdk_label, lambda: runners.prepare_sdk_sync(url, [fn])))
        candidates.append(("pydantic-ai", lambda: runners.prepare_pydantic_ai(url, [fn])))
        sdk_problem = runners.sdk_runner_problem()
        pa_problem = runners.pydantic_ai_problem()

        results: dict[str, runners.RunTimes | str] = {}
        for label, prepare in candidates:
            problem = sdk_problem if label == sdk_label else pa_problem if label == "pydantic-ai" else None
            if problem:
                results[label] = problem
                continue
            repeats = min(runs, SEQUENTIAL_RUNS) if "sequential" in label or label == sdk_label else runs
            results[label] = await runners.measure(prepare(), timeline, repeats, expect_calls=CALLS)

    ours_whole: Row | None = None
    for label, result in results.items():
        full_label = f"[{variant}] {label}"
        if isinstance(result, str):
            figure.add(Row.missing(f"{full_label}: tool phase", "s", result))
            continue
        figure.add(Row.from_samples(f"{full_label}: tool phase", result.tool_phase, "s")).compare_to(ideal)
        whole = figure.add(Row.from_samples(f"{full_label}: whole run", result.whole, "s"))
        if label == "ours":
            ours_whole = whole
        elif ours_whole is not None:
            whole.compare_to(ours_whole)

    ours = figure.row(f"[{variant}] ours: tool phase")
    if variant == "sync" and ours.ratio is not None and ours.ratio >= 1.5:
        _explain_threads(figure, seconds)
    figure.targets.append(Target(f"[{variant}] ours tool phase ≤ {IDEAL_FACTOR_TARGET}× ideal ({tag})",
                                 ours.ratio, IDEAL_FACTOR_TARGET, "×"))
    sequential = figure.row(f"[{variant}] {sdk_label}: tool phase")
    compared = sdk_label
    if sequential.value is None:
        sequential = figure.row(f"[{variant}] ours, tools marked not concurrency-safe (sequential): tool phase")
        compared = "ours with the tools marked sequential"
    speedup = sequential.value / ours.value if sequential.value and ours.value else None
    figure.targets.append(Target(f"[{variant}] ours ≥ {SPEEDUP_TARGET:g}× faster than a sequential runner ({compared})",
                                 speedup, SPEEDUP_TARGET, "×", at_least=True))


def _explain_threads(figure: Figure, seconds: float) -> None:
    """The blocking calls ran in waves: name the thread pool size that explains it."""
    workers = min(32, (os.cpu_count() or 1) + 4)  # concurrent.futures.ThreadPoolExecutor's default
    if workers >= CALLS:
        return
    waves = -(-CALLS // workers)
    figure.notes.append(
        f"[sync] The blocking calls ran in waves: the tool phase (≈ {waves} × {seconds * 1000:.0f} ms) matches the "
        f"event loop's default ThreadPoolExecutor, which `asyncio.to_thread` uses: min(32, cpu_count + 4) = "
        f"{workers} workers on this machine, fewer than the {CALLS} calls the scheduler starts at once. "
        "pydantic-ai runs them through anyio's thread limiter (40 threads).")
