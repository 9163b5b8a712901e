"""The run's abort signal: set by the Stop button, a kernel interrupt, or a hook's stop."""

from __future__ import annotations

import asyncio
import threading

KERNEL_INTERRUPT = "interrupted (kernel interrupt)"
"""The abort reason of a kernel interrupt, wherever it was caught (the cell's wait, or user
code run by RunPython): the front end ends such a cell as interrupted."""


class AbortSignal:
    """A one-way flag that can be set from any thread and awaited from the run's loop.

    Widget callbacks may run on another thread (ipykernel 6 pump), so `abort()` is thread-safe;
    waiters are woken through `call_soon_threadsafe`.
    """

    def __init__(self) -> None:
        self._flag = threading.Event()
        self.reason: str | None = None
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._lock = threading.Lock()

    @property
    def aborted(self) -> bool:
        return self._flag.is_set()

    def abort(self, reason: str = "interrupted by user") -> None:
        with self._lock:
            if self._flag.is_set():
                return
            self.reason = reason
            self._flag.set()
            waiters, self._waiters = self._waiters, []
        for loop, fut in waiters:
            def _wake(f: asyncio.Future[None] = fut) -> None:
                if not f.done():
                    f.set_result(None)
            try:
                loop.call_soon_threadsafe(_wake)
            except RuntimeError:  # loop closed
                pass

    async def wait(self) -> None:
        """Return once aborted."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        with self._lock:
            if self._flag.is_set():
                return
            self._waiters.append((loop, fut))
        try:
            await fut
        finally:
            with self._lock:
                self._waiters = [(l, f) for (l, f) in self._waiters if f is not fut]
