"""Recorded responses, served byte for byte by `FakeAnthropicServer` (SPEC §7.3).

A scripted turn is re-encoded by the server, so it can only be as strange as the encoder.
Streams the API really sent are stranger: usage fields left out, a ``ping`` written as
``{"type": "ping"}`` with a space, padding after the JSON, a tool_use that never gets its
``content_block_stop``, blocks and deltas no SDK knows yet. A `RecordedStream` is such a
response body kept as bytes; put it in a script where a turn goes and the server writes exactly
those bytes (HTTP chunking is transport, not body) — optionally closing the connection after
``cut_after`` bytes, with no terminating chunk, as a dropped connection does.

    from jupyter_toolagent.testing import FakeAnthropicServer, RecordedStream

    recorded = RecordedStream.from_file("tool_use_response.txt")
    with FakeAnthropicServer(turns=[recorded, "Done."]) as server: ...
    recorded.cut_after_event("content_block_start", block_type="server_tool_use")  # a cut variant

Forms read by `from_file`: ``.sse`` and ``*_response.txt`` are SSE bodies, served as they are.
A ``.json`` file is a *non-streaming* recording (one Message); the product always streams, so
it is served as the SSE stream the API sends for that message (`message_stream_events`) —
derived, not byte for byte, and `RecordedStream.derived` says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..models.stream_events import message_stream_events

__all__ = ["RecordedStream", "SSEEvent", "encode_sse", "parse_sse"]

SSE_CONTENT_TYPE = "text/event-stream; charset=utf-8"


@dataclass(frozen=True)
class SSEEvent:
    """One event of a body: its ``event:`` name, its ``data`` (parsed when JSON), and where its
    bytes are (``start``: first byte; ``end``: one past the blank line that ends it)."""

    name: str | None
    data: Any
    start: int
    end: int


def parse_sse(data: bytes) -> list[SSEEvent]:
    """The events of an SSE body, with byte offsets (lenient: a reader for recordings)."""
    events: list[SSEEvent] = []
    position = 0
    normalized = data.replace(b"\r\n", b"\n")
    if normalized != data:  # offsets must point into the original bytes: only LF bodies are split
        raise ValueError("CRLF SSE bodies are not supported")
    while position < len(data):
        end = data.find(b"\n\n", position)
        stop = len(data) if end < 0 else end + 2
        chunk = data[position:stop].decode("utf-8", "replace")
        name, lines = None, []
        for line in chunk.split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                lines.append(line[5:].lstrip(" "))
        if name is not None or lines:
            text = "\n".join(lines)
            try:
                value: Any = json.loads(text)
            except ValueError:
                value = text
            events.append(SSEEvent(name, value, position, stop))
        position = stop
    return events


def encode_sse(events: list[dict[str, Any]]) -> bytes:
    """SSE bytes as the API writes them (``event:`` line, compact JSON ``data:`` line)."""
    return b"".join(
        f"event: {e['type']}\ndata: {json.dumps(e, ensure_ascii=False, separators=(',', ':'))}\n\n".encode()
        for e in events
    )


@dataclass(frozen=True)
class RecordedStream:
    """A response body to serve as it is. ``cut_after``: close the connection after that many
    bytes of it. ``derived``: the bytes were made from a non-streaming recording."""

    data: bytes
    name: str = ""
    content_type: str = SSE_CONTENT_TYPE
    status: int = 200
    cut_after: int | None = None
    derived: bool = False

    @classmethod
    def from_file(cls, path: str | Path) -> "RecordedStream":
        path = Path(path)
        raw = path.read_bytes()
        if path.suffix == ".json":
            message = json.loads(raw)
            return cls(encode_sse(message_stream_events(message, pings=False)), name=path.name, derived=True)
        return cls(raw, name=path.name)

    def events(self) -> list[SSEEvent]:
        return parse_sse(self.data)

    @property
    def served(self) -> bytes:
        """The bytes that go out (all of them, or those before the cut)."""
        return self.data if self.cut_after is None else self.data[: self.cut_after]

    def cut(self, after: int, label: str = "") -> "RecordedStream":
        """The same recording, with the connection closed after ``after`` bytes."""
        return replace(self, cut_after=after, name=f"{self.name}[{label or f'cut@{after}'}]")

    def cut_after_event(self, kind: str, *, nth: int = 0, block_type: str | None = None,
                        partial: bool = False) -> "RecordedStream | None":
        """Cut after the ``nth`` event of ``kind`` (of a content block of ``block_type`` for
        ``content_block_start``); ``partial`` cuts in the middle of that event's bytes instead.
        None when the recording has no such event."""
        found = [e for e in self.events() if e.name == kind and (
            block_type is None or (isinstance(e.data, dict)
                                   and (e.data.get("content_block") or {}).get("type") == block_type))]
        if len(found) <= nth:
            return None
        event = found[nth]
        at = (event.start + event.end) // 2 if partial else event.end
        return self.cut(at, f"cut {'inside' if partial else 'after'} {kind}"
                        + (f" {block_type}" if block_type else "") + (f" #{nth}" if nth else ""))
