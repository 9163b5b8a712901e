"""The saved-session file: append-only JSON Lines, one record per line (SPEC §14).

Why this shape: a kernel can be killed at any instant. Each record is one ``write`` of one
complete line to a file opened with ``O_APPEND``, followed by ``fsync``; nothing already
written is ever rewritten. A kill can therefore only leave the *last* line incomplete, and
`read_records` drops such a torn last line (and says so) instead of refusing the file. A bad
line anywhere else means the file is not ours or was damaged: one `SessionFileError` line.

Records (``type``):

* ``session`` — first line: ``format``, ``version``, ``name``, ``created_at``, ``pid``;
* ``process`` — a process (kernel) started writing to the file: ``pid``, ``at``;
* ``message`` — one transcript message, ``n`` its index;
* ``rewrite`` — the transcript was replaced as a whole (a repair): ``messages``;
* ``reset`` — the conversation was cleared;
* ``compaction`` — a `core.compaction.Compaction` record;
* ``window`` — the context window the API named (``prompt is too long``);
* ``run`` — a finished run's summary (prompt, finish reason, usage, times).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import SessionFileError

__all__ = ["FORMAT", "VERSION", "ReadResult", "append_lines", "encode_record", "read_records", "trim_torn_tail"]

FORMAT = "jupyter_toolagent.session"
VERSION = 1


def encode_record(record: dict[str, Any]) -> bytes:
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=repr) + "\n").encode("utf-8")


def append_lines(path: Path, data: bytes) -> None:
    """Append ``data`` (whole lines) with one write, then flush it to the disk."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    finally:
        os.close(fd)


@dataclass
class ReadResult:
    header: dict[str, Any]
    records: list[dict[str, Any]] = field(default_factory=list)
    torn_tail: bool = False
    """The last line was incomplete (a write cut by a kill) and was ignored."""


def read_records(path: Path) -> ReadResult:
    """The records of a session file; raises `SessionFileError` (one line) for anything else."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SessionFileError(f"cannot read saved session {path}: {exc.strerror or exc}") from None
    lines = data.split(b"\n")
    torn = False
    if lines and lines[-1] == b"":
        lines.pop()
    elif lines:
        torn = True  # no newline after the last record: it may be cut anywhere
    records: list[dict[str, Any]] = []
    for number, line in enumerate(lines, start=1):
        last = number == len(lines)
        try:
            record = json.loads(line)
            if not isinstance(record, dict):
                raise ValueError("not an object")
        except ValueError:
            if last and torn:
                break
            raise SessionFileError(
                f"{path.name} is not a saved jupyter_toolagent session (line {number} is not a JSON record)") from None
        if last and torn:
            torn = False  # complete JSON, just no newline: keep it
        records.append(record)
    if not records or records[0].get("type") != "session" or records[0].get("format") != FORMAT:
        if torn and not records:
            raise SessionFileError(f"{path.name} holds no complete record (it was cut while its first line was written)")
        raise SessionFileError(f"{path.name} is not a saved jupyter_toolagent session (no {FORMAT} header line)")
    if int(records[0].get("version") or 0) > VERSION:
        raise SessionFileError(f"{path.name} was saved by a newer jupyter_toolagent (format version "
                               f"{records[0].get('version')}, this one reads {VERSION})")
    return ReadResult(records[0], records[1:], torn)


def trim_torn_tail(path: Path) -> bool:
    """Cut an incomplete last line off ``path`` before appending to it; True if one was cut."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return False
    if not data or data.endswith(b"\n"):
        return False
    keep = data.rfind(b"\n") + 1
    with open(path, "r+b") as handle:
        handle.truncate(keep)
        handle.flush()
        os.fsync(handle.fileno())
    return True
