"""The request checks of the fake server, answered with the API's own 400 texts.

The fake server is only useful if it refuses what the API refuses, with the same words: a
client that passes against it must not meet a new 400 in production. These are the checks
whose texts were observed (Appendix A for pairing, the rest from API responses):

* ``max_tokens: Field required`` (and the same for ``model`` and ``messages``);
* ``tools: Tool names must be unique.``;
* ``A maximum of 4 blocks with cache_control may be provided. Found N.``;
* ``messages: text content blocks must be non-empty`` /
  ``messages: text content blocks must contain non-whitespace text`` (``system:`` likewise);
* ``messages.N: all messages must have non-empty content except for the optional final
  assistant message``;
* tool_use / tool_result pairing: `jupyter_toolagent.core.pairing.check_pairing`, whose first
  violation is what the API reports.

The API reports one problem per request; so does `request_error`, the first one in the order
above.
"""

from __future__ import annotations

from typing import Any, Iterator

from ..core.pairing import check_pairing

__all__ = ["MAX_CACHE_BREAKPOINTS", "request_error"]

MAX_CACHE_BREAKPOINTS = 4


def _cache_controls(value: Any) -> Iterator[None]:
    if isinstance(value, dict):
        if value.get("cache_control") is not None:
            yield None
        for key, item in value.items():
            if key != "cache_control":
                yield from _cache_controls(item)
    elif isinstance(value, list):
        for item in value:
            yield from _cache_controls(item)


def _text_blocks(value: Any) -> Iterator[dict[str, Any]]:
    """Every text block, including those inside tool results."""
    if isinstance(value, dict):
        if value.get("type") == "text":
            yield value
        content = value.get("content")
        if isinstance(content, list):
            for item in content:
                yield from _text_blocks(item)
    elif isinstance(value, list):
        for item in value:
            yield from _text_blocks(item)


def _text_problem(where: str, blocks: Any) -> str | None:
    for block in _text_blocks(blocks):
        text = block.get("text")
        if not isinstance(text, str) or text == "":
            return f"{where}: text content blocks must be non-empty"
        if not text.strip():
            return f"{where}: text content blocks must contain non-whitespace text"
    return None


def _empty_message(messages: list[Any]) -> str | None:
    for index, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        is_final_assistant = index == len(messages) - 1 and isinstance(message, dict) and message.get("role") == "assistant"
        if content in ("", []) and not is_final_assistant:
            return (
                f"messages.{index}: all messages must have non-empty content except for the optional "
                "final assistant message"
            )
    return None


def request_error(body: Any, *, count_tokens: bool = False) -> str | None:
    """The API's 400 message for ``body``, or None when the API would accept it.

    ``count_tokens`` checks a ``/v1/messages/count_tokens`` body (no ``max_tokens`` needed).
    """
    if not isinstance(body, dict):
        return "Request body must be a JSON object"
    required = ("model", "messages") if count_tokens else ("model", "messages", "max_tokens")
    for name in required:
        if name not in body:
            return f"{name}: Field required"
    messages = body["messages"]
    if not isinstance(messages, list):
        return "messages: Input should be a valid list"
    tools = body.get("tools") or []
    names = [tool.get("name") for tool in tools if isinstance(tool, dict)]
    if len(names) != len(set(names)):
        return "tools: Tool names must be unique."
    markers = sum(1 for _ in _cache_controls([tools, body.get("system"), messages]))
    if markers > MAX_CACHE_BREAKPOINTS:
        return f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found {markers}."
    system = body.get("system")
    if isinstance(system, list):
        problem = _text_problem("system", system)
        if problem:
            return problem
    problem = _empty_message(messages) or _text_problem("messages", [
        m.get("content") for m in messages if isinstance(m, dict) and isinstance(m.get("content"), list)
    ])
    if problem:
        return problem
    try:
        violations = check_pairing(messages)
    except TypeError as exc:
        return f"messages: {exc}"
    return violations[0].message if violations else None
