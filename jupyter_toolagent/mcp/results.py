"""An MCP result as API content (SPEC §11): text, images, resources, structured content.

* text → text blocks; images → base64 image blocks (the API's image types only; others are
  described in a line);
* an embedded resource → its text, or an image block for an image blob, or a line saying what
  the blob is; a resource link → a line with its URI (the model can read it with
  ``ReadMcpResource``);
* ``structuredContent`` with no content → its JSON as text;
* ``isError`` → the result is an error result.

The core then applies the size budget and the secret scrubber, as for every tool.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

API_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


def map_call_result(result: Any) -> tuple[list[dict[str, Any]] | str, bool]:
    """``(content, is_error)`` for a `CallToolResult`."""
    blocks: list[dict[str, Any]] = []
    for item in result.content or []:
        blocks.extend(_content_block(item))
    structured = getattr(result, "structured_content", None)
    if not blocks and structured is not None:
        blocks.append({"type": "text", "text": json.dumps(structured, ensure_ascii=False, indent=1)})
    return _merge_text(blocks), bool(result.is_error)


def map_resource_contents(contents: list[Any]) -> list[dict[str, Any]] | str:
    """The contents of ``resources/read`` as API content."""
    blocks: list[dict[str, Any]] = []
    for item in contents:
        blocks.extend(_resource_contents(item))
    return _merge_text(blocks)


def _content_block(item: Any) -> list[dict[str, Any]]:
    kind = getattr(item, "type", None)
    if kind == "text":
        return [{"type": "text", "text": item.text}]
    if kind == "image":
        return [_image(item.data, item.mime_type, "image")]
    if kind == "audio":
        return [{"type": "text", "text": f"[audio result ({item.mime_type}, {_b64_size(item.data):,} bytes) "
                                         "not shown: the model cannot receive audio]"}]
    if kind == "resource":
        return _resource_contents(item.resource)
    if kind == "resource_link":
        name = getattr(item, "name", "") or ""
        described = f" — {item.description}" if getattr(item, "description", None) else ""
        return [{"type": "text", "text": f"[resource link] {item.uri} {name}{described}".rstrip()}]
    dumped = item.model_dump(mode="json", by_alias=True, exclude_none=True) if hasattr(item, "model_dump") else item
    return [{"type": "text", "text": json.dumps(dumped, ensure_ascii=False, default=repr)}]


def _resource_contents(item: Any) -> list[dict[str, Any]]:
    uri = str(getattr(item, "uri", ""))
    mime = getattr(item, "mime_type", None) or ""
    text = getattr(item, "text", None)
    if text is not None:
        return [{"type": "text", "text": f"[resource {uri}]\n{text}" if uri else text}]
    blob = getattr(item, "blob", None)
    if blob is not None:
        if mime in API_IMAGE_TYPES:
            return [_image(blob, mime, f"resource {uri}")]
        return [{"type": "text", "text": f"[resource {uri}: {_b64_size(blob):,} bytes of {mime or 'binary data'}, "
                                         "not shown]"}]
    return [{"type": "text", "text": f"[resource {uri}: empty]"}]


def _image(data: str, mime: str, what: str) -> dict[str, Any]:
    if mime not in API_IMAGE_TYPES:
        return {"type": "text", "text": f"[{what}: {_b64_size(data):,} bytes of {mime}, not an image type "
                                        "the model can see]"}
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return {"type": "text", "text": f"[{what}: the server sent image data that is not valid base64]"}
    return {"type": "image", "source": {"type": "base64", "media_type": mime, "data": data}}


def _b64_size(data: str) -> int:
    return len(data) * 3 // 4


def _merge_text(blocks: list[dict[str, Any]]) -> list[dict[str, Any]] | str:
    """Only text: one string (the way built-ins answer); with images: the block list."""
    if all(b["type"] == "text" for b in blocks):
        return "\n".join(b["text"] for b in blocks)
    return blocks
