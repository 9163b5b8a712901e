"""Fixtures of the fake server tests; the same guard as tests/models: no real API."""

from __future__ import annotations

from typing import Any, Iterator

import pytest
from server_support import ENV_CREDENTIALS, KEY

from jupyter_toolagent.testing import FakeAnthropicServer


@pytest.fixture(autouse=True)
def no_real_api(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    for name in ENV_CREDENTIALS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("HOME", str(tmp_path))  # no credentials profile under ~/.config/anthropic


@pytest.fixture
def server() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as srv:
        yield srv


@pytest.fixture
def client(server: FakeAnthropicServer) -> Iterator[Any]:
    """The SDK's sync client on the fake server (no retries unless a test asks)."""
    import anthropic

    with anthropic.Anthropic(api_key=KEY, base_url=server.base_url, max_retries=0) as sdk:
        yield sdk
