"""Running a coroutine to its end from synchronous code, whether or not a loop is running.

`Agent.run_sync` and the synchronous line magics (``%agent compact``) both need it: in plain
Python there is no loop and `asyncio.run` is enough, but inside a notebook cell the kernel's
loop is already running on this thread and cannot be re-entered, so the coroutine gets a fresh
loop in a worker thread and the caller waits for it. One place, so the two cannot drift.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Callable, Coroutine, TypeVar

__all__ = ["run_to_completion"]

T = TypeVar("T")


def run_to_completion(make: Callable[[], Coroutine[Any, Any, T]], *, thread_name: str = "toolagent-run-sync") -> T:
    """``asyncio.run(make())`` here, or in a worker thread while this thread's loop runs; an
    exception is raised in the caller's thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = asyncio.run(make())
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target, name=thread_name, daemon=True)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["result"]  # type: ignore[no-any-return]  # what the coroutine returned, a T
