from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from sandbox_support import Listener, listener, make_project

from jupyter_toolagent.sandbox import sandbox_status


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path)


@pytest.fixture
def loopback() -> Iterator[Listener]:
    yield from listener()


@pytest.fixture(autouse=True)
def _real_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about the real bubblewrap: it must work here (CI installs it)."""
    monkeypatch.delenv("TOOLAGENT_SANDBOX", raising=False)
    status = sandbox_status()
    assert status.available, status.reason
