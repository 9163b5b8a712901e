"""Per-call capture of stdout/stderr, safe for concurrent tools.

Tools run as concurrent asyncio tasks and worker threads, so swapping ``sys.stdout`` per call
(``contextlib.redirect_stdout``) would mix their output. Instead ``sys.stdout``/``sys.stderr``
are replaced once by a proxy that writes to the buffer bound in the *current context*
(a `contextvars.ContextVar`, which both tasks and `asyncio.to_thread` inherit) and to the
original stream otherwise. Prints from a tool land in its card and its result, not in the cell.
"""

from __future__ import annotations

import contextlib
import contextvars
import io
import sys
import threading
from typing import Any, Iterator, TextIO

_target: contextvars.ContextVar["_Buffer | None"] = contextvars.ContextVar("toolagent_capture", default=None)
_install_lock = threading.Lock()


class _Buffer:
    def __init__(self, limit: int) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.limit = limit
        self.dropped = 0
        self.lock = threading.Lock()

    def write(self, text: str) -> None:
        with self.lock:
            room = self.limit - self.size
            if room <= 0:
                self.dropped += len(text)
                return
            if len(text) > room:
                self.dropped += len(text) - room
                text = text[:room]
            self.parts.append(text)
            self.size += len(text)

    def getvalue(self) -> str:
        with self.lock:
            text = "".join(self.parts)
            if self.dropped:
                text += f"\n[... {self.dropped} more characters of output not kept ...]"
            return text


class _ProxyStream(io.TextIOBase):
    """Stands in for sys.stdout / sys.stderr; routes by context."""

    def __init__(self, original: TextIO, name: str) -> None:
        self._original = original
        self._name = name

    def write(self, text: str) -> int:
        buf = _target.get()
        if buf is None:
            return self._original.write(text)
        buf.write(text)
        return len(text)

    def flush(self) -> None:
        if _target.get() is None:
            self._original.flush()

    def __getattr__(self, name: str) -> Any:  # fileno, encoding, isatty, ipykernel's extras
        return getattr(self._original, name)


def _install() -> None:
    if isinstance(sys.stdout, _ProxyStream) and isinstance(sys.stderr, _ProxyStream):
        return  # already in place (every call checks: a kernel may replace the streams per cell)
    with _install_lock:
        if not isinstance(sys.stdout, _ProxyStream):
            sys.stdout = _ProxyStream(sys.stdout, "stdout")
        if not isinstance(sys.stderr, _ProxyStream):
            sys.stderr = _ProxyStream(sys.stderr, "stderr")


@contextlib.contextmanager
def capture_output(limit: int = 1_000_000) -> Iterator[_Buffer]:
    """Capture what the current context (task, and threads it starts) prints.

    The proxy is (re)installed on entry because a kernel may replace ``sys.stdout`` per cell.
    """
    _install()
    buf = _Buffer(limit)
    token = _target.set(buf)
    try:
        yield buf
    finally:
        _target.reset(token)
