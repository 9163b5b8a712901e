"""Markdown to HTML for the model's text: escaped, and cheap to re-render while it streams.

The model's raw HTML is data, not markup, so it is escaped (and mistune neutralises
``javascript:`` links). A streamed reply is re-rendered a dozen times a second; rendering the
whole text each time costs O(length) per refresh and O(length²) over a long reply. Blocks that
can no longer change — everything before a blank line that is outside a code fence and is
followed by an unindented, non-list line — are rendered once and cached by `MarkdownStream`;
only the open tail is rendered again. The caller renders the whole text once more when the
block is complete (`final=True`), so the end result is exactly a full render.
"""

from __future__ import annotations

import html
import re
from typing import Callable

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LIST_ITEM = re.compile(r"^([-*+]|\d{1,9}[.)])(\s|$)")


def _make_renderer() -> Callable[[str], str] | None:
    try:
        import mistune
    except ImportError:  # pragma: no cover - mistune is a dependency; keep text readable anyway
        return None
    render = mistune.create_markdown(escape=True, plugins=["strikethrough", "table", "url"])
    return lambda text: str(render(text))


_RENDER = _make_renderer()


def markdown_html(text: str) -> str:
    """Markdown to HTML with the model's raw HTML escaped."""
    if _RENDER is None:
        return f"<pre>{html.escape(text)}</pre>"
    return _RENDER(text)


def stable_end(text: str, start: int = 0) -> int:
    """The offset (≥ ``start``) up to which ``text`` consists of finished blocks.

    ``text[start:]`` must begin outside a code fence (true for any offset this returns).
    """
    fence: str | None = None
    end = start
    i = start
    while True:
        j = text.find("\n", i)
        if j == -1:  # the last line may still grow
            return end
        line = text[i:j]
        match = _FENCE.match(line)
        if fence is None:
            if match:
                fence = match.group(1)
            elif not line.strip():
                nxt = j + 1
                next_end = text.find("\n", nxt)
                if next_end != -1:  # the next line is complete: we can judge it
                    next_line = text[nxt:next_end]
                    if next_line[:1] not in ("", " ", "\t") and not _LIST_ITEM.match(next_line):
                        end = nxt
        elif match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence) and line.strip() == match.group(1):
            fence = None
        i = j + 1


class MarkdownStream:
    """Renders successive snapshots of one growing text, re-rendering only the open tail."""

    def __init__(self, render: Callable[[str], str] = markdown_html) -> None:
        self._render = render
        self._stable_source = ""
        self._stable_html: list[str] = []
        self.rendered_chars = 0
        """Characters of Markdown rendered so far (a measure of the work done)."""

    def render(self, text: str, *, final: bool = False) -> str:
        if final:
            self.rendered_chars += len(text)
            return self._render(text)
        if not text.startswith(self._stable_source):  # not an extension of what we saw: start over
            self._stable_source, self._stable_html = "", []
        start = len(self._stable_source)
        end = stable_end(text, start)
        if end > start:
            chunk = text[start:end]
            self._stable_html.append(self._render(chunk))
            self.rendered_chars += len(chunk)
            self._stable_source = text[:end]
        tail = text[end:]
        self.rendered_chars += len(tail)
        return "".join(self._stable_html) + (self._render(tail) if tail else "")
