"""B3 — starting tools while the model streams (SPEC §4.2) against starting them after it.

The fake server streams 4 tool_use blocks 300 ms apart; each tool takes 300 ms. With the
streaming executor a call starts at its block's ``content_block_stop``; with
``streaming_tools=False`` the loop runs `run_tools` once the message has ended.

What to expect, by construction (blocks complete at about 0, 0.3, 0.6 and 0.9 s):

* concurrency-safe tools: both paths end near 1.2 s — after the stream all four overlap, so
  starting early gains nothing for the *last* result; the first result comes ~0.9 s sooner;
* tools that must run one at a time: streaming ends near 1.2 s, after-the-stream near
  0.9 + 4 × 0.3 = 2.1 s.

The anthropic SDK's runner with ``run_tools_eagerly=True`` (it too starts a call once its
block is complete, one call at a time) is measured beside them.
"""

from __future__ import annotations

import asyncio
from typing import Any

from . import runners
from .harness import Figure, Row, Size, Target, pick
from .server_process import fake_server_process

KEY = "B3"
TITLE = "Streaming start: 4 tool_use blocks 300 ms apart, tools of 300 ms"
BLOCKS = 4
OWN_CHECK = "own check: issue 8 sets no number for B3"


def run(size: Size = "full") -> Figure:
    runs = pick(size, full=3, quick=2, smoke=1)
    gap = pick(size, full=0.3, quick=0.3, smoke=0.03)
    figure = Figure(
        KEY, TITLE,
        method=(f"The fake server (child process) streams {BLOCKS} tool_use blocks with {gap * 1000:.0f} ms between "
                f"blocks; each tool sleeps {gap * 1000:.0f} ms; then a text turn. Time from calling the run to the "
                f"last (and first) tool result, from the tools' own clock. Median of {runs} runs after one warm-up."),
        size=size,
    )
    asyncio.run(_measure(figure, runs, gap))
    return figure


async def _measure(figure: Figure, runs: int, gap: float) -> None:
    timeline = runners.Timeline()
    name = "work"
    fn = timeline.async_sleeper(name, gap)
    stream_end = gap * (BLOCKS - 1)
    with fake_server_process("fan_out", tool_name=name, calls=BLOCKS, block_delay=gap) as served:
        url = served.base_url
        figure.notes.append(served.note)
        for safe in (True, False):
            kind = "concurrency-safe" if safe else "sequential"
            streaming_ideal = stream_end + gap
            after_ideal = stream_end + (gap if safe else BLOCKS * gap)
            figure.add(Row(f"[{kind}] ideal, streaming: last result", streaming_ideal, "s", note="by construction"))
            figure.add(Row(f"[{kind}] ideal, after the stream: last result", after_ideal, "s",
                           note="by construction"))
            rows: dict[str, tuple[Row, Row]] = {}
            for streaming in (True, False):
                path = "streaming executor" if streaming else "after the stream (streaming_tools=False)"
                label = f"[{kind}] ours, {path}"
                run_once = runners.prepare_ours(url, [fn], concurrency_safe=safe, streaming_tools=streaming)
                times = await runners.measure(run_once, timeline, runs, expect_calls=BLOCKS)
                last = figure.add(Row.from_samples(f"{label}: last result", times.to_last_result, "s"))
                first = figure.add(Row.from_samples(f"{label}: first result", times.to_first_result, "s"))
                rows["streaming" if streaming else "after"] = (last, first)
            after_last, after_first = rows["after"]
            rows["streaming"][0].compare_to(after_last)
            rows["streaming"][1].compare_to(after_first)
            if not safe:
                figure.targets.append(Target(
                    f"[{kind}] streaming executor's last result earlier than after-the-stream's (ratio < 1)",
                    rows["streaming"][0].ratio, 1.0, "×", note=OWN_CHECK, own=True))
            figure.targets.append(Target(
                f"[{kind}] streaming executor within 1.15× of its ideal ({streaming_ideal:g} s)",
                _ratio(rows["streaming"][0], streaming_ideal), 1.15, "×", note=OWN_CHECK, own=True))
        await _sdk_eager(figure, url, fn, timeline, runs)


async def _sdk_eager(figure: Figure, url: str, fn: Any, timeline: runners.Timeline, runs: int) -> None:
    label = "[peer] anthropic SDK tool runner, stream=True, run_tools_eagerly=True"
    problem = runners.sdk_runner_problem()
    if problem:
        figure.add(Row.missing(f"{label}: last result", "s", problem))
        return
    try:
        run_once = runners.prepare_sdk_async(url, [fn], stream=True, eager=True)
        times = await runners.measure(run_once, timeline, runs, expect_calls=BLOCKS)
    except Exception as exc:  # an SDK release without eager runs: say so, keep our figures
        figure.add(Row.missing(f"{label}: last result", "s", f"{type(exc).__name__}: {exc}"))
        return
    figure.add(Row.from_samples(f"{label}: last result", times.to_last_result, "s"))
    figure.add(Row.from_samples(f"{label}: first result", times.to_first_result, "s"))


def _ratio(row: Row, ideal: float) -> float | None:
    return row.value / ideal if row.value is not None else None
