"""Keeping the product's own credentials away from what the model can run or read.

The kernel's environment holds the key the product uses to reach the API. A shell command the
model runs must not inherit it (``printenv``, ``env | curl …``), so `child_environment` drops
every variable the product reads whose name marks it as a credential. Values of those variables
are also masked in tool output (`redact`) — a second line of defence for code that runs in the
kernel's own process (RunPython) and so cannot be given a different environment. Masking is
not a guarantee: code can always transform a value before printing it.

Other credentials in the environment (a user's ``GITHUB_TOKEN``) are left alone: the user's
commands may need them, and the permission rules decide which commands run.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ["PRODUCT_PREFIXES", "child_environment", "is_product_secret", "redact"]

PRODUCT_PREFIXES = ("ANTHROPIC_", "TOOLAGENT_")
SECRET_MARKERS = ("API_KEY", "TOKEN", "SECRET")
MIN_SECRET_LENGTH = 8
"""Shorter values are not masked: replacing "test" everywhere would mangle output."""
MASK = "[redacted]"


def is_product_secret(name: str) -> bool:
    """``ANTHROPIC_API_KEY``, ``ANTHROPIC_AUTH_TOKEN`` and any ``TOOLAGENT_*`` credential."""
    upper = name.upper()
    return upper.startswith(PRODUCT_PREFIXES) and any(marker in upper for marker in SECRET_MARKERS)


def child_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """A copy of ``base`` (default: ``os.environ``) without the product's credentials."""
    source = os.environ if base is None else base
    return {k: v for k, v in source.items() if not is_product_secret(k)}


def redact(text: str, env: Mapping[str, str] | None = None) -> str:
    """``text`` with the values of the product's credentials replaced by ``[redacted]``."""
    source = os.environ if env is None else env
    for name, value in source.items():
        if len(value) >= MIN_SECRET_LENGTH and is_product_secret(name) and value in text:
            text = text.replace(value, MASK)
    return text
