"""Named conversations of one IPython shell, and which one is current.

A notebook usually has one conversation ("default") that continues from cell to cell;
``--session NAME`` switches to (or creates) another and makes it current, so the next plain
``%%agent`` cell and `current_session()` refer to it.
"""

from __future__ import annotations

import weakref
from typing import Any

from ..core.session import Session

DEFAULT_SESSION = "default"


class SessionRegistry:
    """The conversations of one shell."""

    def __init__(self) -> None:
        self._sessions: dict[str, Session] = {}
        self.current_name = DEFAULT_SESSION

    def use(self, name: str | None = None, *, new: bool = False) -> Session:
        """The session a cell runs in: ``name`` (or the current one), made current; ``new``
        replaces its conversation with a fresh one. Rules added by "Always allow" stay: they
        belong to the person's notebook session, not to one conversation."""
        name = name or self.current_name
        old = self._sessions.get(name)
        if old is None or new:
            fresh = Session(name, permissions=old.permissions if old is not None else None)
            if old is not None and hasattr(old, "session_allow"):
                fresh.session_allow = old.session_allow
            self._sessions[name] = fresh
        self.current_name = name
        return self._sessions[name]

    def current(self) -> Session:
        return self.use(None)

    def get(self, name: str) -> Session | None:
        return self._sessions.get(name)

    def names(self) -> list[str]:
        return sorted(self._sessions)

    def clear(self) -> None:
        self._sessions.clear()
        self.current_name = DEFAULT_SESSION


_registries: "weakref.WeakKeyDictionary[Any, SessionRegistry]" = weakref.WeakKeyDictionary()


def registry_for(shell: Any) -> SessionRegistry:
    registry = _registries.get(shell)
    if registry is None:
        registry = _registries[shell] = SessionRegistry()
    return registry


def current_session(shell: Any = None) -> Session:
    """The active conversation of the running IPython shell (created on first use)."""
    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
        if shell is None:
            raise RuntimeError("current_session() needs a running IPython shell; outside one, use jupyter_toolagent.Agent")
    return registry_for(shell).current()
