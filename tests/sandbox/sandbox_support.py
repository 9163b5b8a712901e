"""A scratch project, the two policies for it, and running a command in one with real bwrap."""

from __future__ import annotations

import asyncio
import socket
import threading
from pathlib import Path
from typing import Iterator

from jupyter_toolagent.core.permission_types import PermissionDecision
from jupyter_toolagent.permissions import PermissionContext
from jupyter_toolagent.sandbox import SandboxPolicy, policy_for
from jupyter_toolagent.tools.bash import CommandOutcome, run_command

GIT_CONFIG = "[core]\n\trepositoryformatversion = 0\n"


def make_project(root: Path) -> Path:
    """``proj/`` with a git config, data, a secrets directory and a key file."""
    project = root / "proj"
    (project / ".git").mkdir(parents=True)
    (project / ".git" / "config").write_text(GIT_CONFIG)
    (project / "data.csv").write_text("a,b\n1,2\n")
    (project / "secrets").mkdir()
    (project / "secrets" / "token.txt").write_text("SECRET-VALUE-IN-FILE\n")
    (project / "server.pem").write_text("PEM-PRIVATE-PART\n")
    return project.resolve()


def read_only_policy(project: Path, perms: PermissionContext | None = None) -> SandboxPolicy:
    perms = perms or PermissionContext(cwd=project)
    return policy_for(PermissionDecision.allow("read_only"), "", perms, project)


def approved_policy(project: Path, command: str = "", *, asked: str = "default",
                    perms: PermissionContext | None = None) -> SandboxPolicy:
    perms = perms or PermissionContext(cwd=project)
    return policy_for(PermissionDecision.allow("user", asked=asked), command, perms, project)


def run(policy: SandboxPolicy | None, command: str, cwd: Path, timeout: float = 20) -> CommandOutcome:
    return asyncio.run(run_command(command, cwd, timeout, sandbox=policy))


class Listener:
    """A TCP listener on 127.0.0.1 that counts the connections it accepted."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (socket.timeout, OSError):
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.sock.close()


def listener() -> Iterator[Listener]:
    srv = Listener()
    try:
        yield srv
    finally:
        srv.close()
