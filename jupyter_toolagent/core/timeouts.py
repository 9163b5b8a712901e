"""A time limit that costs nothing for a coroutine that finishes without waiting.

Most hooks only look at the call and return: they never suspend. Arming ``asyncio.timeout``
for each of them (a timer handle, a heap push, a context manager and its cancellation
bookkeeping) cost several microseconds per call — the largest single part of the runtime's
per-call overhead (B1). `await_within` runs the coroutine's first step directly; only a
coroutine that actually suspends is resumed under ``asyncio.timeout``. The time limit is
therefore measured from the first suspension: a coroutine that never suspends cannot be
interrupted by a timer anyway, because it holds the event loop until it returns.
"""

from __future__ import annotations

import asyncio
import types
from collections.abc import Awaitable, Coroutine, Generator
from typing import Any, TypeVar, cast

__all__ = ["await_within"]

T = TypeVar("T")


async def await_within(coro: Coroutine[Any, Any, T], timeout: float) -> T:
    """``await coro`` with a time limit of ``timeout`` seconds (raises ``TimeoutError``),
    without arming a timer when ``coro`` finishes in its first step."""
    try:
        first = coro.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]  # StopIteration.value is untyped; it is coro's T
    except BaseException:
        coro.close()
        raise
    async with asyncio.timeout(timeout):
        # a generator-based coroutine is awaitable, which typeshed does not say of `types.coroutine`
        return await cast("Awaitable[T]", _resume(coro, first))


@types.coroutine
def _resume(coro: Coroutine[Any, Any, T], yielded: Any) -> Generator[Any, Any, T]:
    """Continue ``coro`` after it yielded ``yielded`` (a future, or None for a bare yield), in the
    task that is awaiting us: what the task sends or throws in is passed on, as ``await``
    would do."""
    while True:
        try:
            sent = yield yielded
        except BaseException as exc:  # cancellation (the timeout, an abort) goes to the coroutine
            try:
                yielded = coro.throw(exc)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]  # as above
            continue
        try:
            yielded = coro.send(sent)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]  # as above
