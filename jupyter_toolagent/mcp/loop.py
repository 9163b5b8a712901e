"""The event loop MCP connections live on: one daemon thread per process.

A connection must outlive the loop of any one run: ``Agent.run_sync`` gives every run a fresh
loop, terminal IPython runs its loop only while a cell executes, and ``%agent mcp add`` is a
synchronous magic that must wait for the handshake. An SDK session is bound to the loop (and
the task) that entered it, so every connection is entered, used and closed on this one loop,
and callers on any other loop await it through `call` — which never blocks the caller's loop:
approvals, the Stop button and widget clicks go on while a server starts or a call runs.
Cancelling the awaiting task cancels the call on this loop, which makes the SDK send
``notifications/cancelled`` to the server.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from typing import Any, Callable, Coroutine, TypeVar

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def mcp_loop() -> asyncio.AbstractEventLoop:
    """The MCP loop, started on first use."""
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def run() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            threading.Thread(target=run, name="toolagent-mcp", daemon=True).start()
            ready.wait()
            _loop = loop
        return _loop


def submit(coro: Coroutine[Any, Any, T]) -> "concurrent.futures.Future[T]":
    """Run ``coro`` on the MCP loop; the returned future is thread-safe."""
    return asyncio.run_coroutine_threadsafe(coro, mcp_loop())


async def call(coro: Coroutine[Any, Any, T]) -> T:
    """Await ``coro`` on the MCP loop from any other loop. Cancelling the caller cancels it."""
    if _running_loop() is mcp_loop():
        return await coro
    return await asyncio.wrap_future(submit(coro))


def wait(coro: Coroutine[Any, Any, T], timeout: float) -> T:
    """Block the calling thread until ``coro`` is done on the MCP loop (for synchronous code:
    a line magic, an ``atexit`` handler). Waits in short slices so a kernel interrupt
    (KeyboardInterrupt) lands at once; it cancels ``coro``."""
    future = submit(coro)
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                return future.result(timeout=min(0.1, max(0.0, deadline - time.monotonic())))
            except concurrent.futures.TimeoutError:
                if time.monotonic() >= deadline:
                    raise TimeoutError(f"gave up after {timeout:g} s") from None
    except BaseException:
        future.cancel()
        raise


def in_caller_loop(fn: Callable[..., None]) -> Callable[..., None]:
    """Wrap a callback made on the MCP loop so it runs on the loop of the caller that made
    the wrapper (progress callbacks emit events into the run's own queue)."""
    loop = asyncio.get_running_loop()

    def forward(*args: Any) -> None:
        if loop.is_closed():
            return
        loop.call_soon_threadsafe(fn, *args)

    return forward


def running_on_mcp_loop() -> bool:
    return _loop is not None and _running_loop() is _loop


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None

