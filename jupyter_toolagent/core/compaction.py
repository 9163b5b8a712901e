"""Compaction of a long transcript: what is sent instead of the whole conversation (SPEC §14).

Pure functions over API-format messages; the one model call (the summary) is made by
`context_guard`. The session's transcript itself is never changed: a `Compaction` says how the
*sent* view differs from it, and `api_view` applies that, so the original stays in the session
and in its saved file, and ``ReadToolOutput`` can still read every cleared result there.

Two steps, cheapest first:

1. **Clearing**: the results of tool calls older than the last ``keep`` assistant turns are
   replaced by one line that says how to read them again (``ReadToolOutput`` with the id).
   The tool_result block stays, with its id and ``is_error``: pairing is untouched.
2. **Summary**: everything before a *cut point* is replaced by one user message holding a
   summary the model wrote. A cut point is an index whose message is an assistant message
   or a user message that holds no tool_result (a prompt). Cutting there keeps every tool_use
   with its result, on one side or the other: a tool_result message always follows its
   assistant message, and neither starts the tail. Assistant messages are kept or dropped
   whole, so thinking blocks are passed back unchanged or not at all.

Why the prompt cache restarts once: a compaction changes the sent prefix once (clearing
rewrites old results, a summary replaces the head); after that the view of every message is
a pure function of the fixed `Compaction` and the message, memoised per message, so each
later request repeats the previous request's bytes and appends.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

__all__ = [
    "SUMMARY_HEADER",
    "SUMMARY_REQUEST_MARKER",
    "Compaction",
    "api_view",
    "clear_candidates",
    "cleared_result",
    "cut_for_keep",
    "cut_points",
    "summary_message",
    "summary_request_messages",
]

SUMMARY_REQUEST_MARKER = "[jupyter_toolagent: summarise the conversation]"
"""Opens the instruction of a summary request (the fake server recognises it by this)."""

SUMMARY_HEADER = ("[Summary of the earlier part of this conversation, written when it was compacted "
                  "to fit the context window. The full original is kept in the session.]\n")

SUMMARY_INSTRUCTION = (
    SUMMARY_REQUEST_MARKER + "\n"
    "The conversation above is about to be compacted to fit the context window. Write a summary "
    "that lets you continue the work without it: the user's requests and goals, what was found "
    "(variables, files, figures, numbers), what was decided or changed, errors met and how they "
    "were solved, and what is left to do. Name tool_use ids of results worth reading again. "
    "Plain text, no tool calls."
)


def cleared_text(tool_use_id: str, chars: int) -> str:
    return (f"[Result cleared to save context ({chars:,} characters). The full result is kept in "
            f"this session: call ReadToolOutput with tool_use_id=\"{tool_use_id}\" to read it again.]")


@dataclass(frozen=True)
class Compaction:
    """How the sent view differs from the transcript. Immutable: a new compaction is a new one."""

    boundary: int = 0
    """Index of the first transcript message that is sent as it is (0: no summary)."""
    summary: str | None = None
    cleared: frozenset[str] = frozenset()
    """tool_use ids whose results are sent as a "cleared" line."""
    kept_turns: int = 0
    reason: str = ""
    """``auto``, ``prompt too long``, ``manual``."""
    tokens_before: int = 0
    tokens_after: int = 0
    at: float = field(default_factory=time.time)
    _memo: dict[int, tuple[Any, dict[str, Any]]] = field(default_factory=dict, compare=False, repr=False)

    def to_record(self) -> dict[str, Any]:
        """JSON-ready form (saved sessions)."""
        return {"boundary": self.boundary, "summary": self.summary, "cleared": sorted(self.cleared),
                "kept_turns": self.kept_turns, "reason": self.reason, "tokens_before": self.tokens_before,
                "tokens_after": self.tokens_after, "at": self.at}

    @classmethod
    def from_record(cls, data: Mapping[str, Any]) -> "Compaction":
        return cls(boundary=int(data.get("boundary") or 0), summary=data.get("summary"),
                   cleared=frozenset(data.get("cleared") or ()), kept_turns=int(data.get("kept_turns") or 0),
                   reason=str(data.get("reason") or ""), tokens_before=int(data.get("tokens_before") or 0),
                   tokens_after=int(data.get("tokens_after") or 0), at=float(data.get("at") or 0.0))


def _blocks(message: Mapping[str, Any]) -> list[Any]:
    content = message.get("content")
    return content if isinstance(content, list) else []


def _has_tool_result(message: Mapping[str, Any]) -> bool:
    return any(isinstance(b, dict) and b.get("type") == "tool_result" for b in _blocks(message))


def is_cut_point(messages: Sequence[Mapping[str, Any]], index: int) -> bool:
    if index <= 0 or index >= len(messages):
        return False
    message = messages[index]
    return message.get("role") == "assistant" or (message.get("role") == "user" and not _has_tool_result(message))


def cut_points(messages: Sequence[Mapping[str, Any]]) -> list[int]:
    """Every index the transcript can be cut at without separating a tool_use from its result."""
    return [i for i in range(1, len(messages)) if is_cut_point(messages, i)]


def cut_for_keep(messages: Sequence[Mapping[str, Any]], keep: int, *, start: int = 0) -> int | None:
    """The cut that keeps the last ``keep`` (at least one) assistant turns and the prompt that
    opened the first of them, or None when nothing before it lies past ``start``."""
    keep = max(1, keep)
    assistants = [i for i, m in enumerate(messages) if m.get("role") == "assistant"]
    if len(assistants) <= keep:
        return None
    cut = assistants[-keep]
    if cut - 1 > start and is_cut_point(messages, cut - 1):
        cut -= 1  # the prompt stays with its answer
    return cut if cut > start else None


def clear_candidates(messages: Sequence[Mapping[str, Any]], keep: int, *, start: int = 0,
                     already: frozenset[str] = frozenset()) -> frozenset[str]:
    """Ids of the tool results in ``messages[start:cut]`` (cut keeps the last ``keep`` turns)."""
    assistants = [i for i, m in enumerate(messages) if m.get("role") == "assistant"]
    end = assistants[-keep] if 0 < keep <= len(assistants) else (len(messages) if keep <= 0 else 0)
    found = set(already)
    for message in messages[start:end]:
        for block in _blocks(message):
            if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("tool_use_id"):
                found.add(str(block["tool_use_id"]))
    return frozenset(found)


def _content_chars(content: Any) -> int:
    if isinstance(content, str):
        return len(content)
    total = 0
    for block in content or ():
        if isinstance(block, dict):
            total += len(str(block.get("text") or "")) or len(str(block.get("source") or ""))
    return total


def cleared_result(block: Mapping[str, Any]) -> dict[str, Any]:
    """The tool_result ``block`` with its content replaced by the "cleared" line."""
    tool_use_id = str(block.get("tool_use_id"))
    out: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id,
                           "content": [{"type": "text", "text": cleared_text(tool_use_id, _content_chars(block.get("content")))}]}
    if block.get("is_error"):
        out["is_error"] = True
    return out


def _cleared_message(message: dict[str, Any], cleared: frozenset[str]) -> dict[str, Any]:
    blocks = _blocks(message)
    if not cleared or not any(isinstance(b, dict) and b.get("type") == "tool_result"
                              and b.get("tool_use_id") in cleared for b in blocks):
        return message
    return {**message, "content": [
        cleared_result(b) if isinstance(b, dict) and b.get("type") == "tool_result" and b.get("tool_use_id") in cleared
        else b for b in blocks]}


def summary_message(summary: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": SUMMARY_HEADER + summary}]}


_SUMMARY_SLOT = -1
"""The memo key of the summary message (message indices are never negative)."""


def _memoised_summary(compaction: Compaction) -> dict[str, Any]:
    """The summary message, one object per compaction: a view's messages are the same objects
    from request to request, so the sent prefix is recognised as already normalised and checked."""
    seen = compaction._memo.get(_SUMMARY_SLOT)
    if seen is None or seen[0] != compaction.summary:
        seen = (compaction.summary, summary_message(str(compaction.summary)))
        compaction._memo[_SUMMARY_SLOT] = seen
    return seen[1]


def api_view(messages: Sequence[dict[str, Any]], compaction: Compaction | None) -> list[dict[str, Any]]:
    """The messages to send: the summary, then the transcript from the boundary with cleared
    results replaced. Unchanged messages are the transcript's own objects; changed ones and the
    summary are memoised, so a message is sent as the same object (and bytes) on every request."""
    if compaction is None:
        return list(messages)
    boundary = min(compaction.boundary, len(messages))
    while boundary and boundary < len(messages) and not is_cut_point(messages, boundary):
        boundary += 1  # a transcript rewritten under the compaction (a repair): never split a pair
    memo = compaction._memo
    head = [_memoised_summary(compaction)] if compaction.summary is not None and boundary else []
    tail: list[dict[str, Any]] = []
    for index in range(boundary, len(messages)):
        message = messages[index]
        seen = memo.get(index)
        if seen is not None and seen[0] is message:
            tail.append(seen[1])
            continue
        view = _cleared_message(message, compaction.cleared)
        if view is not message:
            memo[index] = (message, view)
        tail.append(view)
    return head + tail


def summary_request_messages(prefix: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages of the summary request: the part to summarise, then the instruction (merged
    into the last message when that is a user message, so roles still alternate)."""
    instruction = {"type": "text", "text": SUMMARY_INSTRUCTION}
    out = list(prefix)
    if out and out[-1].get("role") == "user":
        last = out[-1]
        content = last.get("content")
        blocks = list(content) if isinstance(content, list) else [{"type": "text", "text": str(content or "")}]
        out[-1] = {**last, "content": [*blocks, instruction]}
    else:
        out.append({"role": "user", "content": [instruction]})
    return out
