"""Reading a transcript's tool blocks in tests: every suite that runs tools asks the same
questions of ``session.messages`` (which tool_use blocks, which result for which id, its text)."""

from __future__ import annotations

from typing import Any, Sequence


def tool_uses(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [b for m in messages if m["role"] == "assistant" and isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_use"]


def tool_results(messages: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """tool_use_id -> its result; asserts no id has two results."""
    found: dict[str, dict[str, Any]] = {}
    for m in messages:
        if m["role"] == "user" and isinstance(m["content"], list):
            for b in m["content"]:
                if b.get("type") == "tool_result":
                    assert b["tool_use_id"] not in found, f"two results for {b['tool_use_id']}"
                    found[b["tool_use_id"]] = b
    return found


def result_text(result: dict[str, Any]) -> str:
    content = result["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")
