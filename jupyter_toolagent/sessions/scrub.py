"""What a saved session file must never hold: the product's credentials (SPEC §2.3, §5.6).

Every string of every record goes through the core's one secret scrubber before it is written
(runs of 8+ characters of a protected value, forwards or reversed, across whitespace). What a
session holds was already scrubbed when it was recorded; this is the last line before disk, so
a value protected only since then (a key set in a later cell) is not written either.
"""

from __future__ import annotations

from typing import Any

from ..core.secrets import environment_scrubber

__all__ = ["scrub_for_saving", "scrub_value"]


def scrub_for_saving(text: str) -> str:
    """``text`` with every run of a protected value replaced."""
    return environment_scrubber().scrub(text)


def scrub_value(value: Any) -> Any:
    """A copy of JSON-like ``value`` with every string (keys too) scrubbed."""
    return environment_scrubber().scrub_data(value)
