"""B4 — end to end: a 50-request tool session, each turn one call, then a final text.

Every request carries the whole history (the transcript grows to 99 messages), so the figure
covers what a long session costs the client: building and serialising requests, streaming and
decoding responses, running the call, pairing results — for ours, also the permission decision,
the system prompt, cache breakpoints and the pairing check before every request (incremental:
only what was appended since the previous request is normalised and checked).
"""

from __future__ import annotations

import asyncio

from . import runners
from .harness import Figure, Row, Size, Target, pick
from .profiling import profile_markdown
from .server_process import fake_server_process

KEY = "B4"
TITLE = "End to end: a 50-request sequential tool session"
TARGET = 1.1
"""Ours against the fastest peer, whichever it is (issue 8)."""
STREAMING_TARGET = 1.0
"""Ours against the SDK's streaming tool runner, which streams every response as ours does
(issue 16: ahead of it)."""
STREAMING_SDK = "anthropic SDK tool runner (async, stream=True)"
STREAMING_PEERS = {"anthropic SDK tool runner (async, stream=True)", "pydantic-ai"}
"""Peers whose requests stream (SSE), as ours always do; pydantic-ai's ``Agent.run`` streams."""


def run(size: Size = "full") -> Figure:
    requests = pick(size, full=50, quick=50, smoke=6)
    runs = pick(size, full=5, quick=3, smoke=1)
    figure = Figure(
        KEY, TITLE,
        method=(f"{requests} model requests per run: {requests - 1} turns with one tool call (an async function that "
                "returns at once) and a final text turn, from the fake server in a child process. Whole-run wall "
                "time, and the CPU time of the benchmark process (the client: the server is a child process) per "
                f"request; median of {runs} runs per runner after one warm-up run."),
        size=size,
    )
    asyncio.run(_measure(figure, requests, runs))
    return figure


async def _measure(figure: Figure, requests: int, runs: int) -> None:
    timeline = runners.Timeline()
    name = "step"
    fn = timeline.async_sleeper(name, 0.0)
    sdk_problem = runners.sdk_runner_problem()
    pa_problem = runners.pydantic_ai_problem()
    candidates = [
        ("ours", None, lambda url: runners.prepare_ours(url, [fn])),
        ("anthropic SDK tool runner (async, non-streaming)", sdk_problem,
         lambda url: runners.prepare_sdk_async(url, [fn])),
        ("anthropic SDK tool runner (async, stream=True)", sdk_problem,
         lambda url: runners.prepare_sdk_async(url, [fn], stream=True)),
        ("pydantic-ai", pa_problem, lambda url: runners.prepare_pydantic_ai(url, [fn])),
    ]
    with fake_server_process("chain", tool_name=name, requests=requests) as served:
        url = served.base_url
        figure.notes.append(served.note)
        for label, problem, prepare in candidates:
            if problem:
                figure.add(Row.missing(label, "s", problem))
                continue
            times = await runners.measure(prepare(url), timeline, runs, expect_calls=requests - 1)
            figure.add(Row.from_samples(label, times.whole, "s"))
            figure.add(Row.from_samples(f"{label}, per request", times.whole, "ms", scale=1000 / requests))
            cpu = figure.add(Row.from_samples(f"{label}, client CPU per request", times.cpu, "ms",
                                              scale=1000 / requests))
            if label != "ours":
                cpu.compare_to(figure.row("ours, client CPU per request"))
        _compare(figure, STREAMING_PEERS)
        if any(target.met is False for target in figure.targets):
            run_once = runners.prepare_ours(url, [fn])
            await run_once()  # connection and caches warm, as in the timed runs
            figure.details.append(await profile_markdown(run_once, f"one {requests}-request run of ours",
                                                         restrict="jupyter_toolagent"))


def _compare(figure: Figure, streaming: set[str]) -> None:
    ours = figure.row("ours")
    peers = [r for r in figure.rows if r.label != "ours" and "per request" not in r.label and r.value is not None]
    if not peers:
        figure.targets.append(Target(f"ours ≤ {TARGET}× the fastest peer", None, TARGET, "×",
                                     note="no peer could be measured"))
        return
    fastest = min(peers, key=lambda r: r.value or 0.0)
    for peer in peers:
        peer.compare_to(ours)
    ours.compare_to(fastest)
    figure.targets.append(Target(f"ours ≤ {TARGET}× the fastest peer ({fastest.label})", ours.ratio, TARGET, "×"))
    sdk_streaming = next((r for r in peers if r.label == STREAMING_SDK), None)
    if sdk_streaming is not None:
        ratio = (ours.value / sdk_streaming.value) if ours.value and sdk_streaming.value else None
        figure.targets.append(Target(f"ours ≤ {STREAMING_TARGET}× the SDK's streaming tool runner", ratio,
                                     STREAMING_TARGET, "×"))
    streamers = [r for r in peers if r.label in streaming and r is not sdk_streaming]
    if streamers and fastest not in streamers:
        quickest = min(streamers, key=lambda r: r.value or 0.0)
        ratio = (ours.value / quickest.value) if ours.value and quickest.value else None
        figure.targets.append(Target(f"ours ≤ {TARGET}× the fastest other peer that also streams ({quickest.label})",
                                     ratio, TARGET, "×",
                                     note="own check: ours streams every response, to start tools early", own=True))
    figure.notes.append("Peer rows show their time relative to ours; the ours row relative to the fastest peer.")
