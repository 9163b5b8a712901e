"""Turning what a tool returned into the one `tool_result` block the model receives.

Three rules from SPEC §3 stage 9 live here: content mapping (text, images, JSON), the
empty-output text, and the size budget — output over the budget is kept whole in the session
(`ToolOutputStore`, readable by the `ReadToolOutput` tool) and replaced by a preview that says
where the rest is, so nothing is lost and the context is not flooded.
"""

from __future__ import annotations

import base64
import json
import threading
from typing import Any, Callable

IMAGE_SIGNATURES = {
    b"\x89PNG\r\n\x1a\n": "image/png",
    b"\xff\xd8\xff": "image/jpeg",
    b"GIF87a": "image/gif",
    b"GIF89a": "image/gif",
}


def _cut_from_the_middle(cut: int) -> str:
    return f"\n[... {cut:,} characters cut from the middle ...]\n"


def truncate_middle(
    text: str, limit: int, *, note: Callable[[int], str] = _cut_from_the_middle, note_in_limit: bool = True
) -> str:
    """Keep the head and tail of ``text`` within ``limit`` characters and say how much was cut.

    Exceptions and logs carry the cause at the end and the context at the start, so both ends
    are worth more than the middle. ``note`` writes the marker from the number of characters
    cut, which is exactly what is missing. With ``note_in_limit`` (a budget for the model's
    context, a hard bound) the marker's own length is paid from ``limit``; without it (a
    preview for people, where ``limit`` is how much of the text to show) only the text counts.
    """
    if len(text) <= limit:
        return text
    keep = max(limit - len(note(len(text))), 0) if note_in_limit else limit
    head = keep // 2
    tail = keep - head
    return text[:head] + note(len(text) - keep) + (text[-tail:] if tail else "")


def image_block(data: bytes, media_type: str) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": media_type, "data": base64.b64encode(data).decode("ascii")},
    }


def sniff_image(data: bytes) -> str | None:
    for sig, media in IMAGE_SIGNATURES.items():
        if data.startswith(sig):
            return media
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _is_block_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(
        isinstance(b, dict) and b.get("type") in {"text", "image", "document", "search_result"} for b in value
    )


def to_content(output: Any) -> str | list[dict[str, Any]]:
    """Default mapping of a tool's return value to API content."""
    if output is None:
        return ""
    if isinstance(output, str):
        return output
    if _is_block_list(output):
        return list(output)
    if isinstance(output, (bytes, bytearray)):
        media = sniff_image(bytes(output))
        if media:
            return [image_block(bytes(output), media)]
        return f"<{len(output):,} bytes of binary data>"
    try:
        return json.dumps(output, ensure_ascii=False, default=_json_fallback)
    except (TypeError, ValueError):
        return truncate_middle(repr(output), 10_000)


def _json_fallback(value: Any) -> Any:
    return truncate_middle(repr(value), 2_000)


def content_text_length(content: str | list[dict[str, Any]]) -> int:
    if isinstance(content, str):
        return len(content)
    return sum(len(b.get("text", "")) for b in content if b.get("type") == "text")


class ToolOutputStore:
    """Full outputs of results that were cut, by tool_use id. Thread-safe, session-scoped."""

    def __init__(self) -> None:
        self._data: dict[str, str] = {}
        self._lock = threading.Lock()

    def put(self, tool_use_id: str, text: str) -> None:
        with self._lock:
            self._data[tool_use_id] = text

    def get(self, tool_use_id: str) -> str | None:
        with self._lock:
            return self._data.get(tool_use_id)

    def __contains__(self, tool_use_id: object) -> bool:
        with self._lock:
            return tool_use_id in self._data

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)


def _preview(text: str, budget: int, tool_use_id: str, store: ToolOutputStore | None) -> str:
    if store is not None:
        store.put(tool_use_id, text)
        where = (
            f"The full output is kept in this session: call ReadToolOutput with "
            f'tool_use_id="{tool_use_id}" and offset={budget} to read the rest.'
        )
    else:
        where = "The rest was not kept."
    note = f"\n\n[Output cut: {len(text):,} characters in total, the first {budget:,} are shown. {where}]"
    return text[:budget] + note


def package_result(
    *,
    tool_use_id: str,
    tool_name: str,
    content: str | list[dict[str, Any]],
    is_error: bool,
    budget: int,
    store: ToolOutputStore | None,
) -> dict[str, Any]:
    """Build the `tool_result` block: empty-output text, size budget, error flag."""
    if isinstance(content, list):
        blocks = [b for b in content if not (b.get("type") == "text" and not b.get("text"))]
        if not blocks:
            content = ""
        else:
            total = content_text_length(blocks)
            if total > budget:
                text = "\n".join(b["text"] for b in blocks if b.get("type") == "text")
                others = [b for b in blocks if b.get("type") != "text"]
                blocks = [{"type": "text", "text": _preview(text, budget, tool_use_id, store)}, *others]
            content = blocks
    if isinstance(content, str):
        if not content.strip():
            content = f"({tool_name} completed with no output)"
        elif len(content) > budget:
            content = _preview(content, budget, tool_use_id, store)
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block


def error_result(tool_use_id: str, text: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": text, "is_error": True}


def enforce_message_budget(
    results: list[dict[str, Any]], budget: int, store: ToolOutputStore | None
) -> list[dict[str, Any]]:
    """Keep one user message of results under ``budget`` characters: the largest results are
    cut to previews first (their full text goes to the store), in place of dropping any."""
    sizes = [content_text_length(r["content"]) for r in results]
    total = sum(sizes)
    if total <= budget:
        return results
    out = list(results)
    note_room = 400  # the preview's note about where the rest is
    for i in sorted(range(len(out)), key=lambda i: sizes[i], reverse=True):
        if total <= budget:
            break
        r = out[i]
        content = r["content"]
        text = content if isinstance(content, str) else "\n".join(
            b.get("text", "") for b in content if b.get("type") == "text"
        )
        share = max(budget // max(len(out), 1) - note_room, 1_000)
        if len(text) <= share + note_room:
            continue
        # A result already cut to its own budget keeps its full text in the store: preview from
        # that, never overwrite it with the shorter preview.
        full = (store.get(r["tool_use_id"]) if store is not None else None) or text
        new = dict(r)
        preview = _preview(full, share, r["tool_use_id"], store)
        if isinstance(content, str):
            new["content"] = preview
        else:
            new["content"] = [{"type": "text", "text": preview}, *[b for b in content if b.get("type") != "text"]]
        total -= sizes[i] - len(preview)
        out[i] = new
    return out
