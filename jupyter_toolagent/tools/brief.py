"""One-line descriptions of values that run no user code.

`ListVariables` describes every variable in the namespace, so it must be cheap and harmless for
all of them: it reads only what the type itself guarantees (``dict.__len__`` rather than
``len()``, which a subclass may override; shapes of library arrays), and never calls a
``__repr__``, ``__len__`` or property of a user class. Text values show their length, not their
content: a notebook's variables can hold tokens and passwords.
"""

from __future__ import annotations

import collections
import inspect
import types
from typing import Any, Sized

from . import optional_libs
from .bounded import type_name

__all__ = ["brief"]

_SIZED: tuple[tuple[type[Sized], str], ...] = (
    (dict, "keys"), (list, "items"), (tuple, "items"), (set, "items"), (frozenset, "items"),
    (collections.deque, "items"), (str, "characters"), (bytes, "bytes"), (bytearray, "bytes"),
)


def brief(value: Any) -> str:
    """``DataFrame 1,000×5``, ``int = 3``, ``function f(a, b)``, ``Point`` … in one line."""
    try:
        return _brief(value)
    except Exception as exc:  # a library attribute raising: still one line
        return f"{type_name(value)} (not described: {type(exc).__name__})"


def _brief(value: Any) -> str:
    t = type(value)
    if value is None or t in (bool, float, complex):
        return f"{t.__name__} = {value!r}"
    if t is int:
        return f"int = {value!r}" if value.bit_length() <= 64 else f"int ({value.bit_length():,} bits)"
    if optional_libs.is_pandas_frame(value):
        rows, cols = value.shape
        return f"pandas DataFrame {rows:,}×{cols:,}"
    if optional_libs.is_pandas_series(value):
        return f"pandas Series {len(value):,} values, dtype {value.dtype}"
    if optional_libs.is_numpy_array(value):
        return f"numpy {t.__name__} {value.dtype} shape {value.shape}"
    if optional_libs.is_numpy_scalar(value):
        return f"numpy {t.__name__} = {value!r}"
    if optional_libs.is_polars_frame(value):
        return f"polars DataFrame {value.height:,}×{value.width:,}"
    if optional_libs.is_polars_series(value):
        return f"polars Series {len(value):,} values, dtype {value.dtype}"
    if optional_libs.is_polars_lazy(value):
        return "polars LazyFrame (not collected)"
    if optional_libs.is_matplotlib_figure(value):
        return f"matplotlib Figure, {len(value.axes)} axes"
    for base, unit in _SIZED:
        if isinstance(value, base):
            return f"{type_name(value)}, {base.__len__(value):,} {unit}"
    if isinstance(value, range):
        return f"range({value.start}, {value.stop}, {value.step})"
    if isinstance(value, types.ModuleType):
        return f"module {value.__name__}"
    if inspect.isclass(value):
        return f"class {value.__qualname__}"
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType)):
        return f"{'async function' if inspect.iscoroutinefunction(value) else 'function'} {value.__name__}{_signature(value)}"
    if inspect.isgenerator(value):
        return f"generator {value.gi_code.co_name} (not consumed)"
    return type_name(value)


def _signature(fn: Any) -> str:
    try:
        text = str(inspect.signature(fn))
    except (TypeError, ValueError):
        return "(...)"
    return text if len(text) <= 120 else text[:117] + "..."
