"""Keeping the product's own credentials away from what the model can run or read.

The kernel's environment holds the key the product uses to reach the API. A shell command the
model runs must not inherit it (``printenv``, ``env | curl …``), so `child_environment` drops
every variable the product reads whose name marks it as a credential. What reaches the output
anyway (code running in the kernel's own process, RunPython, cannot be given a different
environment) is the job of the core's one scrubber (`core.secrets`), which replaces runs of
every protected value in every tool's result.

Every other variable whose name marks it as a secret (SPEC §5.6: ``*KEY*``, ``*TOKEN*``,
``*SECRET*``, ``*PASSWORD*``, ``*CREDENTIAL*`` — a user's ``GITHUB_TOKEN`` too) is dropped as
well (SPEC §5.5: the sandbox's environment has no keys): an approved command with network could
otherwise send it anywhere, and the scrubber only sees what comes back. A command that needs a
token reads it from a file the person chose, which the permission rules then see.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..core.secrets import is_secret_name

__all__ = ["PRODUCT_PREFIXES", "child_environment", "is_product_secret"]

PRODUCT_PREFIXES = ("ANTHROPIC_", "TOOLAGENT_")
SECRET_MARKERS = ("API_KEY", "TOKEN", "SECRET")


def is_product_secret(name: str) -> bool:
    """``ANTHROPIC_API_KEY``, ``ANTHROPIC_AUTH_TOKEN`` and any ``TOOLAGENT_*`` credential."""
    upper = name.upper()
    return upper.startswith(PRODUCT_PREFIXES) and any(marker in upper for marker in SECRET_MARKERS)


def child_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """A copy of ``base`` (default: ``os.environ``) without the product's credentials and
    without any other secret-looking variable."""
    source = os.environ if base is None else base
    return {k: v for k, v in source.items() if not (is_product_secret(k) or is_secret_name(k))}
