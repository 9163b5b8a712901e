"""Fixtures of the replay tests: no test here can reach the real API (the suite's guard)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _guard(no_real_api: None) -> None:
    """Every test here runs under the suite's `no_real_api` guard (tests/conftest.py)."""
