"""The Messages API request body, shaped for prompt caching (SPEC §7.1).

The body is the core's wire format: every model plug-in takes exactly this JSON (see
`Model.stream`), so building it is the core's job and needs nothing from a plug-in but the
model's name. What is sent is the transcript as `pairing` normalises and checks it
(incrementally, `pairing.incremental`); this module only shapes it.

The API caches a prompt prefix — tools, then system, then messages — up to a block marked with
``cache_control``, and a later request reads the cache when its prompt starts with the same
content. So every request of a session must reproduce the previous request's prefix exactly:

* tools in the order the caller gives (the caller sorts them: deterministic across turns);
* the system prompt as one text block, identical across the session;
* every message's ``content`` as a list of blocks — a string content is turned into one text
  block in *every* position, not only when it carries a breakpoint, or the same message would
  serialise as ``"hi"`` in one request and ``[{"type": "text", "text": "hi"}]`` in the next;
* breakpoints (``cache_control: {"type": "ephemeral"}``) on the last tool, on the system block
  and on the last content block of the last message. Three of the API's four allowed markers.

Where the breakpoint sits is not content. Request N marks its last message; request N+1 marks a
later one, so the same message appears once with and once without the marker, and the raw
bytes of the two prefixes differ by exactly that key. Keeping old markers instead would run
past the four-marker limit after two turns, and any sliding scheme still moves one. The API
matches the cached prefix on content, ignoring where markers sit, so that is what we keep
stable and what we check: `cache_prefix_view` / `cache_prefix_bytes` serialise a body with
every ``cache_control`` removed, one JSON document per tool / system block / message, so
"request N's prefix is byte-identical in request N+1" is the plain
``next_bytes.startswith(prev_bytes)``.

`build_request_body` never mutates its inputs (messages are the session transcript) and copies
only what it changes: a message whose string content it rewrites, and the one message, content
list and block that get the breakpoint (a shallow copy: only the top-level key is added). Every
other message and block of the body is the caller's object, shared — copying the transcript
for every request would cost time and memory in proportion to the conversation so far. So
neither the body nor the transcript may be mutated in place afterwards.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Iterator

__all__ = [
    "CACHE_CONTROL",
    "build_request_body",
    "cache_prefix_bytes",
    "cache_prefix_view",
    "strip_cache_control",
]

CACHE_CONTROL: dict[str, str] = {"type": "ephemeral"}

# Blocks the API refuses to mark (thinking is cached as part of its turn; empty text is refused).
_UNMARKABLE = frozenset({"thinking", "redacted_thinking"})
_RESERVED = frozenset({"model", "max_tokens", "system", "tools", "messages"})


def _marked(block: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``block`` with a breakpoint; its nested values stay shared (they do not change)."""
    return {**block, "cache_control": dict(CACHE_CONTROL)}


def _can_mark(block: dict[str, Any]) -> bool:
    if block.get("type") in _UNMARKABLE:
        return False
    if block.get("type") == "text" and not block.get("text"):
        return False
    return True


def _as_block_list(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    if isinstance(content, str):
        return {**message, "content": [{"type": "text", "text": content}]}
    return message


def _with_last_message_breakpoint(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = [_as_block_list(m) for m in messages]
    if not out:
        return out
    last = out[-1]
    blocks = list(last.get("content") or [])
    for position in range(len(blocks) - 1, -1, -1):
        if _can_mark(blocks[position]):
            blocks[position] = _marked(blocks[position])
            out[-1] = {**last, "content": blocks}
            break
    return out


def build_request_body(
    *,
    model: str,
    system: str,
    tools: list[dict[str, Any]],
    messages: list[dict[str, Any]],
    max_tokens: int,
    thinking: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A request body with cache breakpoints on tools, system and the last message.

    An empty ``system`` or ``tools`` is left out (the API refuses an empty text block).
    ``extra`` adds other API parameters (``tool_choice``, ``stop_sequences``, ``metadata`` …);
    it cannot replace the ones built here.
    """
    clash = sorted(_RESERVED.intersection(extra or {}))
    if clash:
        raise ValueError(f"extra cannot set {', '.join(clash)}: pass them as arguments")
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens}
    if tools:
        body["tools"] = [*tools[:-1], _marked(tools[-1])]
    if system:
        body["system"] = [{"type": "text", "text": system, "cache_control": dict(CACHE_CONTROL)}]
    body["messages"] = _with_last_message_breakpoint(messages)
    if thinking is not None:
        body["thinking"] = copy.deepcopy(thinking)
    for key, value in (extra or {}).items():
        body[key] = copy.deepcopy(value)
    return body


def strip_cache_control(value: Any) -> Any:
    """A copy of ``value`` with every ``cache_control`` key removed, at any depth."""
    if isinstance(value, dict):
        return {k: strip_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_cache_control(v) for v in value]
    return value


def cache_prefix_view(body: dict[str, Any]) -> Iterator[Any]:
    """The cached parts of a request in prompt order — tools, system, messages — unmarked.

    A string ``system`` or string message content is shown as the one text block the API
    reads it as, so two spellings of the same prompt compare equal.
    """
    for tool in body.get("tools") or []:
        yield strip_cache_control(tool)
    system = body.get("system")
    if isinstance(system, str):
        system = [{"type": "text", "text": system}] if system else []
    for block in system or []:
        yield strip_cache_control(block)
    for message in body.get("messages") or []:
        yield strip_cache_control(_as_block_list(message))


def cache_prefix_bytes(body: dict[str, Any]) -> bytes:
    """`cache_prefix_view` as bytes: one compact JSON document per line.

    Request N's cached prefix is reused by request N+1 when
    ``cache_prefix_bytes(next).startswith(cache_prefix_bytes(prev))``.
    """
    lines = [json.dumps(part, ensure_ascii=False, separators=(",", ":")) for part in cache_prefix_view(body)]
    return "".join(line + "\n" for line in lines).encode("utf-8")
