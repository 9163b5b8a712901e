"""Saved sessions: conversations written to ``.toolagent/sessions/`` as they run, and brought
back after a kernel restart (SPEC §14). Implements `core.session_store.SessionStore`."""

from __future__ import annotations

from .jsonl_store import SESSIONS_DIR, JsonlSessionStore, sessions_dir
from .resume import ResumeReport, SavedSession, list_saved, load_saved, resume_session, saved_path
from .scrub import scrub_for_saving

__all__ = [
    "SESSIONS_DIR",
    "JsonlSessionStore",
    "ResumeReport",
    "SavedSession",
    "list_saved",
    "load_saved",
    "resume_session",
    "saved_path",
    "scrub_for_saving",
    "sessions_dir",
]
