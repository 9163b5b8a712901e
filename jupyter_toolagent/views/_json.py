"""JSON for people: small objects on one line, long strings cut in the middle, breakpoints marked.

A request body is mostly a few large strings (system prompt, tool output) inside many small
objects. ``json.dumps(indent=2)`` puts every key of every small object on its own line and
prints the large strings whole, so the structure — what a teacher wants to show — drowns.
Here an object or list that fits the width stays on one line, a string longer than
``max_string`` keeps its head and tail with the number of characters cut between, and any
object that carries ``cache_control`` is marked "◀ cache breakpoint" (and highlighted in HTML),
because where the breakpoints sit is what decides what the API caches.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ._base import cut_middle, esc

__all__ = ["CACHE_MARK", "format_json"]

CACHE_MARK = "◀ cache breakpoint"
_INDENT = "  "


@dataclass
class _Line:
    depth: int
    text: str
    cached: bool
    mark: bool


def _contains_cache_control(value: Any) -> bool:
    if isinstance(value, dict):
        return "cache_control" in value or any(_contains_cache_control(v) for v in value.values())
    if isinstance(value, list):
        return any(_contains_cache_control(v) for v in value)
    return False


class _Writer:
    def __init__(self, max_string: int | None, width: int) -> None:
        self.max_string = max_string
        self.width = width

    def cut(self, value: Any) -> Any:
        if isinstance(value, str):
            return cut_middle(value, self.max_string)
        if isinstance(value, dict):
            return {str(k): self.cut(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.cut(v) for v in value]
        return value

    def compact(self, value: Any) -> str:
        return json.dumps(self.cut(value), ensure_ascii=False, default=repr, separators=(", ", ": "))

    def lines(self, value: Any, depth: int, prefix: str, suffix: str, cached: bool) -> list[_Line]:
        carries = isinstance(value, dict) and "cache_control" in value
        cached = cached or carries
        if not isinstance(value, (dict, list, tuple)) or not value:
            return [_Line(depth, prefix + self.compact(value) + suffix, cached, False)]
        children = list(value.values()) if isinstance(value, dict) else list(value)
        nested = any(_contains_cache_control(child) for child in children)
        one_line = prefix + self.compact(value) + suffix
        if not nested and len(one_line) + len(_INDENT) * depth <= self.width:
            return [_Line(depth, one_line, cached, carries)]
        out: list[_Line] = []
        if isinstance(value, dict):
            out.append(_Line(depth, prefix + "{", cached, False))
            items = list(value.items())
            for position, (key, child) in enumerate(items):
                comma = "," if position < len(items) - 1 else ""
                child_lines = self.lines(child, depth + 1, json.dumps(str(key), ensure_ascii=False) + ": ", comma,
                                         cached)
                if key == "cache_control":
                    child_lines[-1].mark = True
                out += child_lines
            out.append(_Line(depth, "}" + suffix, cached, False))
        else:
            out.append(_Line(depth, prefix + "[", cached, False))
            for position, child in enumerate(children):
                comma = "," if position < len(children) - 1 else ""
                out += self.lines(child, depth + 1, "", comma, cached)
            out.append(_Line(depth, "]" + suffix, cached, False))
        return out


def format_json(value: Any, *, max_string: int | None = 300, width: int = 88, html: bool = False) -> str:
    """``value`` as readable JSON text (``html=False``) or as escaped HTML with the objects that
    carry ``cache_control`` wrapped in ``<span class="tav-cache">`` (``html=True``; put it in a
    ``<pre>``). ``max_string=None`` prints every string whole."""
    lines = _Writer(max_string, width).lines(value, 0, "", "", False)
    if not html:
        return "\n".join(_INDENT * l.depth + l.text + (f"  {CACHE_MARK}" if l.mark else "") for l in lines)
    rendered = []
    for line in lines:
        body = esc(_INDENT * line.depth + line.text)
        if line.cached:
            body = f'<span class="tav-cache">{body}</span>'
        if line.mark:
            body += f'  <span class="tav-cache-mark">{esc(CACHE_MARK)}</span>'
        rendered.append(body)
    return "\n".join(rendered)
