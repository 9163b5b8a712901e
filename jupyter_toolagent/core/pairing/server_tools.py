"""The API's rule for server tools: a use and its result live in one assistant message (SPEC §6).

A server tool (web search, code execution, web fetch …) runs on the
API's side: the model's ``server_tool_use`` block and the API's result block
(``web_search_tool_result``, ``code_execution_tool_result``, … — any ``*_tool_result`` type) both arrive in the same assistant message. A use
kept without its result — a stream cut right after the ``server_tool_use`` — makes the API
reject every later request with::

    messages.1: web_search tool use was found without a corresponding web_search_tool_result block

Two cases are not violations, because the API itself produces and accepts them:

* programmatic tool calling: a ``code_execution`` use that called client tools (their
  ``tool_use`` blocks name it in ``caller.tool_id``) is suspended until their results come
  back; its result block arrives in a later assistant message;
* the last message of the transcript: a turn the API paused (``pause_turn``) is sent back as it
  is, unfinished use included, so the model can go on with it.

Standard library only, like the other ``pairing_*`` modules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["SERVER_TOOL_USE_TYPES", "is_server_tool_result", "server_tool_text", "unpaired_server_tool_uses"]

SERVER_TOOL_USE_TYPES = frozenset({"server_tool_use"})
CLIENT_TOOL_RESULT = "tool_result"


def is_server_tool_result(block: Mapping[str, Any]) -> bool:
    """Whether ``block`` is the API's result of a server tool (not a client ``tool_result``)."""
    kind = block.get("type")
    return isinstance(kind, str) and kind != CLIENT_TOOL_RESULT and kind.endswith("_tool_result")


def unpaired_server_tool_uses(blocks: Sequence[Mapping[str, Any]]) -> list[int]:
    """Positions of server tool uses in one assistant message that have no result block in it
    (and were not suspended by the client tools they called)."""
    answered = {b.get("tool_use_id") for b in blocks if is_server_tool_result(b)}
    called_from = {
        caller.get("tool_id")
        for b in blocks
        if b.get("type") == "tool_use" and isinstance(caller := b.get("caller"), Mapping)
    }
    return [
        k for k, b in enumerate(blocks)
        if b.get("type") in SERVER_TOOL_USE_TYPES and b.get("id") not in answered and b.get("id") not in called_from
    ]


def server_tool_text(n: int, block: Mapping[str, Any]) -> str:
    """The API's 400 text for an unpaired server tool use at message ``n``."""
    name = block.get("name") or "server"
    return f"messages.{n}: {name} tool use was found without a corresponding {name}_tool_result block"
