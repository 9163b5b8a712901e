"""Read before edit (SPEC §10): Edit and Write change an existing file only when this session
has Read it and it has not changed since.

A model that edits a file it never saw guesses at its content; one that edits a file that
changed since it was read (the person saved it in the next tab, a command rewrote it)
overwrites what it never saw. Both get an error result that names Read, so the next call is
the Read that makes the edit safe. Creating a new file needs no Read.

The check runs twice: in ``validate_input``, so a doomed call is refused before the person
is asked to approve it, and again in ``call`` on the very bytes about to be changed, because
the file can change while the approval is pending. A successful Read, Edit or Write records
what the file now is, so a second Edit needs no new Read.

A partial Read (``offset``/``limit``) counts as a read, as in Claude Code: Edit's
``old_string`` must match the file exactly and once, so an edit still cannot land on text
the model invented.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..core.file_state import FileStamp
from ..core.tool import ToolUseContext

__all__ = ["not_read_refusal", "record_seen", "record_written"]


def not_read_refusal(ctx: ToolUseContext, path: Path, shown: str, *, action: str,
                     current: FileStamp | None = None) -> str | None:
    """Why ``action`` ("edit", "overwrite") of the existing file ``path`` must not run now, or
    None. ``current`` is the file's stamp if the caller has its bytes already."""
    if current is None:
        if not os.path.isfile(path):
            return None  # a new file (Write) or a missing one (Edit says so itself)
        current = FileStamp.of_path(path)
        if current is None:
            return None  # unreadable: the call reports the real error
    seen = ctx.file_reads.last_seen(path)
    if seen is None:
        return (f"{shown} has not been read in this session. Read it first (Read with file_path {shown!r}), "
                f"then {action} it based on what you read.")
    if not seen.same_content(current):
        return (f"{shown} has changed since it was last read (by the user, another program or a command). "
                f"Read it again, then {action} it based on its current content.")
    return None


def record_seen(ctx: ToolUseContext, path: Path, stamp: FileStamp | None) -> None:
    ctx.file_reads.record(path, stamp)


def record_written(ctx: ToolUseContext, path: Path, data: bytes) -> None:
    """After a successful Edit or Write: the session has seen what it wrote."""
    try:
        mtime = os.stat(path).st_mtime_ns
    except OSError:
        return
    ctx.file_reads.record(path, FileStamp.of_bytes(data, mtime))
