"""`SessionStore`: where a conversation is saved while it runs (SPEC §14).

The core only says *when* something worth saving happened — a request finished, a run
finished, a compaction was made, the conversation was reset — and hands the session over;
the store decides how to write it (`jupyter_toolagent.sessions` writes append-only JSONL).
A store that fails (a full disk) must not break the run: `Session` reports its first failure
once and carries on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from .session import Session

__all__ = ["SessionStore"]


@runtime_checkable
class SessionStore(Protocol):
    def sync(self, session: "Session") -> None:
        """Write what changed in ``session`` since the last call (new messages, finished runs)."""
        ...

    def compacted(self, session: "Session", compaction: Any) -> None:
        """Record a compaction (the transcript itself is unchanged by it)."""
        ...

    def reset(self, session: "Session") -> None:
        """The conversation was cleared: later loads start from empty."""
        ...
