"""Fixtures of the model tests. No test here can reach the real API: the environment's
credentials are removed (``HOME`` is a fresh directory, so no profile is found) and
``ANTHROPIC_BASE_URL`` points at a closed loopback port, so a
model built without an explicit ``base_url`` fails fast instead of calling out."""

from __future__ import annotations

from typing import Any, Iterator

import pytest
from model_support import ENV_CREDENTIALS

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
