"""Shared fixtures; prints how many adversarial corpus entries were tried."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from corpus_data import CORPUS_TRIED

from jupyter_toolagent.permissions import PermissionContext


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A working directory with a little content (never a real project)."""
    root = tmp_path / "project"
    (root / "data").mkdir(parents=True)
    (root / "data" / "a.csv").write_text("x\n1\n")
    (root / "notes.txt").write_text("notes\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    return Path(os.path.realpath(root))


@pytest.fixture
def perms(project: Path) -> PermissionContext:
    return PermissionContext(cwd=project)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake home directory (``~`` expands to it)."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    return Path(os.path.realpath(path))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if CORPUS_TRIED:
        terminalreporter.write_line(
            f"permission corpus: {len(CORPUS_TRIED)} entries tried ({len(set(CORPUS_TRIED))} distinct)"
        )
