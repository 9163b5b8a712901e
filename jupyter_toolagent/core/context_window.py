"""How full the model's context window is, request by request (SPEC §14).

The API counts a request's prompt as ``input_tokens + cache_read_input_tokens +
cache_creation_input_tokens``; that sum against the model's window is what "context 37% of
200k" shows and what compaction is triggered by.

Where the window comes from, most trusted first:

1. the API itself: a 400 ``prompt is too long: N tokens > M maximum`` names the window M;
   the session keeps it, so the next cell does not meet that answer again;
2. an explicit override (``Agent(context_window=)``, ``%config AgentMagics.context_window``);
3. the model's own entry in a maintained table (the model plug-in's ``context_window``);
4. `DEFAULT_WINDOW`.

Before a request is sent its size is *predicted*: the characters of the request body over four,
scaled by the ratio actual/estimated seen on the last response. The ratio corrects the rough
estimate for the tokenizer in use (the fake server counts exactly characters/4, so its ratio
is one); it is deterministic, needs no extra request, and errs on neither side for long.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from .usage import Usage

__all__ = [
    "DEFAULT_WINDOW",
    "ContextBreakdown",
    "ContextMeter",
    "PromptTooLong",
    "context_breakdown",
    "estimate_tokens",
    "format_window",
    "parse_prompt_too_long",
]

DEFAULT_WINDOW = 200_000
"""The window of current Claude models when nothing better is known."""

_TOO_LONG = re.compile(r"prompt is too long:\s*([\d,]+)\s*tokens\s*>\s*([\d,]+)\s*maximum", re.IGNORECASE)


def estimate_tokens(value: Any) -> int:
    """About four characters per token of text or JSON-able data (never used where exact matters)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return max(1, (len(text) + 3) // 4)


@dataclass(frozen=True)
class PromptTooLong:
    """What the API's "prompt is too long" answer said."""

    tokens: int
    maximum: int


def parse_prompt_too_long(message: str | None) -> PromptTooLong | None:
    """The numbers of ``prompt is too long: N tokens > M maximum``, or None for any other text."""
    match = _TOO_LONG.search(message or "")
    if match is None:
        return None
    return PromptTooLong(int(match.group(1).replace(",", "")), int(match.group(2).replace(",", "")))


def format_window(tokens: int) -> str:
    """``200k``, ``1M``, ``8,192``: how a window is written in the footer."""
    if tokens >= 1_000_000 and tokens % 100_000 == 0:
        return f"{tokens / 1_000_000:g}M"
    if tokens >= 10_000 and tokens % 1000 == 0:
        return f"{tokens // 1000}k"
    return f"{tokens:,}"


def context_tokens(usage: Usage) -> int:
    """A request's whole prompt as the API counted it (uncached + cache read + cache write)."""
    return usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens


@dataclass
class ContextMeter:
    """The session's window and the last request's use of it."""

    learned_window: int | None = None
    """M from the API's "prompt is too long" answer (wins over everything else)."""
    last_tokens: int = 0
    """The last request's prompt tokens, as the API reported them."""
    last_usage: Usage = field(default_factory=Usage)
    ratio: float = 1.0
    """Actual tokens / estimated tokens of the last answered request."""

    def window(self, override: int | None, table: int | None) -> int:
        return self.learned_window or override or table or DEFAULT_WINDOW

    def observe(self, estimated: int, usage: Usage) -> None:
        """A response arrived for a request estimated at ``estimated`` tokens."""
        actual = context_tokens(usage)
        if actual <= 0:
            return
        self.last_tokens, self.last_usage = actual, usage
        if estimated > 0:
            self.ratio = max(0.25, min(4.0, actual / estimated))

    def predict(self, estimated: int) -> int:
        return int(estimated * self.ratio) + 1

    def learn(self, too_long: PromptTooLong) -> None:
        self.learned_window = too_long.maximum


@dataclass(frozen=True)
class ContextBreakdown:
    """Where a request's tokens go (estimates, characters/4), for ``%agent context``."""

    system: int
    tools: int
    messages: int
    tool_results: int
    largest_results: list[tuple[str, str, int]]
    """(tool_use_id, tool name, tokens), largest first."""

    @property
    def total(self) -> int:
        return self.system + self.tools + self.messages


def _blocks(message: Mapping[str, Any]) -> list[Any]:
    content = message.get("content")
    return content if isinstance(content, list) else [{"type": "text", "text": content or ""}]


def context_breakdown(body: Mapping[str, Any], *, top: int = 5) -> ContextBreakdown:
    """The estimated share of system prompt, tool schemas, messages and the largest tool results."""
    names: dict[str, str] = {}
    results: list[tuple[str, str, int]] = []
    result_total = 0
    for message in body.get("messages") or []:
        for block in _blocks(message):
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use":
                names[str(block.get("id"))] = str(block.get("name", ""))
            elif block.get("type") == "tool_result":
                size = estimate_tokens(block.get("content") or "")
                result_total += size
                tid = str(block.get("tool_use_id"))
                results.append((tid, names.get(tid, ""), size))
    results.sort(key=lambda r: -r[2])
    return ContextBreakdown(
        system=estimate_tokens(body.get("system") or "") if body.get("system") else 0,
        tools=estimate_tokens(body.get("tools") or []) if body.get("tools") else 0,
        messages=estimate_tokens(body.get("messages") or []),
        tool_results=result_total,
        largest_results=results[:top],
    )


@dataclass
class ContextState:
    """A session's long-conversation state: its window meter and the compactions made so far
    (the last one is what requests send; earlier ones are kept for the transcript view)."""

    meter: ContextMeter = field(default_factory=ContextMeter)
    compactions: list[Any] = field(default_factory=list)
    """`compaction.Compaction` objects, oldest first."""
    last_body: Any = None
    """The last request body sent (for ``%agent context``); shared, never mutated."""
    last_window: int | None = None

    @property
    def current(self) -> Any:
        return self.compactions[-1] if self.compactions else None
