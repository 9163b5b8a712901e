"""A complete assistant message, replayed as the raw SSE events the Messages API sends.

The scripted model and the fake server both stream hand-written turns; they must look exactly
like the API's stream or the code under test would be tested against a friendlier world than
production. So this module reproduces the API's habits, not just its schema:

* ``message_start`` carries the message with empty ``content``, ``stop_reason: null`` and the
  input-side usage (the output count there is a small placeholder, as in the API);
* each block opens with an *empty* shell — ``text: ""``, ``input: {}``, ``thinking: ""`` +
  ``signature: ""`` — and is filled by deltas; a ``tool_use`` block's first
  ``input_json_delta`` has an empty ``partial_json``, as the API's does;
* ``partial_json`` chunks split the JSON text anywhere, including inside strings and escapes,
  so a consumer cannot assume a chunk boundary is a token boundary;
* a ``ping`` follows the first ``content_block_start`` (transport keep-alive; the SDK drops it);
* ``message_delta`` carries ``stop_reason``, ``stop_sequence`` and the final ``output_tokens``.

Blocks that the API sends whole (``redacted_thinking``, server tool results, anything unknown)
are sent whole in ``content_block_start`` with no deltas.
"""

from __future__ import annotations

import copy
import json
import secrets
import string
from typing import Any, Iterable

__all__ = [
    "estimate_tokens",
    "events_without_pings",
    "message_stream_events",
    "new_message_id",
    "new_request_id",
    "new_tool_use_id",
]

_ID_ALPHABET = string.ascii_letters + string.digits
_STREAMED_INPUT_BLOCKS = frozenset({"tool_use", "server_tool_use"})


def _random_suffix(length: int) -> str:
    return "".join(secrets.choice(_ID_ALPHABET) for _ in range(length))


def new_message_id() -> str:
    """An id shaped like the API's (``msg_01`` + 22 characters)."""
    return "msg_01" + _random_suffix(22)


def new_tool_use_id() -> str:
    """An id shaped like the API's (``toolu_01`` + 22 characters)."""
    return "toolu_01" + _random_suffix(22)


def new_request_id() -> str:
    """A request id shaped like the API's ``request-id`` header (``req_011C`` + 20 characters)."""
    return "req_011C" + _random_suffix(20)


def estimate_tokens(value: Any) -> int:
    """A rough token count (about four characters per token) of text or JSON-able data.

    Good enough for a scripted turn's usage line and the fake server's ``count_tokens``; never
    used for anything that must be exact.
    """
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return max(1, (len(text) + 3) // 4)


def _chunks(text: str, size: int) -> list[str]:
    if size <= 0:
        raise ValueError("chunk size must be positive")
    return [text[i : i + size] for i in range(0, len(text), size)]


def _usage_start(usage: dict[str, Any]) -> dict[str, Any]:
    start = {
        "input_tokens": int(usage.get("input_tokens", 0)),
        "cache_creation_input_tokens": int(usage.get("cache_creation_input_tokens", 0)),
        "cache_read_input_tokens": int(usage.get("cache_read_input_tokens", 0)),
        # The API reports a small provisional output count at message_start.
        "output_tokens": min(1, int(usage.get("output_tokens", 0))),
    }
    for key, value in usage.items():
        if key not in start and key != "output_tokens":
            start[key] = copy.deepcopy(value)
    return start


def _block_events(
    index: int, block: dict[str, Any], *, text_chunk: int, json_chunk: int
) -> list[dict[str, Any]]:
    kind = block.get("type")
    if kind == "text":
        shell = {k: copy.deepcopy(v) for k, v in block.items() if k not in ("text", "citations")}
        shell["text"] = ""
        deltas = [{"type": "text_delta", "text": piece} for piece in _chunks(block["text"], text_chunk)]
        if block.get("citations"):
            shell["citations"] = []
            deltas += [{"type": "citations_delta", "citation": copy.deepcopy(c)} for c in block["citations"]]
    elif kind in _STREAMED_INPUT_BLOCKS:
        shell = {k: copy.deepcopy(v) for k, v in block.items() if k != "input"}
        shell["input"] = {}
        raw = json.dumps(block.get("input", {}), ensure_ascii=False)
        deltas = [{"type": "input_json_delta", "partial_json": ""}]
        deltas += [{"type": "input_json_delta", "partial_json": p} for p in _chunks(raw, json_chunk)]
    elif kind == "thinking":
        shell = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [
            {"type": "thinking_delta", "thinking": piece}
            for piece in _chunks(block.get("thinking", ""), text_chunk)
        ]
        deltas.append({"type": "signature_delta", "signature": block.get("signature", "")})
    else:
        shell, deltas = copy.deepcopy(block), []
    events: list[dict[str, Any]] = [{"type": "content_block_start", "index": index, "content_block": shell}]
    events += [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas]
    events.append({"type": "content_block_stop", "index": index})
    return events


def message_stream_events(
    message: dict[str, Any],
    *,
    text_chunk: int = 24,
    json_chunk: int = 16,
    pings: bool = True,
) -> list[dict[str, Any]]:
    """The raw stream events, in order, that the API would send for ``message``.

    ``message`` is a complete assistant message in API format (``id``, ``model``, ``content``,
    ``stop_reason``, ``usage``, optionally ``stop_sequence``); it is not modified. Missing
    ``usage`` is estimated. ``pings=False`` leaves out the keep-alive pings — what a consumer
    sees after the SDK has dropped them.
    """
    content = list(message.get("content") or [])
    usage = dict(message.get("usage") or {})
    usage.setdefault("output_tokens", estimate_tokens(content) if content else 1)
    start_message = {
        "id": message.get("id") or new_message_id(),
        "type": "message",
        "role": "assistant",
        "model": message.get("model", ""),
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": _usage_start(usage),
    }
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start_message}]
    for index, block in enumerate(content):
        events += _block_events(index, block, text_chunk=text_chunk, json_chunk=json_chunk)
        if pings and index == 0:
            events.insert(2, {"type": "ping"})
    if pings and not content:
        events.append({"type": "ping"})
    events.append(
        {
            "type": "message_delta",
            "delta": {
                "stop_reason": message.get("stop_reason"),
                "stop_sequence": message.get("stop_sequence"),
            },
            "usage": {"output_tokens": int(usage["output_tokens"])},
        }
    )
    events.append({"type": "message_stop"})
    return events


def events_without_pings(events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """``events`` minus keep-alive pings (what the SDK hands on)."""
    return [e for e in events if e.get("type") != "ping"]
