"""`summarize(value, budget)`: what a careful person would look at first, within a size budget.

Tables and arrays get shape, types, first rows and sampled statistics (`frames`); mappings and
sequences their length and first items; text its length and a window; iterators are described,
never advanced (reading an item would consume it); anything else a bounded repr under a timeout.
Nothing here is proportional to the size of the value.
"""

from __future__ import annotations

import collections.abc
import inspect
import io
import types
from itertools import islice
from typing import Any

from . import frames, optional_libs
from .bounded import DEFAULT_TIMEOUT, TextBudget, bounded_repr, cut_end, type_name, user_code_deadline

__all__ = ["DEFAULT_BUDGET", "summarize"]

DEFAULT_BUDGET = 4_000
FIRST_ITEMS = 10
TEXT_LINE_COUNT_MAX = 10_000_000
TAIL_CHARS = 300
USER_CODE_SECONDS = 2 * DEFAULT_TIMEOUT
"""All the user code one summary may run (reprs of items), however many items time out."""


def summarize(value: Any, budget: int = DEFAULT_BUDGET) -> str:
    """A summary of ``value`` in at most ``budget`` characters."""
    out = TextBudget(budget)
    try:
        with user_code_deadline(USER_CODE_SECONDS):
            _summarize_into(value, out)
    except Exception as exc:  # a library raising on an odd object: still say what we can
        out.add(f"\n(summary stopped: {type(exc).__name__}: {cut_end(str(exc), 200)})")
    return out.text().rstrip("\n")


def _summarize_into(value: Any, out: TextBudget) -> None:
    if optional_libs.is_pandas_frame(value):
        return frames.summarize_pandas_frame(value, out)
    if optional_libs.is_pandas_series(value):
        return frames.summarize_pandas_series(value, out)
    if optional_libs.is_numpy_array(value):
        return frames.summarize_numpy_array(value, out)
    if optional_libs.is_polars_frame(value) or optional_libs.is_polars_series(value) or optional_libs.is_polars_lazy(value):
        return frames.summarize_polars(value, out)
    if optional_libs.is_matplotlib_figure(value):
        return _figure(value, out)
    if isinstance(value, str):
        return _text(value, out)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _binary(value, out)
    if isinstance(value, dict):
        return _mapping(value, out)
    if isinstance(value, (list, tuple, set, frozenset, collections.deque)):
        return _sequence(value, out)
    if _is_unconsumable(value):
        return _iterator(value, out)
    if isinstance(value, types.ModuleType):
        out.add(f"module {value.__name__}" + (f" from {value.__file__}" if getattr(value, "__file__", None) else ""))
        return _doc(value, out)
    if inspect.isclass(value) or inspect.isroutine(value):
        return _callable(value, out)
    return _other(value, out)


# --- text and bytes ----------------------------------------------------------------------------
def _text(s: str, out: TextBudget) -> None:
    lines = f", {s.count(chr(10)) + 1:,} lines" if len(s) <= TEXT_LINE_COUNT_MAX else ""
    out.add(f"{type_name(s)}: {len(s):,} characters{lines}\n")
    room = max(out.remaining - 200, 100)
    if len(s) <= room:
        out.add(repr(s))
        return
    tail = min(TAIL_CHARS, room // 4)
    head = room - tail
    out.add(f"First {head:,} characters:\n{s[:head]!r}\n")
    out.add(f"Last {tail:,} characters:\n{s[-tail:]!r}\n")
    out.add("(Inspect a slice such as name[10000:14000] to read another window.)")


def _binary(b: Any, out: TextBudget) -> None:
    from ..core.results import sniff_image

    data = bytes(b[:64])
    media = sniff_image(data)
    kind = f" ({media} image data)" if media else ""
    out.add(f"{type(b).__name__}: {len(b):,} bytes{kind}\n")
    out.add(f"First bytes: {bytes(b[:200])!r}")


# --- containers -------------------------------------------------------------------------------
def _mapping(d: dict[Any, Any], out: TextBudget) -> None:
    n = dict.__len__(d)
    out.add(f"{type_name(d)} with {n:,} keys\n")
    if not n:
        return
    shown = min(n, FIRST_ITEMS)
    out.add(f"First {shown} items (insertion order):\n")
    for key, item in islice(dict.items(d), FIRST_ITEMS):
        if not out.add(f"  {bounded_repr(key, 100)}: {_item(item)}\n"):
            return
    if n > shown:
        out.add(f"  ... {n - shown:,} more (inspect name['key'] for one value)\n")


def _sequence(seq: Any, out: TextBudget) -> None:
    base = next(b for b in (list, tuple, set, frozenset, collections.deque) if isinstance(seq, b))
    n = base.__len__(seq)
    out.add(f"{type_name(seq)} with {n:,} items\n")
    if not n:
        return
    shown = min(n, FIRST_ITEMS)
    out.add(f"First {shown} items:\n")
    for i, item in enumerate(islice(base.__iter__(seq), FIRST_ITEMS)):
        label = f"[{i}]" if base in (list, tuple, collections.deque) else " -"
        if not out.add(f"  {label} {_item(item)}\n"):
            return
    if n > shown:
        hint = " (inspect name[10:20] for others)" if base in (list, tuple) else ""
        out.add(f"  ... {n - shown:,} more{hint}\n")


def _item(value: Any) -> str:
    """One line about an item: a short repr, or a brief for big values (never their repr)."""
    from .brief import brief

    if optional_libs.is_table_like(value):
        return brief(value)
    text = bounded_repr(value, 200, max_items=5)
    if isinstance(value, (dict, list, tuple, set, frozenset)) and text.endswith(("...]", "...}", "...)", "...})")):
        return f"{brief(value)}: {text}"  # the repr alone would hide how many items there are
    return text


# --- iterators, callables, figures, anything else ---------------------------------------------
def _is_unconsumable(value: Any) -> bool:
    """Generators, iterators, coroutines: reading an item would change the object."""
    return (
        isinstance(value, (collections.abc.Iterator, collections.abc.AsyncIterator, collections.abc.Coroutine))
        or inspect.isgenerator(value) or inspect.isasyncgen(value)
    )


def _iterator(value: Any, out: TextBudget) -> None:
    out.add(f"{type_name(value)} (an iterator: not read, because reading items would use them up)\n")
    if inspect.isgenerator(value):
        out.add(f"generator function: {value.gi_code.co_name}, state: {inspect.getgeneratorstate(value)}\n")
    elif inspect.iscoroutine(value):
        out.add(f"coroutine: {value.cr_code.co_name}, state: {inspect.getcoroutinestate(value)}\n")
    if isinstance(value, io.IOBase):  # an open file: its repr names it without reading it
        out.add(f"file: {bounded_repr(value, 300)}\n")


def _callable(value: Any, out: TextBudget) -> None:
    kind = "class" if inspect.isclass(value) else "function"
    try:
        signature = str(inspect.signature(value))
    except (TypeError, ValueError):
        signature = "(...)"
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", "?")
    out.add(f"{kind} {name}{signature}\n")
    module = getattr(value, "__module__", None)
    if isinstance(module, str) and module not in ("__main__", "builtins"):
        out.add(f"defined in module {module}\n")
    _doc(value, out)


def _doc(value: Any, out: TextBudget) -> None:
    doc = inspect.getdoc(value)
    if doc:
        out.add(f"Docstring:\n{cut_end(doc, 1_500)}\n")


def _figure(fig: Any, out: TextBudget) -> None:
    width, height = fig.get_size_inches()
    out.add(f"matplotlib Figure {width:g}×{height:g} in, {len(fig.axes)} axes\n")
    for i, ax in enumerate(fig.axes[:FIRST_ITEMS]):
        title = ax.get_title() or "(no title)"
        out.add(f"  axes {i}: {title!s}; x: {ax.get_xlabel()!s}; y: {ax.get_ylabel()!s}; "
                f"{len(ax.lines)} lines, {len(ax.collections)} collections, {len(ax.patches)} patches\n")


def _other(value: Any, out: TextBudget) -> None:
    out.add(f"{type_name(value)}\n")
    if optional_libs.is_numpy_scalar(value) or isinstance(value, (int, float, complex, bool, type(None), range)):
        out.add(bounded_repr(value, out.remaining, timeout=None))
        return
    out.add(f"repr: {bounded_repr(value, min(out.remaining, 2_000), timeout=DEFAULT_TIMEOUT)}\n")
    attributes = _instance_attributes(value)
    if attributes:
        out.add("Attributes:\n")
        for name, item in attributes:
            if not out.add(f"  .{name}: {_item(item)}\n"):
                return


def _instance_attributes(value: Any) -> list[tuple[str, Any]]:
    """Public entries of the instance ``__dict__`` (read directly: no properties run)."""
    try:
        namespace = object.__getattribute__(value, "__dict__")
    except (AttributeError, TypeError):
        return []
    if not isinstance(namespace, dict):
        return []
    return [(k, v) for k, v in islice(dict.items(namespace), 50) if isinstance(k, str) and not k.startswith("_")][:20]
