"""Whether a sandbox can start on this machine, asked once and remembered.

The answer comes from starting the real thing: ``bwrap`` with the read-only policy's mounts
running ``true`` (a missing binary, a kernel without unprivileged user namespaces, or a
container that forbids mounts all fail there, each with its own message). About five
milliseconds, once per process and per value of the ``TOOLAGENT_SANDBOX`` knob.

``TOOLAGENT_SANDBOX=off`` reports the sandbox as unavailable whatever the machine can do: the
way to see — and to test — what the product does where no sandbox works (no Bash command is
auto-allowed, every card says "not sandboxed").
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from .bubblewrap import bwrap_argv
from .policy import SandboxPolicy

__all__ = ["KNOB", "SandboxStatus", "sandbox_status"]

KNOB = "TOOLAGENT_SANDBOX"
PROBE_TIMEOUT = 10.0
Backend = Literal["bubblewrap", "sandbox-exec", "none"]


@dataclass(frozen=True)
class SandboxStatus:
    backend: Backend
    available: bool
    reason: str
    """Why it is unavailable, or what was checked."""
    executable: str | None = None

    def describe(self) -> str:
        if self.available:
            return f"sandbox: {self.backend} works here ({self.reason})"
        return f"sandbox: unavailable — {self.reason}"


def sandbox_status() -> SandboxStatus:
    """This machine's sandbox (cached; the ``TOOLAGENT_SANDBOX`` knob is read every time)."""
    return _probe(os.environ.get(KNOB, "").strip().lower(), sys.platform)


@lru_cache(maxsize=8)
def _probe(knob: str, platform: str) -> SandboxStatus:
    if knob in ("off", "0", "false", "no", "unavailable"):
        return SandboxStatus("none", False, f"turned off by {KNOB}={knob}")
    if platform.startswith("linux"):
        return _probe_bwrap()
    if platform == "darwin":
        return _probe_sandbox_exec()
    return SandboxStatus("none", False, f"no sandbox backend for platform {platform!r}")


def _probe_bwrap() -> SandboxStatus:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return SandboxStatus("bubblewrap", False, "bwrap is not installed (Debian package bubblewrap)")
    true = shutil.which("true") or "/bin/true"
    argv = bwrap_argv(SandboxPolicy.read_only(Path("/")), [true], bwrap=bwrap)
    failure = _run(argv)
    if failure:
        return SandboxStatus("bubblewrap", False, f"bwrap cannot start here: {failure}", bwrap)
    return SandboxStatus("bubblewrap", True, f"{bwrap} started a read-only sandbox with its own pid namespace", bwrap)


def _probe_sandbox_exec() -> SandboxStatus:
    tool = shutil.which("sandbox-exec") or ("/usr/bin/sandbox-exec" if os.path.exists("/usr/bin/sandbox-exec") else None)
    if tool is None:
        return SandboxStatus("sandbox-exec", False, "sandbox-exec is not available")
    failure = _run([tool, "-p", "(version 1)(allow default)", "/usr/bin/true"])
    if failure:
        return SandboxStatus("sandbox-exec", False, f"sandbox-exec cannot start here: {failure}", tool)
    return SandboxStatus("sandbox-exec", True, f"{tool} started a profile", tool)


def _run(argv: list[str]) -> str:
    """'' when ``argv`` ran and exited 0, else what went wrong."""
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=PROBE_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{type(exc).__name__}: {exc}"
    if proc.returncode != 0:
        return proc.stderr.decode(errors="replace").strip().splitlines()[-1:][0] if proc.stderr.strip() \
            else f"exit code {proc.returncode}"
    return ""
