"""Type checks for pandas, numpy, polars and matplotlib that never import them.

A value can only be a DataFrame if pandas is already imported, so the checks look the library up
in ``sys.modules`` and answer False when it is absent. Importing pandas or matplotlib just to say
"no" would cost seconds, pull megabytes into a kernel that does not use them, and (for
matplotlib) could choose a backend behind the user's back.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

__all__ = [
    "is_matplotlib_figure",
    "is_numpy_array",
    "is_numpy_scalar",
    "is_pandas_frame",
    "is_pandas_series",
    "is_polars_frame",
    "is_polars_lazy",
    "is_polars_series",
    "is_table_like",
    "loaded",
]


def loaded(name: str) -> ModuleType | None:
    """The module if it is already imported (never imports it)."""
    return sys.modules.get(name)


def _isinstance(value: Any, module: str, attribute: str) -> bool:
    mod = sys.modules.get(module)
    cls = getattr(mod, attribute, None) if mod is not None else None
    return isinstance(cls, type) and isinstance(value, cls)


def is_pandas_frame(value: Any) -> bool:
    return _isinstance(value, "pandas", "DataFrame")


def is_pandas_series(value: Any) -> bool:
    return _isinstance(value, "pandas", "Series")


def is_numpy_array(value: Any) -> bool:
    return _isinstance(value, "numpy", "ndarray")


def is_numpy_scalar(value: Any) -> bool:
    return _isinstance(value, "numpy", "generic")


def is_polars_frame(value: Any) -> bool:
    return _isinstance(value, "polars", "DataFrame")


def is_polars_series(value: Any) -> bool:
    return _isinstance(value, "polars", "Series")


def is_polars_lazy(value: Any) -> bool:
    return _isinstance(value, "polars", "LazyFrame")


def is_matplotlib_figure(value: Any) -> bool:
    return _isinstance(value, "matplotlib.figure", "Figure")


def is_table_like(value: Any) -> bool:
    """A frame, series or array: summarised (sampled statistics), never dumped whole."""
    return (
        is_pandas_frame(value) or is_pandas_series(value) or is_numpy_array(value)
        or is_polars_frame(value) or is_polars_series(value) or is_polars_lazy(value)
    )
