"""The scripted conversation of the offline quickstart (no API key needed).

A new prompt gets a short text and a ``ListVariables`` call; when that result comes back the
reply quotes it. The whole runtime runs — schema validation, permissions, the tool, pairing,
the next request — with a model that cannot surprise anyone in a demo. Each reply says it was
scripted, so nobody mistakes it for Claude.
"""

from __future__ import annotations

from typing import Any, Callable

from ..models.turns import text_block, tool_use_block

__all__ = ["OFFLINE_NOTE", "quickstart_turns"]

OFFLINE_NOTE = "(Scripted offline reply from the fake server; set ANTHROPIC_API_KEY to talk to Claude.)"
_TOOL = "ListVariables"


def _result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text")


def _quote(text: str, limit: int = 20) -> str:
    lines = text.strip().splitlines() or ["(empty)"]
    shown = [f"> {line}" for line in lines[:limit]]
    if len(lines) > limit:
        shown.append(f"> … ({len(lines) - limit} more lines)")
    return "\n".join(shown)


def quickstart_turns() -> Callable[[dict[str, Any]], Any]:
    """A turn function for `FakeAnthropicServer` / `ScriptedModel` (stateless: any number of runs)."""

    def turn(body: dict[str, Any]) -> Any:
        messages = body.get("messages") or []
        last = messages[-1] if messages else {}
        content = last.get("content")
        blocks = content if isinstance(content, list) else []
        results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        if results:
            result = results[0]
            verb = "could not list" if result.get("is_error") else "found"
            return [text_block(f"Here is what `{_TOOL}` {verb} in your kernel:\n\n{_quote(_result_text(result))}"
                               f"\n\n{OFFLINE_NOTE}")]
        tools = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
        if _TOOL in tools:
            return [text_block("Let me look at the variables in your kernel first."), tool_use_block(_TOOL, {})]
        return [text_block(f"The `{_TOOL}` tool is not enabled, so there is nothing to look at. {OFFLINE_NOTE}")]

    return turn
