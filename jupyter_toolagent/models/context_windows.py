"""The context window of a model id (SPEC §14): a maintained table first, a small fallback second.

`genai-prices` (already the price table, `pricing`) records each model's ``context_window``;
it is updated with new models, so it is asked first. Ids it does not know — a dated snapshot,
an alias, a model newer than the installed table — fall back to `FALLBACK_PREFIXES`, the
longest matching prefix winning. Unknown ids get None and the core uses its default.
"""

from __future__ import annotations

import functools

__all__ = ["FALLBACK_PREFIXES", "context_window_for"]

FALLBACK_PREFIXES: dict[str, int] = {
    "claude-opus-4-6": 1_000_000,
    "claude-opus-4-7": 1_000_000,
    "claude-opus-4-8": 1_000_000,
    "claude-opus-5": 1_000_000,
    "claude-sonnet-4-6": 1_000_000,
    "claude-sonnet-5": 1_000_000,
    "claude-haiku-5": 1_000_000,
    "claude-fable-5": 1_000_000,
    "claude-mythos-5": 1_000_000,
    "claude-opus-4": 200_000,
    "claude-sonnet-4": 200_000,
    "claude-haiku-4": 200_000,
    "claude-3": 200_000,
    "claude-2": 200_000,
}
"""Known id prefixes → window in tokens, for ids the maintained table does not list."""


@functools.lru_cache(maxsize=64)
def _from_table(model: str) -> int | None:
    from .pricing import _model_info

    info = _model_info(model)
    window = getattr(info, "context_window", None) if info is not None else None
    return int(window) if window else None


def context_window_for(model: str) -> int | None:
    """The window of ``model`` in tokens, or None when neither table knows it."""
    window = _from_table(model)
    if window:
        return window
    best = max((p for p in FALLBACK_PREFIXES if model.startswith(p)), key=len, default=None)
    return FALLBACK_PREFIXES[best] if best is not None else None
