"""Keeping every tool's output small and every call to user code short.

The notebook tools look at objects the model did not make: a 10-million-row frame, a dict with a
million keys, an object whose ``__repr__`` sleeps or raises. Everything here is bounded twice —
in size (cut text, a per-call character budget, a repr that only ever looks at the first items)
and in time (user code runs in a daemon thread under a timeout, so a hanging ``__repr__`` costs
the call a second and a half, never the kernel).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Iterator
from itertools import islice
from typing import Any, TypeVar

from ..core.results import truncate_middle
from ..errors import TimedOut

__all__ = [
    "DEFAULT_TIMEOUT",
    "HeadTailBuffer",
    "TextBudget",
    "bounded_repr",
    "call_with_timeout",
    "cut_end",
    "run_in_daemon_thread",
    "type_name",
    "user_code_deadline",
]

T = TypeVar("T")

DEFAULT_TIMEOUT = 1.5
"""Seconds a single call into user code (a ``__repr__``, a property) may take."""

MAX_INT_DIGITS = 60




def cut_end(text: str, limit: int, hint: str = "") -> str:
    """The start of ``text`` within ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    note = f"\n[... {len(text) - limit:,} more characters not shown{'; ' + hint if hint else ''}]"
    keep = max(limit - len(note), 0)
    return (text[:keep] + note)[:limit] if keep else note[:limit]


class TextBudget:
    """The characters one tool call may still return, shared by the sections of its output.

    Sections are added in order of importance; once the budget is spent, later sections are
    cut or dropped and the text says so, so the total never exceeds ``limit``.
    """

    NOTE = "\n[output cut to {limit:,} characters; ask for a narrower path or a larger max_chars]"

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.used = 0
        self.cut = False

    @property
    def remaining(self) -> int:
        """Characters a section may still use without being cut."""
        return max(self.limit - len(self.NOTE.format(limit=self.limit)) - self.used, 0)

    def add(self, text: str) -> bool:
        """Append ``text`` (cut if needed). Returns False once nothing more fits.

        Room for the closing note is kept back, so a cut output always says that it was cut.
        """
        if self.cut:
            return False
        note = self.NOTE.format(limit=self.limit)
        room = max(self.limit - len(note) - self.used, 0)
        if len(text) <= room:
            self.parts.append(text)
            self.used += len(text)
            return True
        self.parts.append(text[:room] + note[: self.limit - self.used - room])
        self.used = self.limit
        self.cut = True
        return False

    def text(self) -> str:
        return "".join(self.parts)


class HeadTailBuffer:
    """Keeps the first and the last ``limit // 2`` characters of a stream of unknown length.

    A command that prints a gigabyte must not hold a gigabyte: the middle is counted, not kept.
    """

    def __init__(self, limit: int) -> None:
        self.head_limit = limit // 2
        self.tail_limit = limit - self.head_limit
        self.head: list[str] = []
        self.head_size = 0
        self.tail: deque[str] = deque()
        self.tail_size = 0
        self.total = 0

    def write(self, text: str) -> None:
        if not text:
            return
        self.total += len(text)
        room = self.head_limit - self.head_size
        if room > 0:
            self.head.append(text[:room])
            self.head_size += min(room, len(text))
            text = text[room:]
        if not text:
            return
        self.tail.append(text)
        self.tail_size += len(text)
        while self.tail and self.tail_size - len(self.tail[0]) >= self.tail_limit:
            self.tail_size -= len(self.tail.popleft())

    def getvalue(self) -> str:
        head = "".join(self.head)
        tail = "".join(self.tail)
        if self.total <= self.head_limit + self.tail_limit:
            return head + tail
        tail = tail[-self.tail_limit:] if self.tail_limit else ""
        dropped = self.total - len(head) - len(tail)
        return f"{head}\n[... {dropped:,} characters cut from the middle ...]\n{tail}"


# --- time bounds -------------------------------------------------------------------------------
_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar("toolagent_user_code_deadline", default=None)


@contextlib.contextmanager
def user_code_deadline(seconds: float) -> Iterator[None]:
    """Bound the *total* time of the `call_with_timeout` calls inside the block.

    A dict of twenty objects whose ``__repr__`` hangs would otherwise cost twenty timeouts; past
    the deadline further calls give up at once.
    """
    token = _deadline.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _deadline.reset(token)


def call_with_timeout(fn: Callable[..., T], *args: Any, timeout: float = DEFAULT_TIMEOUT) -> T:
    """Run ``fn(*args)`` in a daemon thread and wait at most ``timeout`` seconds.

    A daemon thread, not an executor: a call that never returns must not keep the interpreter
    (or ``asyncio.run``'s executor shutdown) waiting. The context is copied so prints made by
    user code land in the calling tool's captured output. Raises `TimedOut`, or what ``fn`` raised.
    """
    deadline = _deadline.get()
    if deadline is not None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimedOut("was not run: the time allowed for user code in this call was used up")
        timeout = min(timeout, left)
    box: dict[str, Any] = {}
    done = threading.Event()
    context = contextvars.copy_context()

    def target() -> None:
        try:
            box["value"] = context.run(fn, *args)
        except BaseException as exc:  # handed back to the caller below
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=target, name="toolagent-bounded-call", daemon=True).start()
    if not done.wait(timeout):
        raise TimedOut(f"did not finish within {timeout:g} s")
    if "error" in box:
        raise box["error"]
    return box["value"]


async def run_in_daemon_thread(fn: Callable[..., T], *args: Any, timeout: float | None = None) -> T:
    """Await ``fn(*args)`` running in a daemon thread, leaving the event loop free meanwhile."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def settle(setter: Callable[[Any], None], value: Any) -> None:
        if not future.done():
            setter(value)

    def target() -> None:
        try:
            outcome: tuple[Callable[[Any], None], Any] = (future.set_result, context.run(fn, *args))
        except BaseException as exc:
            outcome = (future.set_exception, exc)
        try:
            loop.call_soon_threadsafe(settle, *outcome)
        except RuntimeError:  # the loop closed while this call was abandoned: nobody is waiting
            pass

    threading.Thread(target=target, name="toolagent-worker", daemon=True).start()
    if timeout is None:
        return await future
    try:
        return await asyncio.wait_for(asyncio.shield(future), timeout)
    except asyncio.TimeoutError:
        raise TimedOut(f"did not finish within {timeout:g} s") from None


# --- a repr that looks at a bounded number of items ----------------------------------------------
class _BoundedRepr:
    """Like `reprlib`, but never sorts (sorting a million keys is slow and calls user ``__lt__``),
    never asks a user object for its length, and says which exception a ``__repr__`` raised."""

    def __init__(self, max_items: int, max_depth: int, max_string: int, max_other: int) -> None:
        self.max_items = max_items
        self.max_depth = max_depth
        self.max_string = max_string
        self.max_other = max_other

    def repr(self, x: Any, depth: int = 0) -> str:
        t = type(x)
        if x is None or t is bool or t is float or t is complex:
            return repr(x)
        if t is int:
            return _int_repr(x)
        if isinstance(x, str):
            return _prefix(t, repr(x[: self.max_string]) + ("..." if len(x) > self.max_string else ""))
        if isinstance(x, (bytes, bytearray)):
            return _prefix(t, repr(bytes(x[: self.max_string])) + ("..." if len(x) > self.max_string else ""))
        if isinstance(x, dict) and not _has_own_repr(x, dict):
            return self._mapping(x, depth)
        for base, left, right in _SEQUENCES:
            if isinstance(x, base) and not _has_own_repr(x, base):
                return self._sequence(x, depth, base, left, right)
        return self._instance(x)

    def _mapping(self, x: dict[Any, Any], depth: int) -> str:
        n = dict.__len__(x)
        if not n:
            body = ""
        elif depth >= self.max_depth:
            body = "..."
        else:
            pieces = [f"{self.repr(k, depth + 1)}: {self.repr(v, depth + 1)}"
                      for k, v in islice(dict.items(x), self.max_items)]
            body = ", ".join(pieces) + (", ..." if n > self.max_items else "")
        text = "{" + body + "}"
        return text if type(x) is dict else f"{type(x).__name__}({text})"

    def _sequence(self, x: Any, depth: int, base: type[Collection[Any]], left: str, right: str) -> str:
        n = base.__len__(x)
        if n and depth >= self.max_depth:
            body = "..."
        else:
            body = ", ".join(self.repr(item, depth + 1) for item in islice(base.__iter__(x), self.max_items))
            if n > self.max_items:
                body += ", ..."
            elif n == 1 and base is tuple:
                body += ","
        if base in (set, frozenset) and not n:
            return f"{type(x).__name__}()"
        text = f"{left}{body}{right}"
        return text if type(x) is base else f"{type(x).__name__}({text})"

    def _instance(self, x: Any) -> str:
        try:
            text = repr(x)
        except Exception as exc:  # the model learns that, and why, the repr failed
            return f"<{_type_name(x)} object; its __repr__ raised {type(exc).__name__}: {cut_end(str(exc), 200)}>"
        if not isinstance(text, str):
            return f"<{_type_name(x)} object>"
        return truncate_middle(text, self.max_other) if len(text) > self.max_other else text


_SEQUENCES: tuple[tuple[type[Collection[Any]], str, str], ...] = (
    (list, "[", "]"), (tuple, "(", ")"), (set, "{", "}"), (frozenset, "frozenset({", "})"), (deque, "deque([", "])"),
)


def _has_own_repr(x: Any, base: type) -> bool:
    """A subclass with its own ``__repr__`` (a namedtuple, a Counter) is asked for it."""
    return type(x).__repr__ is not base.__repr__


def _prefix(t: type, text: str) -> str:
    return text if t in (str, bytes) else f"{t.__name__}({text})"


def _int_repr(x: int) -> str:
    if x.bit_length() > 200:  # repr of a huge int is slow, and refused past 4,300 digits
        return f"<int with about {int(x.bit_length() * 0.30103) + 1:,} digits>"
    text = repr(x)
    return text if len(text) <= MAX_INT_DIGITS else f"{text[:20]}...{text[-20:]}"


def _type_name(x: Any) -> str:
    t = type(x)
    module = t.__module__
    return t.__qualname__ if module in ("builtins", "__main__") else f"{module}.{t.__qualname__}"


def bounded_repr(
    value: Any,
    max_chars: int = 2_000,
    *,
    max_items: int = 20,
    max_depth: int = 3,
    timeout: float | None = DEFAULT_TIMEOUT,
) -> str:
    """A repr of at most ``max_chars`` characters that looks at no more than ``max_items``
    items per container and gives up on user code after ``timeout`` seconds."""
    r = _BoundedRepr(max_items, max_depth, max_string=max(max_chars, 40), max_other=max(max_chars, 40))
    if timeout is None:
        text = r.repr(value)
    else:
        try:
            text = call_with_timeout(r.repr, value, timeout=timeout)
        except TimedOut as exc:
            return f"<{_type_name(value)} object; its __repr__ {exc}>"
        except Exception as exc:
            return f"<{_type_name(value)} object; its repr failed with {type(exc).__name__}: {cut_end(str(exc), 200)}>"
    return truncate_middle(text, max_chars)


def type_name(value: Any) -> str:
    """``module.Qualname`` of the value's type (bare for builtins and ``__main__``)."""
    return _type_name(value)
