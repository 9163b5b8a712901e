"""Fixtures of the sub-agent and tool-search tests (the fake Anthropic server comes from tests/conftest.py)."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture(autouse=True)
def _guard(no_real_api: None) -> None:
    """Every test here runs under the suite's `no_real_api` guard."""
