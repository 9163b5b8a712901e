"""Size and time bounds: cutting, budgets, head-and-tail streams, the bounded repr, timeouts."""

from __future__ import annotations

import asyncio
import sys
import time

import pytest

from jupyter_toolagent.core.results import truncate_middle
from jupyter_toolagent.tools.bounded import (
    DEFAULT_TIMEOUT,
    HeadTailBuffer,
    TextBudget,
    bounded_repr,
    call_with_timeout,
    cut_end,
    run_in_daemon_thread,
    user_code_deadline,
)
from jupyter_toolagent.errors import TimedOut


def test_truncate_middle_keeps_both_ends_and_cut_end_keeps_the_start() -> None:
    text = "HEAD" + "x" * 10_000 + "TAIL"
    middle = truncate_middle(text, 200)
    assert len(middle) <= 200 and middle.startswith("HEAD") and middle.endswith("TAIL") and "cut" in middle
    end = cut_end(text, 200)
    assert len(end) <= 200 and end.startswith("HEAD") and "TAIL" not in end and "more characters" in end
    assert cut_end("short", 200) == "short"


@pytest.mark.parametrize("limit", [50, 200, 1_000])
def test_text_budget_never_exceeds_its_limit_and_says_it_cut(limit: int) -> None:
    budget = TextBudget(limit)
    for i in range(100):
        budget.add(f"section {i}: " + "y" * 37 + "\n")
    assert len(budget.text()) <= limit
    assert budget.cut
    if limit >= 200:
        assert "output cut" in budget.text()
    assert budget.add("more") is False


def test_head_tail_buffer_keeps_first_and_last_parts_of_a_long_stream() -> None:
    buffer = HeadTailBuffer(1_000)
    buffer.write("START\n")
    for i in range(10_000):
        buffer.write(f"line {i}\n")
    buffer.write("END\n")
    value = buffer.getvalue()
    assert value.startswith("START\nline 0\n") and value.endswith("line 9999\nEND\n")
    assert len(value) < 1_100 and "cut from the middle" in value
    small = HeadTailBuffer(1_000)
    small.write("abc")
    small.write("def")
    assert small.getvalue() == "abcdef"


def test_bounded_repr_never_sorts_and_looks_at_few_items() -> None:
    class Unorderable:
        def __lt__(self, other: object) -> bool:
            raise AssertionError("sorted")

        def __repr__(self) -> str:
            return "U"

    keys = {Unorderable(): i for i in range(1_000)}
    text = bounded_repr(keys, max_items=3)
    assert text.startswith("{U: 0, U: 1, U: 2, ...")
    assert bounded_repr(set(range(100_000)), max_items=5).count(",") == 5
    huge = list(range(1_000_000))
    start = time.perf_counter()
    assert bounded_repr(huge).endswith("...]")
    assert time.perf_counter() - start < 0.5


def test_bounded_repr_does_not_call_a_container_subclass_len() -> None:
    class Sneaky(list):
        def __len__(self) -> int:
            raise AssertionError("__len__ called")

    assert bounded_repr(Sneaky([1, 2, 3])) == "Sneaky([1, 2, 3])"


def test_bounded_repr_names_the_exception_of_a_raising_repr() -> None:
    class Raising:
        def __repr__(self) -> str:
            raise ValueError("nope")

    text = bounded_repr([Raising()])
    assert "ValueError: nope" in text and "__repr__ raised" in text


def test_bounded_repr_gives_up_on_a_sleeping_repr() -> None:
    class Sleeping:
        def __repr__(self) -> str:
            time.sleep(30)
            return "late"

    start = time.perf_counter()
    text = bounded_repr(Sleeping(), timeout=0.3)
    assert time.perf_counter() - start < 2
    assert "did not finish within 0.3 s" in text


def test_huge_ints_and_strings_are_cheap() -> None:
    assert "digits" in bounded_repr(10 ** 100_000)
    text = bounded_repr("z" * 50_000_000, max_chars=100)
    assert len(text) <= 100


def test_call_with_timeout_returns_raises_and_times_out() -> None:
    assert call_with_timeout(lambda a, b: a + b, 2, 3) == 5
    with pytest.raises(KeyError):
        call_with_timeout(lambda: {}["missing"])
    with pytest.raises(TimedOut):
        call_with_timeout(time.sleep, 5, timeout=0.1)
    assert DEFAULT_TIMEOUT == 1.5


def test_a_deadline_bounds_the_total_time_of_many_timeouts() -> None:
    start = time.perf_counter()
    outcomes = []
    with user_code_deadline(0.4):
        for _ in range(10):
            try:
                call_with_timeout(time.sleep, 5, timeout=0.3)
            except TimedOut as exc:
                outcomes.append(str(exc))
    assert time.perf_counter() - start < 1.5
    assert "used up" in outcomes[-1]


@pytest.mark.asyncio
async def test_run_in_daemon_thread_leaves_the_loop_free() -> None:
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    task = asyncio.ensure_future(ticker())
    try:
        assert await run_in_daemon_thread(lambda: (time.sleep(0.3), 7)[1]) == 7
        with pytest.raises(TimedOut):
            await run_in_daemon_thread(time.sleep, 5, timeout=0.2)
    finally:
        task.cancel()
    assert ticks >= 20


def test_prints_in_the_thread_follow_the_callers_capture() -> None:
    from jupyter_toolagent.core.capture import capture_output

    with capture_output() as captured:
        call_with_timeout(lambda: print("from the worker", file=sys.stdout))
    assert "from the worker" in captured.getvalue()
