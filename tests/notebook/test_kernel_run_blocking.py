"""`run_blocking` (terminal IPython): runs the coroutine; Ctrl-C aborts the run, which then
finishes; inside a running loop it moves to a worker thread."""

from __future__ import annotations

import asyncio
import os
import signal
import threading

import pytest

from jupyter_toolagent.core.abort import AbortSignal
from jupyter_toolagent.notebook.kernel_run import run_blocking


def test_returns_the_result() -> None:
    async def main() -> int:
        await asyncio.sleep(0.01)
        return 7

    assert run_blocking(main, AbortSignal()) == 7


def test_ctrl_c_aborts_and_the_run_finishes_cleanly() -> None:
    abort = AbortSignal()

    async def main() -> str:
        await abort.wait()
        await asyncio.sleep(0.05)  # clean-up after the abort still runs
        return f"finished after: {abort.reason}"

    timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        assert run_blocking(main, abort) == "finished after: interrupted (Ctrl-C)"
    finally:
        timer.cancel()


def test_errors_propagate() -> None:
    async def main() -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        run_blocking(main, AbortSignal())


@pytest.mark.asyncio
async def test_inside_a_running_loop_it_uses_a_worker_thread() -> None:
    caller = threading.get_ident()

    async def main() -> int:
        return threading.get_ident()

    assert run_blocking(main, AbortSignal()) != caller
