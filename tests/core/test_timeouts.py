"""`await_within`: the time limit a hook runs under, with no timer for one that never waits."""

from __future__ import annotations

import asyncio
import contextvars

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_toolagent.core.timeouts import await_within



current = contextvars.ContextVar("current", default="unset")


async def returns_at_once(value: int) -> int:
    return value


async def waits(seconds: float, value: int, log: list[str]) -> int:
    try:
        await asyncio.sleep(seconds)
        log.append("woke")
        return value
    finally:
        log.append("finally")


@pytest.mark.asyncio
async def test_a_coroutine_that_never_waits_arms_no_timer(monkeypatch: pytest.MonkeyPatch) -> None:
    armed: list[float] = []
    real = asyncio.timeout

    def spy(delay: float | None) -> asyncio.Timeout:
        armed.append(delay or 0.0)
        return real(delay)

    monkeypatch.setattr(asyncio, "timeout", spy)
    assert await await_within(returns_at_once(7), 1.0) == 7
    assert armed == []
    log: list[str] = []
    assert await await_within(waits(0.0, 8, log), 1.0) == 8  # sleep(0) suspends once: the timer is armed
    assert armed == [1.0]


@pytest.mark.asyncio
async def test_a_coroutine_that_waits_too_long_is_cancelled_and_its_cleanup_runs() -> None:
    log: list[str] = []
    with pytest.raises(TimeoutError):
        await await_within(waits(5.0, 1, log), 0.05)
    assert log == ["finally"]


@pytest.mark.asyncio
async def test_an_outside_cancellation_reaches_the_coroutine() -> None:
    log: list[str] = []
    task = asyncio.ensure_future(await_within(waits(5.0, 1, log), 10.0))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert log == ["finally"]


@pytest.mark.asyncio
async def test_errors_raised_before_and_after_the_first_wait_propagate() -> None:
    async def fails_at_once() -> None:
        raise ValueError("at once")

    async def fails_later() -> None:
        await asyncio.sleep(0)
        raise KeyError("later")

    with pytest.raises(ValueError, match="at once"):
        await await_within(fails_at_once(), 1.0)
    with pytest.raises(KeyError, match="later"):
        await await_within(fails_later(), 1.0)


@pytest.mark.asyncio
async def test_a_coroutine_can_catch_an_error_thrown_into_it_and_go_on() -> None:
    async def outlives_a_cancelled_wait() -> str:
        inner = asyncio.ensure_future(asyncio.sleep(5))
        asyncio.get_running_loop().call_later(0.01, inner.cancel)
        try:
            await inner
        except asyncio.CancelledError:
            await asyncio.sleep(0)
            return "recovered"
        return "not cancelled"

    assert await await_within(outlives_a_cancelled_wait(), 1.0) == "recovered"


@pytest.mark.asyncio
async def test_the_coroutine_sees_the_callers_context_variables() -> None:
    async def reads() -> str:
        await asyncio.sleep(0)
        return current.get()

    token = current.set("caller")
    try:
        assert await await_within(reads(), 1.0) == "caller"
    finally:
        current.reset(token)


@settings(max_examples=40, deadline=None)
@given(steps=st.lists(st.sampled_from(["sleep0", "future", "return"]), min_size=0, max_size=6),
       value=st.integers())
def test_any_mix_of_waits_gives_the_same_result_as_a_plain_await(steps: list[str], value: int) -> None:
    async def body() -> tuple[int, int]:
        waited = 0
        for step in steps:
            if step == "return":
                break
            if step == "sleep0":
                await asyncio.sleep(0)
            else:
                future = asyncio.get_running_loop().create_future()
                asyncio.get_running_loop().call_soon(future.set_result, 1)
                waited += await future
        return value, waited

    async def both() -> tuple[tuple[int, int], tuple[int, int]]:
        return await body(), await await_within(body(), 5.0)

    plain, within = asyncio.run(both())
    assert plain == within
