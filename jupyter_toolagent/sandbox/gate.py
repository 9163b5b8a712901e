"""What the permission engine and ``%agent sandbox`` ask of the sandbox.

The read-only shell classifier may auto-allow a command only because the sandbox makes a
misread harmless. Where no sandbox works, `read_only_shell_blocked` gives the reason such a
command must be asked about instead — unless the settings opt out with
``"sandbox": {"required": false}``. Bash puts that reason in its permission subject
(`ShellCommand.unconfined`): the sandbox builds on the permission package, so the engine reads
the answer there instead of importing this module.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..core.permission_types import PermissionDecision
from .choose import policy_for
from .probe import sandbox_status

if TYPE_CHECKING:
    from ..permissions.context import PermissionContext

__all__ = ["describe_sandbox", "read_only_shell_blocked", "sandbox_line"]


def read_only_shell_blocked(perms: "PermissionContext") -> str | None:
    """None when a read-only shell command may be auto-allowed; else why not."""
    status = sandbox_status()
    if status.available or not perms.sandbox_settings.required:
        return None
    return (f"no sandbox works on this machine ({status.reason}), so no command is allowed without asking "
            'because it looks read-only (settings "sandbox": {"required": false} allows that unsandboxed)')


def sandbox_line(perms: "PermissionContext") -> str:
    """One line for ``%agent config``."""
    status = sandbox_status()
    if status.available:
        return f"sandbox: {status.backend} (works here); network for approved commands: " \
               f"{'on' if perms.sandbox_settings.network else 'off'}"
    extra = "read-only commands run unsandboxed (required: false)" if not perms.sandbox_settings.required \
        else "no Bash command is auto-allowed"
    return f"sandbox: unavailable — {status.reason}; every Bash card says 'not sandboxed'; {extra}"


def describe_sandbox(perms: "PermissionContext") -> str:
    """The text of ``%agent sandbox``: whether it works here and both policies as they would
    apply to a command run now in the working directory."""
    status = sandbox_status()
    cwd = Path(perms.cwd)
    settings = perms.sandbox_settings
    lines = [status.describe(), f"working directory: {cwd}",
             f"settings: network={str(settings.network).lower()}, write={list(settings.write)}, "
             f"required={str(settings.required).lower()}"]
    if not status.available:
        lines.append("every Bash command runs not sandboxed; "
                     + ("read-only commands are still auto-allowed (required: false)" if not settings.required
                        else "no Bash command is auto-allowed because it looks read-only"))
    lines.append("")
    lines.append("commands allowed because they look read-only:")
    lines.extend("  " + line for line in policy_for(PermissionDecision.allow("read_only"), "", perms, cwd).describe())
    lines.append("commands a person approved or a rule allowed:")
    lines.extend("  " + line for line in policy_for(PermissionDecision.allow("user"), "", perms, cwd).describe())
    lines.append("in both: own pid namespace and /proc, private /tmp, environment without the product's keys")
    return "\n".join(lines)
