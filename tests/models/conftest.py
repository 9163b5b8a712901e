"""Fixtures of the model tests. No test here can reach the real API: the environment's
credentials are removed (``HOME`` is a fresh directory, so no profile is found) and
``ANTHROPIC_BASE_URL`` points at a closed loopback port, so a
model built without an explicit ``base_url`` fails fast instead of calling out."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _guard(no_real_api: None) -> None:
    """Every test here runs under the suite's `no_real_api` guard (tests/conftest.py)."""
