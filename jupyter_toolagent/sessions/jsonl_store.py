"""`JsonlSessionStore`: a session saved under ``.toolagent/sessions/NAME.jsonl`` as it runs.

Implements `core.session_store.SessionStore`. Each `sync` appends, in one write + fsync,
the messages added since the last one (or a ``rewrite`` record when the transcript was
replaced, e.g. repaired), the runs that finished and a newly learned context window. Every
string is scrubbed (`scrub`) before it reaches the disk.

A fresh conversation never appends to another conversation's file: when ``NAME.jsonl``
exists already (a previous kernel's), the fresh one is saved as ``NAME-2.jsonl`` (the first
free number), and `saved_name` says so. A resumed conversation appends to its own file.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .jsonl_file import FORMAT, VERSION, append_lines, encode_record, trim_torn_tail
from .scrub import scrub_value

if TYPE_CHECKING:
    from ..core.session import Session

__all__ = ["SESSIONS_DIR", "JsonlSessionStore", "file_name_for", "sessions_dir"]

SESSIONS_DIR = Path(".toolagent") / "sessions"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def sessions_dir(cwd: Path | None = None) -> Path:
    return (Path(cwd) if cwd is not None else Path.cwd()) / SESSIONS_DIR


def file_name_for(name: str) -> str:
    """A file name for a session name (anything but letters, digits, ``._-`` becomes ``_``)."""
    cleaned = _UNSAFE.sub("_", name).strip("._") or "session"
    return cleaned + ".jsonl"


def _free_path(directory: Path, name: str) -> tuple[str, Path]:
    path = directory / file_name_for(name)
    if not path.exists():
        return name, path
    number = 2
    while (directory / file_name_for(f"{name}-{number}")).exists():
        number += 1
    return f"{name}-{number}", directory / file_name_for(f"{name}-{number}")


class JsonlSessionStore:
    """One session's file (see the module docstring). Created lazily: no file until there is
    something to save."""

    def __init__(self, directory: Path, name: str, *, resume_path: Path | None = None,
                 written_messages: list[Any] | None = None, written_runs: int = 0,
                 learned_window: int | None = None) -> None:
        self.directory = Path(directory)
        self.name = name
        self.path: Path | None = resume_path
        self.saved_name: str | None = resume_path.stem if resume_path is not None else None
        self._written: list[Any] = list(written_messages or [])
        """The message objects written so far, in order (identity tells a rewrite from an append)."""
        self._runs = written_runs
        self._window = learned_window
        self._resumed = resume_path is not None
        self._opened = False
        self._rewrite = False

    def rewrite_next(self) -> None:
        """The next `sync` writes the whole transcript (it was replaced, e.g. repaired on load)."""
        self._rewrite = True

    # --- SessionStore ------------------------------------------------------------------------
    def sync(self, session: "Session") -> None:
        records = self._pending(session)
        if records:
            self._append(records)

    def compacted(self, session: "Session", compaction: Any) -> None:
        self._append([{"type": "compaction", **compaction.to_record()}])

    def reset(self, session: "Session") -> None:
        if self.path is None:
            return
        self._written, self._runs = [], 0
        self._append([{"type": "reset", "at": time.time()}])

    # --- writing -----------------------------------------------------------------------------
    def _pending(self, session: "Session") -> list[dict[str, Any]]:
        records: list[dict[str, Any]] = []
        messages = session.messages
        written = self._written
        appended = not self._rewrite and len(messages) >= len(written) and all(
            messages[i] is written[i] for i in range(max(0, len(written) - 2), len(written)))
        if appended and written and messages[0] is not written[0]:
            appended = False
        if appended:
            for index in range(len(written), len(messages)):
                records.append({"type": "message", "n": index, "message": messages[index]})
        else:
            records.append({"type": "rewrite", "messages": list(messages), "at": time.time()})
        self._written = list(messages)
        self._rewrite = False
        finished = [r for r in session.runs if r.finished_at is not None]
        for run in finished[self._runs:]:
            records.append({"type": "run", "prompt": run.prompt, "finish_reason": run.finish_reason,
                            "error": run.error, "started_at": run.started_at, "finished_at": run.finished_at,
                            "usage": vars(run.usage), "request_ids": list(run.request_ids)})
        self._runs = len(finished)
        window = getattr(getattr(session, "context", None), "meter", None)
        learned = getattr(window, "learned_window", None)
        if learned and learned != self._window:
            records.append({"type": "window", "tokens": learned})
            self._window = learned
        return records

    def _open(self) -> Path:
        if self.path is None:
            self.directory.mkdir(parents=True, exist_ok=True)
            self.saved_name, self.path = _free_path(self.directory, self.name)
            header = {"type": "session", "format": FORMAT, "version": VERSION, "name": self.name,
                      "created_at": time.time(), "pid": os.getpid()}
            append_lines(self.path, encode_record(header))
        elif not self._opened:
            trim_torn_tail(self.path)  # a kill mid-write: the next record starts on a fresh line
            if self._resumed:
                append_lines(self.path, encode_record({"type": "process", "pid": os.getpid(), "at": time.time()}))
        self._opened = True
        return self.path

    def _append(self, records: list[dict[str, Any]]) -> None:
        path = self._open()
        append_lines(path, b"".join(encode_record(scrub_value(r)) for r in records))
