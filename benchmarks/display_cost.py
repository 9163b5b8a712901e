"""What `RunDisplay` costs per streamed text delta, in-process (no kernel, no front end).

``python -m benchmarks.display_cost [--quick] [--count N] [--rate R]``

Two scenarios, each compared with the same loop without a renderer (events built and
dropped):

* **paced stream** — a simulated clock advances ``1 / rate`` seconds per delta, as a model
  streaming at ``rate`` deltas per second would; the figure is the display updates per
  simulated second (the coalescing bound, ≤ 20/s) and the CPU time the display adds;
* **burst** — the real clock and no pacing: every delta arrives as fast as the loop can make it
  (the worst case for the throttle's clock reads), reported per real second.

Widgets are real ipywidgets with no front end attached (their comm is a no-op), so the numbers
are the Python-side cost: reducer, throttle, Markdown rendering and trait serialisation. The
benchmark B5 measures the same inside a real kernel with comm messages on the wire.
"""

from __future__ import annotations

import argparse
import collections
import time
from typing import Callable

from jupyter_toolagent.core.abort import AbortSignal
from jupyter_toolagent.core.events import RequestStartedEvent, RunFinishedEvent, TextDeltaEvent
from jupyter_toolagent.core.usage import Usage
from jupyter_toolagent.notebook.display import RunDisplay
from jupyter_toolagent.notebook.static_render import text_html

WORDS = ("the ", "model ", "streams ", "text ", "in ", "small ", "pieces, ", "**bold** ", "`code` ", "and\n\n")

Result = tuple[float, float, "RunDisplay | None", list[float]]


class SimulatedClock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def feed(count: int, *, render: bool, clock: Callable[[], float], step: Callable[[], None]) -> Result:
    """Feed ``count`` deltas; return (CPU seconds, wall seconds, display, times of updates)."""
    display = RunDisplay(AbortSignal(), interactive=True, clock=clock) if render else None
    update_times: list[float] = []
    if display is not None:
        sync = display.widgets.sync

        def timed_sync(state, dirty):  # type: ignore[no-untyped-def]
            changed = sync(state, dirty)
            if changed:
                update_times.append(clock())
            return changed

        display.widgets.sync = timed_sync  # type: ignore[method-assign]
        display.handle(RequestStartedEvent(index=0, model="bench"))
    snapshot = ""
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for i in range(count):
        step()
        piece = WORDS[i % len(WORDS)]
        snapshot += piece  # what the SDK's accumulator hands over with every delta
        event = TextDeltaEvent(text=piece, snapshot=snapshot, block_index=0)
        if display is not None:
            display.handle(event)
    if display is not None:
        display.handle(RunFinishedEvent(reason="end_turn", usage=Usage()))
        display.finish()
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    if display is not None:
        block = display.state.texts["0:0"]
        assert block.text == snapshot and display.widgets.texts["0:0"].value == text_html(block), "final text lost"
    return cpu, wall, display, update_times


def best_of(runs: int, fn: Callable[[], Result]) -> Result:
    return min((fn() for _ in range(runs)), key=lambda r: r[0])


def paced(count: int, rate: float, runs: int) -> None:
    def scenario(render: bool) -> Result:
        clock = SimulatedClock()

        def step() -> None:
            clock.t += 1.0 / rate

        return feed(count, render=render, clock=clock, step=step)

    base_cpu, _, _, _ = best_of(runs, lambda: scenario(False))
    cpu, _, display, times = best_of(runs, lambda: scenario(True))
    assert display is not None
    stream_seconds = count / rate
    per_second = collections.Counter(int(t) for t in times)
    print(f"paced stream: {count:,} deltas at {rate:,.0f}/s = {stream_seconds:.1f} s of simulated stream")
    print(f"  display updates: {display.updates} ({display.updates / stream_seconds:.1f}/s on average, "
          f"at most {max(per_second.values())} in any one second)")
    print(f"  CPU without renderer: {base_cpu * 1e3:.1f} ms ({base_cpu / count * 1e6:.2f} µs/delta)")
    print(f"  CPU with RunDisplay:  {cpu * 1e3:.1f} ms ({cpu / count * 1e6:.2f} µs/delta)")
    print(f"  overhead ratio: {cpu / base_cpu:.1f}x; added {(cpu - base_cpu) / count * 1e6:.2f} µs/delta = "
          f"{(cpu - base_cpu) / stream_seconds * 100:.2f}% of one core during the stream")
    print(f"  throttle clock reads: {display.throttle.clock_reads:,} for {count:,} deltas")


def burst(count: int, runs: int) -> None:
    base_cpu, base_wall, _, _ = best_of(runs, lambda: feed(count, render=False, clock=time.monotonic, step=lambda: None))
    cpu, wall, display, _ = best_of(runs, lambda: feed(count, render=True, clock=time.monotonic, step=lambda: None))
    assert display is not None
    print(f"burst: {count:,} deltas as fast as possible")
    print(f"  without renderer: {base_wall * 1e3:.1f} ms wall, {base_cpu * 1e3:.1f} ms CPU")
    print(f"  with RunDisplay:  {wall * 1e3:.1f} ms wall, {cpu * 1e3:.1f} ms CPU "
          f"({display.updates} display updates in all: the first text, the throttled ones, the final one)")
    print(f"  overhead ratio: {cpu / base_cpu:.1f}x CPU")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5,000 deltas, one run")
    parser.add_argument("--count", type=int, default=None)
    parser.add_argument("--rate", type=float, default=2_000.0, help="simulated deltas per second (paced scenario)")
    args = parser.parse_args(argv)
    count = args.count or (5_000 if args.quick else 20_000)
    runs = 1 if args.quick else 3
    feed(500, render=True, clock=time.monotonic, step=lambda: None)  # warm-up: imports, widget classes
    paced(count, args.rate, runs)
    burst(count, runs)


if __name__ == "__main__":
    main()
