"""Coalescing: a bounded number of display updates whatever the delta rate, final state kept."""

from __future__ import annotations

import asyncio
import collections

import pytest

from jupyter_toolagent.core import events as E
from jupyter_toolagent.core.abort import AbortSignal
from jupyter_toolagent.core.usage import Usage
from jupyter_toolagent.notebook.display import RunDisplay
from jupyter_toolagent.notebook.throttle import Throttle


class FakeClock:
    def __init__(self, t: float = 1000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t

    def advance(self, dt: float) -> None:
        self.t += dt


def test_throttle_limits_rate_on_a_fast_stream():
    clock = FakeClock()
    th = Throttle(10.0, clock=clock)
    fired = []
    for _ in range(10_000):  # 10,000 changes over 10 s
        clock.advance(0.001)
        if th.note():
            fired.append(clock.t)
    assert 80 <= len(fired) <= 101
    gaps = [b - a for a, b in zip(fired, fired[1:])]
    assert min(gaps) >= 0.1 - 1e-9


def test_throttle_reads_the_counter_before_the_clock():
    clock = FakeClock()
    th = Throttle(10.0, clock=clock)
    for _ in range(10_000):
        clock.advance(0.001)
        th.note()
    assert th.clock_reads < 10_000 / 4  # far fewer clock reads than changes


def test_throttle_shows_slow_changes_at_once():
    clock = FakeClock()
    th = Throttle(10.0, clock=clock)
    results = []
    for _ in range(20):
        clock.advance(0.5)
        results.append(th.note())
    assert all(results)


def test_throttle_recovers_after_a_burst():
    clock = FakeClock()
    th = Throttle(10.0, clock=clock)
    for _ in range(5_000):
        clock.advance(0.0001)
        th.note()
    th.mark_flushed()  # e.g. the trailing flush after the burst
    clock.advance(1.0)
    assert th.note()  # the next slow change is shown at once
    assert th.due_in() == pytest.approx(0.1)


def test_throttle_rejects_a_non_positive_rate():
    with pytest.raises(ValueError):
        Throttle(0)


def test_20000_deltas_over_10_s_give_at_most_20_updates_per_second_and_complete_text():
    clock = FakeClock()
    view = RunDisplay(AbortSignal(), interactive=True, clock=clock, max_updates_per_second=15)
    sync_times: list[float] = []
    original_sync = view.widgets.sync

    def recording_sync(state, dirty):
        sync_times.append(clock.t)
        return original_sync(state, dirty)

    view.widgets.sync = recording_sync
    view.handle(E.RequestStartedEvent(index=0, model="m"))
    text = ""
    for i in range(20_000):  # 2,000 deltas per simulated second
        clock.advance(0.0005)
        delta = chr(ord("a") + i % 26) + (" " if i % 7 == 6 else "")
        text += delta
        view.handle(E.TextDeltaEvent(text=delta, snapshot=text, block_index=0))
    per_second = collections.Counter(int(t - 1000.0) for t in sync_times)
    assert max(per_second.values()) <= 20, per_second
    assert len(sync_times) >= 10 * 10  # and it did keep updating while streaming
    view.handle(E.RequestFinishedEvent(index=0, stop_reason="end_turn", usage=Usage(1, 1, 0, 0, 1)))
    view.handle(E.RunFinishedEvent(reason="end_turn", usage=Usage(1, 1, 0, 0, 1)))
    view.finish()
    (widget,) = view.widgets.texts.values()
    assert text[-300:] in widget.value  # the final text reached the widget whole
    assert view.state.texts["0:0"].text == text


def test_pending_text_is_flushed_by_finish_even_without_a_closing_event():
    clock = FakeClock()
    view = RunDisplay(AbortSignal(), interactive=True, clock=clock)
    view.handle(E.RequestStartedEvent(index=0, model="m"))
    text = ""
    for word in ["one ", "two ", "three ", "FINAL"]:
        text += word
        view.handle(E.TextDeltaEvent(text=word, snapshot=text, block_index=0))  # no time passes
    (widget,) = view.widgets.texts.values()
    assert "FINAL" not in widget.value  # held back by the throttle
    view.finish()
    assert "FINAL" in widget.value


@pytest.mark.asyncio
async def test_trailing_flush_shows_held_back_text_without_further_events():
    # The throttle reads a frozen clock, so the second delta is held back however slowly the
    # first render ran; the trailing flush is a real timer on the loop.
    view = RunDisplay(AbortSignal(), interactive=True, max_updates_per_second=20, clock=FakeClock())
    view.handle(E.RequestStartedEvent(index=0, model="m"))
    view.handle(E.TextDeltaEvent(text="a", snapshot="a", block_index=0))
    view.handle(E.TextDeltaEvent(text="b", snapshot="ab END", block_index=0))
    (widget,) = view.widgets.texts.values()
    assert "END" not in widget.value
    await asyncio.sleep(0.2)
    assert "END" in widget.value
