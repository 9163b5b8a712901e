"""Helpers: an `Agent` on the fake server, and a script whose turns are chosen by conversation.

A sub-agent's requests carry its own transcript, whose first user message is the prompt the
parent gave it; `ByConversation` picks the next turn of the conversation a request belongs to,
so parallel sub-agents are scripted independently of the order their requests arrive in.
"""

from __future__ import annotations

import threading
from typing import Any

from jupyter_toolagent import Agent
from jupyter_toolagent.testing import FakeAnthropicServer

KEY = "sk-ant-api03-" + "Sa7" * 10


def make_agent(server: FakeAnthropicServer, **kw: Any) -> Agent:
    from jupyter_toolagent.models.anthropic import AnthropicModel

    return Agent(AnthropicModel("claude-sonnet-5-5", base_url=server.base_url, api_key=KEY), **kw)


def first_user_text(body: dict[str, Any]) -> str:
    content = body["messages"][0]["content"]
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if b.get("type") == "text"
                   and not b.get("text", "").startswith("<available-deferred-tools>"))  # the names listing


class ByConversation:
    """``{first user text: [turn, turn, …]}``; each request gets its conversation's next turn."""

    def __init__(self, scripts: dict[str, list[Any]]) -> None:
        self.scripts = {k: list(v) for k, v in scripts.items()}
        self.seen: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Any:
        key = first_user_text(body)
        with self._lock:
            self.seen.append((key, body))
            turns = self.scripts[key]
            if not turns:
                raise AssertionError(f"no turn left for conversation {key!r}")
            return turns.pop(0)

    def bodies_of(self, key: str) -> list[dict[str, Any]]:
        return [b for k, b in self.seen if k == key]


def tool_results(messages: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {b["tool_use_id"]: b for m in messages if m["role"] == "user" and isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_result"}


def result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "".join(c.get("text", "") for c in content or [] if c.get("type") == "text")
