"""The macOS backend: a `SandboxPolicy` as a ``sandbox-exec`` profile (Seatbelt, SBPL).

Generated and checked as text; the project's CI runs on Linux, so this backend is not
exercised there. macOS has no mount or pid namespaces, so the shape differs from bubblewrap:

* writes are denied by default and allowed only below the writable directories and the
  per-command temporary directory (passed as ``TMPDIR``), then denied again below protected
  paths (later rules win in SBPL);
* reading is allowed except below hidden paths;
* other processes cannot be inspected (``process-info*`` only for the sandbox's own), which
  is what keeps their environment out of reach without a private ``/proc``;
* network is denied unless the policy allows it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from .policy import SandboxPolicy

__all__ = ["sandbox_exec_argv", "seatbelt_profile"]


def _quote(path: Path | str) -> str:
    """An SBPL string literal."""
    text = str(path).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def seatbelt_profile(policy: SandboxPolicy, tmpdir: Path) -> str:
    """The profile text for ``policy``; ``tmpdir`` is the command's private temporary directory."""
    lines = [
        "(version 1)",
        "(deny default)",
        "(allow process-exec process-fork)",
        "(allow signal (target same-sandbox))",
        "(allow process-info* (target same-sandbox))",
        "(allow sysctl-read mach-lookup ipc-posix-shm-read-data iokit-open)",
        "(allow file-read*)",
        '(allow file-write* (literal "/dev/null") (literal "/dev/tty") (regex #"^/dev/fd/"))',
        f"(allow file-write* (subpath {_quote(tmpdir)}))",
    ]
    if policy.confinement == "writable":
        for root in policy.writable or (policy.cwd,):
            lines.append(f"(allow file-write* (subpath {_quote(root)}))")
        for path in policy.protected:
            lines.append(f"(deny file-write* (subpath {_quote(path)}))")
        if policy.network:
            lines.append("(allow network*)")
    for path in policy.hidden:
        lines.append(f"(deny file-read* file-write* (subpath {_quote(path)}))")
    return "\n".join(lines) + "\n"


def sandbox_exec_argv(policy: SandboxPolicy, command: Sequence[str], tmpdir: Path,
                      *, sandbox_exec: str = "/usr/bin/sandbox-exec") -> list[str]:
    return [sandbox_exec, "-p", seatbelt_profile(policy, tmpdir), *command]
