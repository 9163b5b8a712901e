"""What a saved session file must never hold: the product's credentials (SPEC §2.3, §5.6).

Every string of every record goes through `scrub_for_saving` before it is written. It is the
one place a saved file is scrubbed, so pointing it at the core's secret scrubber, once there
is one, changes every saved record at once.
"""

from __future__ import annotations

from typing import Any

from ..models.api_errors import scrub as _scrub_key_shapes
from ..tools.secret_env import redact as _redact_environment

__all__ = ["scrub_for_saving", "scrub_value"]


def scrub_for_saving(text: str) -> str:
    """``text`` without the values of the product's credential variables, bearer tokens or
    anything shaped like an Anthropic key."""
    return _scrub_key_shapes(_redact_environment(text))


def scrub_value(value: Any) -> Any:
    """A copy of JSON-like ``value`` with every string (keys too) scrubbed."""
    if isinstance(value, str):
        return scrub_for_saving(value)
    if isinstance(value, dict):
        return {scrub_for_saving(str(k)): scrub_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub_value(v) for v in value]
    return value
