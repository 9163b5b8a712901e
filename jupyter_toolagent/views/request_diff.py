"""What changed between two consecutive request bodies, and whether the cache still applies.

Request N+1 of a run is request N plus the assistant turn and the tool results — that is the
lesson `%agent raw` teaches ("what the model newly sees"). The diff therefore ignores where the
``cache_control`` markers sit (request N marks its last message, request N+1 a later one; the
API matches cached prefixes on content) and reports a moved breakpoint on its own line. Anything
else that changed — a message rewritten (e.g. by a repair), tools added, removed or reordered,
the system prompt, the model, thinking — is named, and the prefix check says whether request
N's cached prefix is still reused by request N+1, and if not, at which part it broke.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from typing import Any

from ..core.request_body import cache_prefix_view, strip_cache_control

__all__ = ["CacheReuse", "RequestDiff", "cache_breakpoints", "diff_requests"]

# Settings whose change invalidates cached prefixes even when the bytes match (Anthropic docs:
# caches are per model; tool_choice and thinking changes invalidate message caches).
_CACHE_SETTINGS = ("model", "tool_choice", "thinking")
_PARTS = ("tools", "system", "messages")


def _name(tool: Any) -> str:
    return str(tool.get("name")) if isinstance(tool, dict) else repr(tool)


def _pretty(value: Any) -> list[str]:
    return json.dumps(value, ensure_ascii=False, indent=2, default=repr).splitlines()


def cache_breakpoints(body: dict[str, Any]) -> list[str]:
    """Where ``cache_control`` sits, in prompt order: ``tools[2] (Read)``, ``system[0]``,
    ``messages[3].content[1]``."""
    found: list[str] = []
    for i, tool in enumerate(body.get("tools") or []):
        if isinstance(tool, dict) and "cache_control" in tool:
            found.append(f"tools[{i}] ({_name(tool)})")
    system = body.get("system")
    if isinstance(system, list):
        found += [f"system[{i}]" for i, b in enumerate(system) if isinstance(b, dict) and "cache_control" in b]
    for n, message in enumerate(body.get("messages") or []):
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            found += [f"messages[{n}].content[{k}]" for k, b in enumerate(content)
                      if isinstance(b, dict) and "cache_control" in b]
    return found


def _part_labels(body: dict[str, Any]) -> list[str]:
    labels = [f"tools[{i}] ({_name(t)})" for i, t in enumerate(body.get("tools") or [])]
    system = body.get("system")
    count = (1 if system else 0) if isinstance(system, str) else len(system or [])
    labels += [f"system[{i}]" for i in range(count)]
    labels += [f"messages[{n}]" for n in range(len(body.get("messages") or []))]
    return labels


@dataclass
class CacheReuse:
    """Whether request N+1 still starts with request N's cached prefix."""

    reused: bool
    reason: str


@dataclass
class MessageChange:
    index: int
    kind: str  # "added" | "changed" | "removed"
    message: Any = None
    diff: list[str] = field(default_factory=list)


@dataclass
class RequestDiff:
    messages: list[MessageChange] = field(default_factory=list)
    tools_added: list[str] = field(default_factory=list)
    tools_removed: list[str] = field(default_factory=list)
    tools_changed: list[str] = field(default_factory=list)
    tools_reordered: bool = False
    system_changed: bool = False
    settings: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    breakpoints_before: list[str] = field(default_factory=list)
    breakpoints_after: list[str] = field(default_factory=list)
    cache: CacheReuse = field(default_factory=lambda: CacheReuse(True, ""))

    @property
    def breakpoints_moved(self) -> bool:
        return self.breakpoints_before != self.breakpoints_after

    def summary_lines(self) -> list[str]:
        """One line per change that is not a message (messages are rendered by the caller)."""
        lines = []
        if self.tools_added:
            lines.append("tools added: " + ", ".join(self.tools_added))
        if self.tools_removed:
            lines.append("tools removed: " + ", ".join(self.tools_removed))
        if self.tools_changed:
            lines.append("tools changed: " + ", ".join(self.tools_changed))
        if self.tools_reordered:
            lines.append("tools reordered")
        if self.system_changed:
            lines.append("system prompt changed")
        for key, (before, after) in self.settings.items():
            lines.append(f"setting {key}: {json.dumps(before, default=repr)} → {json.dumps(after, default=repr)}")
        if self.breakpoints_moved:
            gone = [b for b in self.breakpoints_before if b not in self.breakpoints_after]
            new = [b for b in self.breakpoints_after if b not in self.breakpoints_before]
            lines.append("cache breakpoint moved: " + (", ".join(gone) or "none") + " → " + (", ".join(new) or "none")
                         + " (where a marker sits is not content: the diff above ignores it)")
        return lines


def _cache_reuse(prev: dict[str, Any], cur: dict[str, Any], settings: dict[str, tuple[Any, Any]]) -> CacheReuse:
    changed = [key for key in _CACHE_SETTINGS if key in settings]
    if changed:
        return CacheReuse(False, f"not reused: {', '.join(changed)} changed, which invalidates the cache")
    before = [json.dumps(p, ensure_ascii=False, sort_keys=False) for p in cache_prefix_view(prev)]
    after = [json.dumps(p, ensure_ascii=False, sort_keys=False) for p in cache_prefix_view(cur)]
    labels = _part_labels(prev)
    for position, part in enumerate(before):
        if position >= len(after) or after[position] != part:
            where = labels[position] if position < len(labels) else f"part {position}"
            what = "is missing" if position >= len(after) else "differs"
            return CacheReuse(False, f"not reused: the previous request's prefix breaks at {where}, which {what} "
                                     "in this request (everything from there on is written to the cache again)")
    return CacheReuse(True, "the previous request's prefix is reused unchanged (a cache read, once cached)")


def diff_requests(prev: dict[str, Any], cur: dict[str, Any]) -> RequestDiff:
    """Changes from request ``prev`` to request ``cur``, ``cache_control`` markers ignored."""
    diff = RequestDiff(breakpoints_before=cache_breakpoints(prev), breakpoints_after=cache_breakpoints(cur))
    a, b = strip_cache_control(prev), strip_cache_control(cur)
    for key in sorted((set(a) | set(b)) - set(_PARTS)):
        if a.get(key) != b.get(key):
            diff.settings[key] = (a.get(key), b.get(key))
    diff.system_changed = a.get("system") != b.get("system")
    tools_a = {_name(t): t for t in a.get("tools") or []}
    tools_b = {_name(t): t for t in b.get("tools") or []}
    diff.tools_added = [n for n in tools_b if n not in tools_a]
    diff.tools_removed = [n for n in tools_a if n not in tools_b]
    diff.tools_changed = [n for n in tools_b if n in tools_a and tools_a[n] != tools_b[n]]
    common_a = [n for n in tools_a if n in tools_b]
    common_b = [n for n in tools_b if n in tools_a]
    diff.tools_reordered = common_a != common_b
    messages_a, messages_b = a.get("messages") or [], b.get("messages") or []
    for n in range(max(len(messages_a), len(messages_b))):
        if n >= len(messages_a):
            diff.messages.append(MessageChange(n, "added", messages_b[n]))
        elif n >= len(messages_b):
            diff.messages.append(MessageChange(n, "removed", messages_a[n]))
        elif _as_blocks(messages_a[n]) != _as_blocks(messages_b[n]):
            lines = difflib.unified_diff(_pretty(messages_a[n]), _pretty(messages_b[n]), lineterm="", n=2)
            diff.messages.append(MessageChange(n, "changed", messages_b[n], list(lines)[2:]))
    diff.cache = _cache_reuse(prev, cur, diff.settings)
    return diff


def _as_blocks(message: Any) -> Any:
    """A message with string content read as the one text block the API sees."""
    if isinstance(message, dict) and isinstance(message.get("content"), str):
        return {**message, "content": [{"type": "text", "text": message["content"]}]}
    return message
