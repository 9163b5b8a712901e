"""``%agent sandbox`` and the sandbox line of ``%agent config`` (SPEC §5.5).

Both read the current session's permission state (loading the settings files the way the
next ``%%agent`` cell would), so what they show is what the next Bash command gets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

if TYPE_CHECKING:
    from ..permissions import PermissionContext
    from .magics import AgentMagics


def session_permissions(magics: "AgentMagics") -> "PermissionContext":
    from .agent_cell import load_permissions
    from .sessions import registry_for

    session = registry_for(magics.shell).current()
    load_permissions(session)
    return session.permissions


def sandbox(magics: "AgentMagics", args: list[str]) -> Any:
    """Whether the sandbox works here, and the two policies a command would run under now."""
    if args:
        raise UsageError(f"%agent sandbox takes no arguments (got {' '.join(args)!r})")
    from ..sandbox import describe_sandbox
    from .subcommands import TextView

    return TextView(describe_sandbox(session_permissions(magics)))


def sandbox_config_line(magics: "AgentMagics") -> str:
    from ..sandbox import sandbox_line

    try:
        return sandbox_line(session_permissions(magics))
    except UsageError as exc:  # a broken settings file: say so instead of failing the listing
        return f"sandbox: settings cannot be read ({exc})"
