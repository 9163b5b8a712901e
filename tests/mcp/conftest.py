"""Fixtures of the MCP tests: real MCP servers (the product's demo server over stdio and HTTP,
third-party ones), the fake Anthropic server, and the check that no server child outlives the
test session (by pid, process group included)."""

from __future__ import annotations

import os
import sys
from typing import Iterator

import pytest

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture(autouse=True)
def _guard(no_real_api: None) -> None:
    """Every test here runs under the suite's `no_real_api` guard (tests/conftest.py)."""


@pytest.fixture(scope="session", autouse=True)
def no_server_outlives_the_session() -> Iterator[None]:
    """Every MCP child started by these tests is gone at the end — checked by pid and process
    group, *before* the product's own atexit clean-up could hide a leak."""
    from jupyter_toolagent.mcp.stdio_transport import SPAWNED

    yield
    from mcp_support import alive

    left = [pid for pid in SPAWNED if alive(pid)]
    assert not left, f"MCP server processes left running after the tests: {left}"
