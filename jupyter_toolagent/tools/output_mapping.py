"""What a ``@tool`` function's return value becomes in the model's tool_result.

A user function returns whatever is natural in a notebook — a DataFrame, a figure, a dict, PNG
bytes — so mapping it well is what makes a three-line tool useful:

* ``str`` as is; ``None`` → empty (the runtime says "completed with no output");
* DataFrame / Series / ndarray / polars → `summarize` (never the whole table);
* matplotlib Figure → a PNG image; PNG/JPEG/GIF/WebP bytes → an image;
* a list of API content blocks → as is;
* dict / list / tuple / numbers / bool → JSON text (a bounded repr if not JSON-able);
* anything else → a bounded repr (under a timeout: a ``__repr__`` may hang).
"""

from __future__ import annotations

import json
import math
from typing import Any

from ..core.results import truncate_middle
from . import optional_libs
from .bounded import bounded_repr
from .images import bytes_to_blocks, figure_png
from .summarize import summarize

__all__ = ["map_return_value"]

MAX_JSON_CHARS = 200_000
"""Past this the runtime's size budget would cut the JSON anyway; a summary reads better."""
SUMMARY_BUDGET = 4_000
BLOCK_TYPES = frozenset({"text", "image", "document", "search_result"})
_SMALL_INT = 10**18


def map_return_value(value: Any) -> str | list[dict[str, Any]]:
    """Map a ``@tool`` function's return value to tool_result content (see the module doc)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    kind = type(value)
    if kind is bool:  # the common scalars, written as json.dumps writes them, without its machinery
        return "true" if value else "false"
    if kind is int and -_SMALL_INT < value < _SMALL_INT:  # a huge int may exceed str()'s digit limit
        return int.__repr__(value)
    if kind is float and math.isfinite(value):
        return float.__repr__(value)
    if kind is float:
        return _json_text(value)
    if optional_libs.is_table_like(value):
        return summarize(value, SUMMARY_BUDGET)
    if optional_libs.is_matplotlib_figure(value):
        return bytes_to_blocks(figure_png(value))
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes_to_blocks(bytes(value))
    if _is_block_list(value):
        return list(value)
    if isinstance(value, (dict, list, tuple, int, float, bool)) or optional_libs.is_numpy_scalar(value):
        return _json_text(value)
    return bounded_repr(value, 10_000)


def _is_block_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(
        isinstance(b, dict) and b.get("type") in BLOCK_TYPES for b in value
    )


def _json_text(value: Any) -> str:
    if isinstance(value, (dict, list, tuple)) and _too_many_items(value):
        return summarize(value, SUMMARY_BUDGET)
    try:
        text = json.dumps(_plain(value), ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return bounded_repr(value, 10_000)
    return text if len(text) <= MAX_JSON_CHARS else truncate_middle(text, MAX_JSON_CHARS)


def _too_many_items(value: Any, limit: int = 100_000) -> bool:
    return (dict.__len__(value) if isinstance(value, dict) else len(value)) > limit


def _plain(value: Any) -> Any:
    """numpy scalars to Python numbers, NaN/inf to strings (JSON has neither)."""
    if optional_libs.is_numpy_scalar(value):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k if isinstance(k, (str, int, float, bool)) or k is None else repr(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    raise TypeError(f"{type(value).__name__} is not JSON-able")
