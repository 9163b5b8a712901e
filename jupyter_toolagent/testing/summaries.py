"""The fake server's side of compaction: a small context window and the summarising turn.

The window is counted deterministically — characters of the request body's JSON over four
(`models.stream_events.estimate_tokens`, the same count as the ``usage.input_tokens`` the
server reports) — so a test knows exactly which request passes it. Past it the server answers
as the API does: HTTP 400 ``invalid_request_error`` with ``prompt is too long: N tokens > M
maximum``.

A summary request (the core's compaction instruction, recognised by
`core.compaction.SUMMARY_REQUEST_MARKER` in the last user message) is answered with a short
deterministic summary made from the conversation itself, without using up a scripted turn.
"""

from __future__ import annotations

from typing import Any

from ..core.compaction import SUMMARY_HEADER, SUMMARY_REQUEST_MARKER
from ..models.stream_events import estimate_tokens

__all__ = ["body_tokens", "is_summary_request", "prompt_too_long_message", "summary_text"]

SUMMARY_LIMIT = 600


def body_tokens(body: Any) -> int:
    """The server's token count of a request (characters of the JSON body / 4)."""
    return estimate_tokens(body)


def prompt_too_long_message(tokens: int, maximum: int) -> str:
    return f"prompt is too long: {tokens} tokens > {maximum} maximum"


def _blocks(message: Any) -> list[Any]:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else []


def is_summary_request(body: Any) -> bool:
    messages = body.get("messages") if isinstance(body, dict) else None
    if not messages:
        return False
    return any(b.get("type") == "text" and SUMMARY_REQUEST_MARKER in str(b.get("text", ""))
               for b in _blocks(messages[-1]) if isinstance(b, dict))


def summary_text(body: dict[str, Any]) -> str:
    """What the summarising turn says: the prompts asked, the tools used, how much was read."""
    prompts: list[str] = []
    tools: dict[str, int] = {}
    earlier = 0
    for message in body.get("messages") or []:
        for block in _blocks(message):
            if not isinstance(block, dict):
                continue
            text = str(block.get("text", ""))
            if block.get("type") == "tool_use":
                tools[str(block.get("name"))] = tools.get(str(block.get("name")), 0) + 1
            elif message.get("role") == "user" and block.get("type") == "text":
                if text.startswith(SUMMARY_HEADER):
                    earlier += 1
                elif SUMMARY_REQUEST_MARKER not in text:
                    prompts.append(" ".join(text.split())[:80])
    used = ", ".join(f"{name} ×{count}" for name, count in sorted(tools.items())) or "none"
    text = (f"Summary ({len(body.get('messages') or [])} messages"
            f"{', including an earlier summary' if earlier else ''}). The user asked: "
            f"{' | '.join(prompts[-3:]) or 'nothing new'}. Tools used: {used}.")
    return text[:SUMMARY_LIMIT]
