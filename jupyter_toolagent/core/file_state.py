"""What this session has read of each file, so that Edit and Write refuse blind or stale
changes (SPEC §10).

A file's state is a `FileStamp`: modification time and size, and a SHA-256 of the content
for files up to `HASH_LIMIT`. Two stamps are the same file when their digests match (or, for
files too large to hash, their mtime and size): content identity, because

* mtime + size alone miss a rewrite of the same length within one timestamp tick, or by a tool
  that keeps the old mtime (``cp -p``, ``rsync -t``, ``touch -r``) — exactly the change the
  person makes in the next tab while the agent works;
* a ``touch`` or a save without changes does not force the model to read the file again.

Hashing costs one pass over files the model reads or edits; files past the limit (logs,
data dumps) are not hashed, so a partial Read of a huge file stays cheap.

The state is session-scoped: `Session` owns one `FileReadState`, every request's
`ToolUseContext` carries it, and notebook ``%%agent`` cells of one session share it. It is
keyed by the resolved path, so ``./a.txt``, ``a.txt`` and a link to it are one file.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

__all__ = ["HASH_LIMIT", "FileReadState", "FileStamp"]

HASH_LIMIT = 16 * 1024 * 1024
"""Files up to this many bytes are compared by content; larger ones by mtime and size."""


@dataclass(frozen=True)
class FileStamp:
    mtime_ns: int
    size: int
    digest: str | None = None
    """SHA-256 of the content (None for files over `HASH_LIMIT`)."""

    @classmethod
    def of_path(cls, path: str | Path) -> "FileStamp | None":
        """The file's stamp now, or None when it is not a readable regular file (a FIFO or
        device is never opened: that could block)."""
        try:
            info = os.stat(path)
            if not stat.S_ISREG(info.st_mode):
                return None
            if info.st_size > HASH_LIMIT:
                return cls(info.st_mtime_ns, info.st_size)
            with open(path, "rb") as f:
                data = f.read(HASH_LIMIT + 1)
        except OSError:
            return None
        return cls.of_bytes(data, info.st_mtime_ns)

    @classmethod
    def of_bytes(cls, data: bytes, mtime_ns: int) -> "FileStamp":
        digest = hashlib.sha256(data).hexdigest() if len(data) <= HASH_LIMIT else None
        return cls(mtime_ns, len(data), digest)

    def same_content(self, other: "FileStamp") -> bool:
        if self.digest is not None and other.digest is not None:
            return self.digest == other.digest
        return (self.mtime_ns, self.size) == (other.mtime_ns, other.size)


def file_key(path: str | Path) -> str:
    return os.path.realpath(path)


class FileReadState:
    """The stamp of each file as this session last saw it (read, or written by Edit/Write).

    Tools record from worker threads; each method is one dict operation, atomic under the GIL,
    so no lock is needed (and the state stays copyable and picklable with its session)."""

    def __init__(self) -> None:
        self._stamps: dict[str, FileStamp] = {}

    def record(self, path: str | Path, stamp: FileStamp | None) -> None:
        if stamp is not None:
            self._stamps[file_key(path)] = stamp

    def last_seen(self, path: str | Path) -> FileStamp | None:
        return self._stamps.get(file_key(path))

    def clear(self) -> None:
        self._stamps.clear()

    def __len__(self) -> int:
        return len(self._stamps)
