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
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from .pairing_check import THINKING_TYPES, TOOL_RESULT, TOOL_USE, content_blocks

__all__ = ["ERROR_RESULT_STRIPPED_NOTE", "UI_ONLY_BLOCK_TYPES", "normalize_messages_for_api"]

UI_ONLY_BLOCK_TYPES = frozenset({"progress", "system_note"})
UI_ONLY_KEY = "ui_only"
ERROR_RESULT_STRIPPED_NOTE = (
    "(The non-text output of this failed tool call was removed: error results may only "
    "contain text.)"
)


def _is_ui_only(item: Mapping[str, Any]) -> bool:
    return item.get(UI_ONLY_KEY) is True or item.get("type") in UI_ONLY_BLOCK_TYPES


def _api_keys(item: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy without private (``_``-prefixed) keys and the UI marker.

    Only the top level is cleaned: nested values such as a tool's ``input`` are the model's
    or the user's data, where a leading underscore is legitimate.
    """
    return {
        key: copy.deepcopy(value)
        for key, value in item.items()
        if not (isinstance(key, str) and key.startswith("_")) and key != UI_ONLY_KEY
    }


def _normalize_result_content(content: Any, is_error: bool) -> Any:
    if not isinstance(content, (list, tuple)):
        return copy.deepcopy(content)
    kept = [
        _api_keys(item) if isinstance(item, Mapping) else copy.deepcopy(item)
        for item in content
        if not (isinstance(item, Mapping) and _is_ui_only(item))
    ]
    if not is_error:
        return kept
    text_only = [item for item in kept if isinstance(item, Mapping) and item.get("type") == "text"]
    if kept and not text_only:
        return [{"type": "text", "text": ERROR_RESULT_STRIPPED_NOTE}]
    return text_only


def _normalize_block(block: Mapping[str, Any], aliases: Mapping[str, str]) -> dict[str, Any]:
    if block.get("type") in THINKING_TYPES:
        return copy.deepcopy(dict(block))
    clean = _api_keys(block)
    if clean.get("type") == TOOL_USE and clean.get("name") in aliases:
        clean["name"] = aliases[clean["name"]]
    elif clean.get("type") == TOOL_RESULT and "content" in clean:
        clean["content"] = _normalize_result_content(block["content"], clean.get("is_error") is True)
    return clean


def _normalize_message(
    message: Mapping[str, Any], index: int, aliases: Mapping[str, str]
) -> dict[str, Any] | None:
    """The API form of one message, or ``None`` when nothing of it is for the model."""
    if isinstance(message, Mapping) and message.get(UI_ONLY_KEY) is True:
        return None
    checked_blocks = content_blocks(message, index)  # raises on a malformed message
    content = message.get("content")
    result = _api_keys({key: value for key, value in message.items() if key != "content"})
    if isinstance(content, str):
        result["content"] = content
        return result if content else None
    blocks = [
        _normalize_block(block, aliases)
        for block in checked_blocks
        if block.get("type") in THINKING_TYPES or not _is_ui_only(block)
    ]
    result["content"] = blocks
    return result if blocks else None


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
    alias_map: Mapping[str, str] = aliases or {}
    normalized: list[dict[str, Any]] = []
    group: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        api_message = _normalize_message(message, index, alias_map)
        if api_message is None:
            continue
        if group and group[-1].get("role") != api_message.get("role"):
            normalized.append(group[0] if len(group) == 1 else _merge(group))
            group = []
        group.append(api_message)
    if group:
        normalized.append(group[0] if len(group) == 1 else _merge(group))
    return normalized
