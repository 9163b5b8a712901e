"""A kernel interrupt (SIGINT) reaches RunPython code that blocks the loop's thread.

The tests install a SIGINT handler shaped like ipykernel's while a cell awaits (it only records,
as ipykernel's only schedules a cancellation on the loop), then send SIGINT to this process
from a timer thread while RunPython runs. Blocking code must be interrupted at once (error
result, run aborted); code that awaits must leave the signal to the kernel's handler; the
kernel's handler is back afterwards, whatever happened.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any, Iterator

import pytest
from tool_support import call, text_of

from jupyter_toolagent.core.abort import KERNEL_INTERRUPT
from jupyter_toolagent.tools.python_exec import CodeRunner, InterruptibleSteps, keyboard_interrupts

BLOCKING_BUDGET = 3.0  # seconds from SIGINT to the end of a 10-second sleep


class KernelStyleHandler:
    """Records SIGINTs instead of raising, as ipykernel's handler does while a cell awaits."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, signum: int, frame: Any) -> None:
        self.calls += 1


@pytest.fixture
def kernel_handler() -> Iterator[KernelStyleHandler]:
    handler = KernelStyleHandler()
    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield handler
    finally:
        signal.signal(signal.SIGINT, previous)


def sigint_after(seconds: float) -> threading.Timer:
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    timer.daemon = True
    timer.start()
    return timer


@pytest.mark.asyncio
@pytest.mark.parametrize("prelude", ["", "import asyncio\nawait asyncio.sleep(0.01)\n"],
                         ids=["plain code", "after an await"])
async def test_sigint_interrupts_code_that_blocks_the_thread(ctx_in: Any, kernel_handler: KernelStyleHandler,
                                                             prelude: str) -> None:
    namespace: dict[str, Any] = {}
    ctx = ctx_in(namespace)
    code = prelude + "import time\nstarted = True\ntime.sleep(10)\nslow_done = True"
    timer = sigint_after(0.3)
    start = time.monotonic()
    outcome = await call(ctx, "RunPython", code=code)
    elapsed = time.monotonic() - start
    timer.join()
    assert elapsed < BLOCKING_BUDGET, f"the sleep ran on for {elapsed:.1f} s"
    assert outcome.is_error and "KeyboardInterrupt" in text_of(outcome)
    assert "The kernel was interrupted" in text_of(outcome)
    assert ctx.abort.aborted and ctx.abort.reason == KERNEL_INTERRUPT
    assert namespace.get("started") is True and "slow_done" not in namespace
    assert kernel_handler.calls == 0, "the interrupt went to the code, not to the kernel's handler"
    assert signal.getsignal(signal.SIGINT) is kernel_handler, "the kernel's handler is back"


@pytest.mark.asyncio
async def test_while_the_code_awaits_the_signal_goes_to_the_kernel_s_handler(
        ctx_in: Any, kernel_handler: KernelStyleHandler) -> None:
    namespace: dict[str, Any] = {}
    ctx = ctx_in(namespace)
    timer = sigint_after(0.2)
    outcome = await call(ctx, "RunPython", code="import asyncio\nawait asyncio.sleep(0.8)\nfinished = True")
    timer.join()
    assert kernel_handler.calls == 1
    assert outcome.status == "done" and namespace.get("finished") is True
    assert not ctx.abort.aborted
    assert signal.getsignal(signal.SIGINT) is kernel_handler


@pytest.mark.asyncio
async def test_the_code_s_synchronous_steps_see_the_raising_handler(ctx_in: Any,
                                                                     kernel_handler: KernelStyleHandler) -> None:
    namespace: dict[str, Any] = {}
    code = ("import asyncio, signal\nfirst = signal.getsignal(signal.SIGINT)\nawait asyncio.sleep(0)\n"
            "second = signal.getsignal(signal.SIGINT)\nraise ValueError('boom')")
    outcome = await call(ctx_in(namespace), "RunPython", code=code)
    assert outcome.is_error and "ValueError: boom" in text_of(outcome)
    assert namespace["first"] is signal.default_int_handler
    assert namespace["second"] is signal.default_int_handler
    assert signal.getsignal(signal.SIGINT) is kernel_handler, "restored after an error too"


@pytest.mark.asyncio
async def test_a_stop_still_reaches_the_code_at_its_await(kernel_handler: KernelStyleHandler) -> None:
    import asyncio

    namespace: dict[str, Any] = {}
    code = ("import asyncio\ntry:\n    await asyncio.sleep(30)\nexcept asyncio.CancelledError:\n"
            "    cleaned = True\n    raise")
    task = asyncio.ensure_future(CodeRunner().run(code, namespace))
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert namespace.get("cleaned") is True
    assert signal.getsignal(signal.SIGINT) is kernel_handler


@pytest.mark.asyncio
async def test_interruptible_steps_return_the_coroutine_s_value() -> None:
    async def twice(x: int) -> int:
        import asyncio

        await asyncio.sleep(0)
        return 2 * x

    assert await InterruptibleSteps(twice(21)) == 42


def test_nested_blocks_restore_the_outer_handler(kernel_handler: KernelStyleHandler) -> None:
    with keyboard_interrupts():
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        with keyboard_interrupts():
            assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler, "the inner block keeps the outer's"
    assert signal.getsignal(signal.SIGINT) is kernel_handler


def test_an_ignored_sigint_stays_ignored() -> None:
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with keyboard_interrupts():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)


def test_off_the_main_thread_nothing_changes(kernel_handler: KernelStyleHandler) -> None:
    seen: list[Any] = []

    def worker() -> None:
        with keyboard_interrupts():
            seen.append(signal.getsignal(signal.SIGINT))

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(5)
    assert seen == [kernel_handler]


@pytest.mark.asyncio
async def test_a_loop_level_sigint_handler_is_not_told_about_the_code_s_interrupt(ctx_in: Any) -> None:
    """Terminal IPython's run loop watches SIGINT through ``loop.add_signal_handler`` (a second
    Ctrl-C cancels the run). The interrupt the code received must not reach it as well."""
    import asyncio

    loop = asyncio.get_running_loop()
    told: list[float] = []
    loop.add_signal_handler(signal.SIGINT, lambda: told.append(time.monotonic()))
    try:
        ctx = ctx_in({})
        timer = sigint_after(0.3)
        outcome = await call(ctx, "RunPython", code="import time\ntime.sleep(10)")
        timer.join()
        for _ in range(5):
            await asyncio.sleep(0.02)  # the loop reads its wake-up socket
        told_during_the_code = list(told)
        os.kill(os.getpid(), signal.SIGINT)  # no code runs now: the loop's handler gets it
        for _ in range(50):
            if told:
                break
            await asyncio.sleep(0.02)
    finally:
        loop.remove_signal_handler(signal.SIGINT)
    assert outcome.is_error and ctx.abort.reason == KERNEL_INTERRUPT
    assert told_during_the_code == []
    assert len(told) == 1, "the loop's handler and wake-up fd are back"
