"""Fixtures of the fake server tests; the same guard as tests/models: no real API."""

from __future__ import annotations

from typing import Any, Iterator

import pytest
from server_support import KEY

from jupyter_toolagent.testing import FakeAnthropicServer


@pytest.fixture(autouse=True)
def _guard(no_real_api: None) -> None:
    """Every test here runs under the suite's `no_real_api` guard (tests/conftest.py)."""


@pytest.fixture
def client(server: FakeAnthropicServer) -> Iterator[Any]:
    """The SDK's sync client on the fake server (no retries unless a test asks)."""
    import anthropic

    with anthropic.Anthropic(api_key=KEY, base_url=server.base_url, max_retries=0) as sdk:
        yield sdk
