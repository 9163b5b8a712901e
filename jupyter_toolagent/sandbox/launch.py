"""Putting one command inside its policy: the argv to start, and what to clean up after.

`confine` is the only thing `tools.bash` calls. ``None`` as the policy (no sandbox works here,
and the settings said ``"required": false``, or the policy could not be built) runs the
command as it is — the caller labels it "not sandboxed".
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from .bubblewrap import bwrap_argv
from .policy import SandboxPolicy
from .probe import sandbox_status
from .seatbelt import sandbox_exec_argv

__all__ = ["Launch", "confine"]


def _nothing() -> None:
    return None


@dataclass
class Launch:
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    """Variables to add to the child's environment."""
    cleanup: Callable[[], None] = _nothing


def confine(policy: SandboxPolicy, command: Sequence[str]) -> Launch:
    """How to start ``command`` inside ``policy`` with this machine's backend.

    Raises `RuntimeError` when no backend works (the caller decides whether running
    unconfined is allowed)."""
    status = sandbox_status()
    if not status.available:
        raise RuntimeError(status.reason)
    if status.backend == "bubblewrap":
        return Launch(bwrap_argv(policy, command, bwrap=status.executable or "bwrap"))
    tmpdir = Path(tempfile.mkdtemp(prefix="toolagent-sandbox-"))
    return Launch(
        sandbox_exec_argv(policy, command, tmpdir, sandbox_exec=status.executable or "/usr/bin/sandbox-exec"),
        env={"TMPDIR": str(tmpdir)},
        cleanup=lambda: shutil.rmtree(tmpdir, ignore_errors=True),
    )
