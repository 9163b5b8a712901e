"""Named conversations of one IPython shell, and which one is current.

A notebook usually has one conversation ("default") that continues from cell to cell;
``--session NAME`` switches to (or creates) another and makes it current, so the next plain
``%%agent`` cell and `current_session()` refer to it.

Sessions are saved as they run (`jupyter_toolagent.sessions`, unless
``AgentMagics.save_sessions`` is off); ``--session NAME`` for a name that is not live but saved
continues the saved one (SPEC §14), as ``%agent resume NAME`` does.
"""

from __future__ import annotations

from typing import Any

from ..core.session import Session
from .per_owner import PerOwner

DEFAULT_SESSION = "default"


class SessionRegistry:
    """The conversations of one shell."""

    def __init__(self) -> None:
        self._sessions: dict[str, Session] = {}
        self.current_name = DEFAULT_SESSION
        self.save = False
        """Attach a saving store to sessions made from now on (``AgentMagics.save_sessions``)."""
        self.last_resume: Any = None
        """The `ResumeReport` of the last resume done by `use` (the cell shows it once)."""

    def use(self, name: str | None = None, *, new: bool = False) -> Session:
        """The session a cell runs in: ``name`` (or the current one), made current; ``new``
        replaces its conversation with a fresh one. Rules added by "Always allow" stay: they
        belong to the person's notebook session, not to one conversation. A ``name`` given
        explicitly that is not live but saved is resumed from its file."""
        explicit = name is not None
        name = name or self.current_name
        old = self._sessions.get(name)
        if old is None and explicit and not new and self._saved_exists(name):
            self.resume(name)
        elif old is None or new:
            fresh = Session(name, permissions=old.permissions if old is not None else None)
            self._attach_store(fresh)
            self._sessions[name] = fresh
        self.current_name = name
        return self._sessions[name]

    def resume(self, name: str) -> Any:
        """Continue the saved session ``name`` (it becomes current); its `ResumeReport`.
        Raises `SessionFileError` with one line when there is none or it cannot be read."""
        from ..sessions import resume_session

        old = self._sessions.get(name)
        session, report = resume_session(name, permissions=old.permissions if old is not None else None,
                                         save=self.save)
        self._sessions[name] = session
        self.current_name = name
        self.last_resume = report
        if report.kernel_restarted:
            from .kernel_changes import mark_kernel_restarted

            mark_kernel_restarted(session)  # the next cell's note says the kernel restarted
        return report

    def _saved_exists(self, name: str) -> bool:
        from ..sessions import saved_path

        return saved_path(name).exists()

    def _attach_store(self, session: Session) -> None:
        if not self.save:
            return
        from ..sessions import JsonlSessionStore, sessions_dir

        session.store = JsonlSessionStore(sessions_dir(session.cwd), session.name)

    def current(self) -> Session:
        return self.use(None)

    def get(self, name: str) -> Session | None:
        return self._sessions.get(name)

    def names(self) -> list[str]:
        return sorted(self._sessions)

    def clear(self) -> None:
        self._sessions.clear()
        self.current_name = DEFAULT_SESSION


_registries: PerOwner[SessionRegistry] = PerOwner(SessionRegistry)


def registry_for(shell: Any) -> SessionRegistry:
    return _registries.get(shell)


def current_session(shell: Any = None) -> Session:
    """The active conversation of the running IPython shell (created on first use)."""
    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
        if shell is None:
            raise RuntimeError("current_session() needs a running IPython shell; outside one, use jupyter_toolagent.Agent")
    return registry_for(shell).current()
