"""Turn the session's transcript into the exact message list the API is sent (SPEC §6).

The session keeps more than the model may see: progress lines and notes shown only to the
person, private bookkeeping keys (``_started_at`` …), tool names as the model spelled them
(aliases). Sending any of that would either leak UI-only text to the model, change the
request prefix from one request to the next (breaking prompt caching), or be rejected by the
API. Normalising in one pure function keeps the stored transcript faithful to what happened
while every request is built the same way.

Thinking blocks are the exception to every rule here: the API verifies their signatures, so
they go out exactly as they came in (same keys, same order), even if they carry keys this
module would otherwise remove.

Nothing is copied that does not change. A message or block that needs no cleaning is the very
object of the transcript; a cleaned one is a new dict whose untouched values are still shared.
Copying the whole transcript for every request made each request cost time and memory in
proportion to the conversation so far (quadratic over a session). The price of sharing is a
rule: nobody mutates a transcript block, or a block of a built request, in place — code that
changes one builds a new dict (`build_request_body` copies the block it marks, repair copies
what it fixes, hooks get a copy of a tool's input).
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import Any

from .check import THINKING_TYPES, TOOL_RESULT, TOOL_USE, content_blocks

__all__ = ["ERROR_RESULT_STRIPPED_NOTE", "UI_ONLY_BLOCK_TYPES", "normalize_from", "normalize_messages_for_api"]

UI_ONLY_BLOCK_TYPES = frozenset({"progress", "system_note"})
UI_ONLY_KEY = "ui_only"
ERROR_RESULT_STRIPPED_NOTE = (
    "(The non-text output of this failed tool call was removed: error results may only "
    "contain text.)"
)


def _is_ui_only(item: Mapping[str, Any]) -> bool:
    return item.get(UI_ONLY_KEY) is True or item.get("type") in UI_ONLY_BLOCK_TYPES


def _is_api_key(key: Any) -> bool:
    return not (isinstance(key, str) and (key.startswith("_") or key == UI_ONLY_KEY))


def _api_keys(item: Mapping[str, Any]) -> dict[str, Any]:
    """``item`` without private (``_``-prefixed) keys and the UI marker; ``item`` itself when it
    has none of them (and is a dict).

    Only the top level is cleaned: nested values such as a tool's ``input`` are the model's
    or the user's data, where a leading underscore is legitimate. They are shared, not copied.
    """
    if isinstance(item, dict):
        for key in item:  # a plain loop: this runs for every message and block of every request
            if not _is_api_key(key):
                break
        else:
            return item
    return {key: value for key, value in item.items() if _is_api_key(key)}


def _normalize_result_content(content: Any, is_error: bool) -> Any:
    """The content of a tool_result as sent; ``content`` itself when nothing changes."""
    if not isinstance(content, (list, tuple)):
        return content
    kept = [
        _api_keys(item) if isinstance(item, Mapping) else item
        for item in content
        if not (isinstance(item, Mapping) and _is_ui_only(item))
    ]
    if is_error:
        text_only = [item for item in kept if isinstance(item, Mapping) and item.get("type") == "text"]
        if kept and not text_only:
            return [{"type": "text", "text": ERROR_RESULT_STRIPPED_NOTE}]
        kept = text_only
    return content if _same_items(content, kept) else kept


def _same_items(original: Any, new: list[Any]) -> bool:
    """True when ``new`` holds exactly the objects of ``original``, a list (nothing to copy)."""
    return isinstance(original, list) and len(original) == len(new) and all(map(operator.is_, original, new))


def _normalize_block(block: Mapping[str, Any], aliases: Mapping[str, str]) -> Mapping[str, Any]:
    if block.get("type") in THINKING_TYPES:
        return block if isinstance(block, dict) else dict(block)
    clean = _api_keys(block)
    if clean.get("type") == TOOL_USE and clean.get("name") in aliases:
        canonical = aliases[clean["name"]]
        if canonical != clean["name"]:
            clean = {**clean, "name": canonical}
    elif clean.get("type") == TOOL_RESULT and "content" in clean:
        content = _normalize_result_content(clean["content"], clean.get("is_error") is True)
        if content is not clean["content"]:
            clean = {**clean, "content": content}
    return clean


def _normalize_message(
    message: Mapping[str, Any], index: int, aliases: Mapping[str, str]
) -> dict[str, Any] | None:
    """The API form of one message, or ``None`` when nothing of it is for the model."""
    if isinstance(message, Mapping) and message.get(UI_ONLY_KEY) is True:
        return None
    checked_blocks = content_blocks(message, index)  # raises on a malformed message
    content = message.get("content")
    clean = _api_keys(message)
    if isinstance(content, str):
        return clean if content else None
    blocks = [
        _normalize_block(block, aliases)
        for block in checked_blocks
        if block.get("type") in THINKING_TYPES or not _is_ui_only(block)
    ]
    if not blocks:
        return None
    if clean is message and _same_items(content, blocks):
        return clean
    return {**clean, "content": blocks}


def _merge(group: list[dict[str, Any]]) -> dict[str, Any]:
    """One message from consecutive messages of the same role.

    For user messages the tool_result blocks go first (in their original order) because the
    API only counts results at the start of the message; everything else follows in order.
    """
    blocks: list[dict[str, Any]] = []
    for message in group:
        content = message["content"]
        blocks.extend([{"type": "text", "text": content}] if isinstance(content, str) else content)
    if group[0].get("role") == "user":
        results = [b for b in blocks if b.get("type") == TOOL_RESULT]
        blocks = results + [b for b in blocks if b.get("type") != TOOL_RESULT]
    merged = dict(group[0])
    merged["content"] = blocks
    return merged


def normalize_messages_for_api(
    messages: Sequence[Mapping[str, Any]], *, aliases: Mapping[str, str] | None = None
) -> list[dict[str, Any]]:
    """A new message list as the API should receive it; the input is left untouched.

    Messages and blocks that need no change are shared with the input, not copied (see the
    module docstring): treat both the input and the result as read-only.

    - drops UI-only items: messages or blocks marked ``"ui_only": True`` and blocks of type
      ``progress`` / ``system_note`` (also inside tool_result content); messages left empty
      are dropped;
    - merges consecutive messages of the same role; a merged user message has all its
      tool_result blocks first, then the other blocks (a single message is not reordered:
      results placed after text are a pairing bug that `check_pairing` should report and
      `repair_pairing` fix explicitly);
    - maps tool_use ``name`` through ``aliases`` (alias -> canonical name);
    - keeps only text in the content of ``is_error`` tool results (a note replaces content
      that had nothing but non-text blocks);
    - removes top-level keys starting with ``_`` (and the ``ui_only`` marker) from messages,
      blocks and tool_result content blocks;
    - passes thinking / redacted_thinking blocks through unchanged.
    """
    return normalize_from(messages, 0, aliases or {})[0]


def normalize_from(
    messages: Sequence[Mapping[str, Any]], start: int, aliases: Mapping[str, str]
) -> tuple[list[dict[str, Any]], int]:
    """`normalize_messages_for_api` of ``messages[start:]`` (indices in errors stay those of
    ``messages``), and where the last message it returns began: the index in ``messages`` of
    the first message merged into it (``len(messages)`` when nothing is returned).

    That index is where an incremental caller restarts when messages are appended: every
    message returned before the last one is final (the next message had another role), while
    the last one may still absorb appended messages of its role (`incremental`).
    """
    normalized: list[dict[str, Any]] = []
    group: list[dict[str, Any]] = []
    group_start = len(messages)
    for index in range(start, len(messages)):
        api_message = _normalize_message(messages[index], index, aliases)
        if api_message is None:
            continue
        if group and group[-1].get("role") != api_message.get("role"):
            normalized.append(group[0] if len(group) == 1 else _merge(group))
            group = []
        if not group:
            group_start = index
        group.append(api_message)
    if group:
        normalized.append(group[0] if len(group) == 1 else _merge(group))
    return normalized, group_start
