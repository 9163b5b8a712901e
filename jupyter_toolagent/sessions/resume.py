"""Loading a saved session, listing saved sessions, and continuing one (SPEC §14).

`load_saved` replays a file's records into the transcript, the compactions and the learned
window. `resume_session` turns that into a live `Session` that appends to the same file:
the transcript is checked with `check_pairing` (as the API would see it) and, if it fails,
repaired with `repair_pairing` — the `ResumeReport` carries the repair's own summary so the
notebook can show it. ``kernel_restarted`` tells the notebook layer that the process that
wrote the file is not this one (its variables are gone).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.compaction import Compaction
from ..core.pairing import check_pairing, normalize_messages_for_api, repair_pairing
from ..core.session import Session
from ..core.usage import Usage
from ..errors import SessionFileError
from .jsonl_file import read_records
from .jsonl_store import JsonlSessionStore, file_name_for, sessions_dir

__all__ = ["ResumeReport", "SavedSession", "list_saved", "load_saved", "resume_session", "saved_path"]


@dataclass
class SavedSession:
    """What a file holds, replayed."""

    path: Path
    name: str
    created_at: float
    messages: list[dict[str, Any]] = field(default_factory=list)
    compactions: list[Compaction] = field(default_factory=list)
    runs: list[dict[str, Any]] = field(default_factory=list)
    learned_window: int | None = None
    pids: list[int] = field(default_factory=list)
    torn_tail: bool = False

    @property
    def modified_at(self) -> float:
        try:
            return self.path.stat().st_mtime
        except OSError:
            return self.created_at

    @property
    def first_prompt(self) -> str:
        for message in self.messages:
            if message.get("role") != "user":
                continue
            content = message.get("content")
            for block in content if isinstance(content, list) else [{"type": "text", "text": content}]:
                if isinstance(block, dict) and block.get("type") == "text" and block.get("text"):
                    return " ".join(str(block["text"]).split())[:60]
        return ""


def load_saved(path: Path) -> SavedSession:
    """Replay the records of ``path``; `SessionFileError` (one line) if it cannot be read."""
    result = read_records(path)
    header = result.header
    saved = SavedSession(path=path, name=str(header.get("name") or path.stem),
                         created_at=float(header.get("created_at") or 0.0), torn_tail=result.torn_tail)
    if isinstance(header.get("pid"), int):
        saved.pids.append(header["pid"])
    for number, record in enumerate(result.records, start=2):
        kind = record.get("type")
        try:
            if kind == "message":
                index = int(record["n"])
                if index != len(saved.messages):
                    raise ValueError(f"message {index} follows message {len(saved.messages) - 1}")
                saved.messages.append(dict(record["message"]))
            elif kind == "rewrite":
                saved.messages = [dict(m) for m in record["messages"]]
            elif kind == "reset":
                saved.messages, saved.compactions, saved.runs = [], [], []
            elif kind == "compaction":
                saved.compactions.append(Compaction.from_record(record))
            elif kind == "window":
                saved.learned_window = int(record["tokens"])
            elif kind == "run":
                saved.runs.append(record)
            elif kind == "process" and isinstance(record.get("pid"), int):
                saved.pids.append(record["pid"])
        except (KeyError, TypeError, ValueError) as exc:
            raise SessionFileError(f"{path.name} is damaged: line {number} ({kind} record) cannot be read: {exc}") from None
    return saved


def saved_path(name: str, cwd: Path | None = None) -> Path:
    return sessions_dir(cwd) / file_name_for(name)


def list_saved(cwd: Path | None = None) -> tuple[list[SavedSession], list[str]]:
    """The saved sessions of the working directory, newest first, and one line per file that
    could not be read."""
    directory = sessions_dir(cwd)
    found: list[SavedSession] = []
    problems: list[str] = []
    for path in sorted(directory.glob("*.jsonl")) if directory.is_dir() else []:
        try:
            found.append(load_saved(path))
        except SessionFileError as exc:
            problems.append(str(exc))
    found.sort(key=lambda s: -s.modified_at)
    return found, problems


@dataclass
class ResumeReport:
    """How a saved session came back."""

    name: str
    path: Path
    messages: int
    runs: int
    repair: str | None = None
    """`repair_pairing`'s summary when the loaded transcript failed `check_pairing`."""
    torn_tail: bool = False
    kernel_restarted: bool = False
    """The file was written by another process: the kernel's state of then is gone."""
    resumed_at: float = field(default_factory=time.time)

    def summary(self) -> str:
        lines = [f"resumed session {self.name!r} from {self.path} ({self.messages} messages, {self.runs} runs)"]
        if self.torn_tail:
            lines.append("its last line was cut by a crash while it was written and was ignored")
        if self.repair:
            lines.append("the loaded transcript was invalid and was repaired:\n" + self.repair)
        return "\n".join(lines)


def resume_session(name: str, *, cwd: Path | None = None, permissions: Any = None,
                   save: bool = True) -> tuple[Session, ResumeReport]:
    """A live session continuing the saved ``name``; `SessionFileError` if there is none."""
    path = saved_path(name, cwd)
    if not path.exists():
        raise SessionFileError(f"no saved session {name!r} (looked for {path}); %agent sessions lists them")
    saved = load_saved(path)
    session = Session(name, cwd=cwd, permissions=permissions)
    messages = saved.messages
    repair = None
    if check_pairing(normalize_messages_for_api(messages)):
        repaired = repair_pairing(normalize_messages_for_api(messages))
        messages, repair = repaired.messages, repaired.summary()
    session.messages[:] = messages
    session.context.compactions = list(saved.compactions)
    session.context.meter.learned_window = saved.learned_window
    for run in saved.runs:
        from ..core.session import RunRecord

        record = RunRecord(prompt=str(run.get("prompt") or ""), started_at=float(run.get("started_at") or 0.0))
        record.finished_at = run.get("finished_at")
        record.finish_reason, record.error = run.get("finish_reason"), run.get("error")
        usage = run.get("usage") or {}
        record.usage = Usage(**{k: int(v) for k, v in usage.items() if k in Usage.__dataclass_fields__})
        session.runs.append(record)
    if save:
        store = JsonlSessionStore(path.parent, name, resume_path=path, written_messages=session.messages,
                                  written_runs=len(saved.runs), learned_window=saved.learned_window)
        if repair is not None:
            store.rewrite_next()  # the file holds the broken transcript: the repaired one replaces it
        session.store = store
    report = ResumeReport(name=name, path=path, messages=len(session.messages), runs=len(saved.runs),
                          repair=repair, torn_tail=saved.torn_tail,
                          kernel_restarted=bool(saved.pids) and saved.pids[-1] != os.getpid())
    session.resumed = report
    return session, report
