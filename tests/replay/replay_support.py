"""The recorded streams and what each one should lead to, read independently of the product.

`FIXTURES` are every recorded response in ``/work/shared/fixtures/recorded-streams`` (see its
``SOURCES.txt``; the directory can be moved with ``TOOLAGENT_RECORDED_STREAMS``). `expect`
reads a recording strictly, with its own few lines of code (not the product's accumulator), and
says what the product must do with it: which tool calls are complete and valid (they run, with
exactly that input), which are cut or invalid (they never run and get an error result), which
blocks the product does not know (they must come back with their deltas accumulated), the usage
and the stop reason. `cut_variants` derives broken versions of a recording: the connection
closed inside a block, right before a block's stop, and right after a ``server_tool_use``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jupyter_toolagent.testing import RecordedStream

ROOT = Path(os.environ.get("TOOLAGENT_RECORDED_STREAMS", "/work/shared/fixtures/recorded-streams"))
KNOWN_TYPES = {"text", "tool_use", "thinking", "redacted_thinking", "server_tool_use"}
OPAQUE = {"encrypted_content", "signature", "data"}


def fixture_paths() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*") if p.is_file() and p.name != "SOURCES.txt"
                  and not p.name.endswith(".request.json"))


FIXTURES = fixture_paths()


def fixture_id(path: Path) -> str:
    return str(path.relative_to(ROOT))


@dataclass
class Expected:
    """What a recording must lead to."""

    runs: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    """(id, name, input) of each complete tool_use whose JSON is one complete object."""
    refused_calls: list[str] = field(default_factory=list)
    """ids of tool_use blocks that are cut or whose input is not a JSON object."""
    unknown: list[dict[str, Any]] = field(default_factory=list)
    """blocks of types the product does not know, as they must be sent back."""
    server_uses: list[tuple[str, bool]] = field(default_factory=list)
    """(id, has its result block in the message) of each complete server_tool_use."""
    stop_reason: str | None = None
    stop_details: dict[str, Any] | None = None
    message_stop: bool = False
    input_tokens: int = 0
    output_tokens: int = 0


def _merge(block: dict[str, Any], delta: dict[str, Any]) -> None:
    for key, value in delta.items():
        if key == "type" or value is None:
            continue
        if key not in OPAQUE and isinstance(value, str) and isinstance(block.get(key), str):
            block[key] += value
        else:
            block[key] = value


def expect(recorded: RecordedStream) -> Expected:
    """Read the served bytes of ``recorded`` strictly (see the module docstring)."""
    out = Expected()
    blocks: dict[int, dict[str, Any]] = {}
    raw: dict[int, str] = {}
    stopped: set[int] = set()
    usage_start: dict[str, Any] = {}
    usage_delta: dict[str, Any] = {}
    served = recorded.served
    for event in RecordedStream(served).events():
        if served[event.end - 2:event.end] != b"\n\n":
            continue  # the connection closed inside this event: a client never sees it
        data = event.data if isinstance(event.data, dict) else {}
        kind = data.get("type")
        if kind == "message_start":
            usage_start = data["message"].get("usage") or {}
            if isinstance(data["message"].get("stop_details"), dict):
                out.stop_details = data["message"]["stop_details"]
        elif kind == "content_block_start":
            blocks[data["index"]] = json.loads(json.dumps(data["content_block"]))
            raw[data["index"]] = ""
        elif kind == "content_block_delta" and data["index"] in blocks:
            delta, block = data["delta"], blocks[data["index"]]
            if delta["type"] == "input_json_delta":
                raw[data["index"]] += delta["partial_json"]
            elif block["type"] not in KNOWN_TYPES:
                _merge(block, delta)
        elif kind == "content_block_stop":
            stopped.add(data["index"])
        elif kind == "message_delta":
            out.stop_reason = data["delta"].get("stop_reason")
            if isinstance(data["delta"].get("stop_details"), dict):
                out.stop_details = data["delta"]["stop_details"]
            usage_delta = {k: v for k, v in (data.get("usage") or {}).items() if v is not None}
        elif kind == "message_stop":
            out.message_stop = True
    results = {b.get("tool_use_id") for i, b in blocks.items() if i in stopped and b["type"].endswith("_tool_result")}
    called = {(b.get("caller") or {}).get("tool_id") for b in blocks.values() if b["type"] == "tool_use"}
    for index in sorted(blocks):
        block = blocks[index]
        if block["type"] == "tool_use":
            value = _strict(raw[index]) if raw[index].strip() else block.get("input", {})
            if index in stopped and isinstance(value, dict):
                out.runs.append((block["id"], block["name"], value))
            else:
                out.refused_calls.append(block["id"])
        elif block["type"] == "server_tool_use" and index in stopped:
            out.server_uses.append((block["id"], block["id"] in results or block["id"] in called))
        elif block["type"] not in KNOWN_TYPES and not block["type"].endswith("_tool_result") and index in stopped:
            out.unknown.append(block)
    out.input_tokens = int(usage_delta.get("input_tokens", usage_start.get("input_tokens")) or 0)
    out.output_tokens = int(usage_delta.get("output_tokens", usage_start.get("output_tokens")) or 0)
    return out


def _strict(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def cut_variants(recorded: RecordedStream) -> list[RecordedStream]:
    """Broken versions of ``recorded``: for every content block, the connection closed in the
    middle of one of its events and right before its ``content_block_stop``; and right after
    each ``server_tool_use`` block's stop. Each cut lies before the recording's ``message_delta``
    (a cut after it would leave a complete message)."""
    events = recorded.events()
    limit = next((e.start for e in events if e.name == "message_delta"), len(recorded.data))
    starts: dict[int, int] = {}
    variants: dict[int, RecordedStream] = {}
    for position, event in enumerate(events):
        data = event.data if isinstance(event.data, dict) else {}
        index = data.get("index")
        if event.name == "content_block_start":
            starts[index] = position
            if event.end < limit:  # inside the block: half-way through its first event after the start
                nxt = events[position + 1] if position + 1 < len(events) else None
                if nxt is not None and nxt.end <= limit:
                    at = (nxt.start + nxt.end) // 2
                    variants.setdefault(at, recorded.cut(at, f"inside block {index}"))
        elif event.name == "content_block_stop" and event.start < limit:
            variants.setdefault(event.start, recorded.cut(event.start, f"before the stop of block {index}"))
            start = events[starts.get(index, position)].data
            if isinstance(start, dict) and (start.get("content_block") or {}).get("type") == "server_tool_use":
                variants.setdefault(event.end, recorded.cut(event.end, f"after server_tool_use block {index}"))
    return [variants[at] for at in sorted(variants)]


def last_text(message: dict[str, Any]) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    texts = [b.get("text", "") for b in content if b.get("type") == "text"]
    return texts[-1] if texts else ""


def replay_turns(recordings: dict[str, RecordedStream]) -> Any:
    """A fake-server script: a prompt ``replay NAME`` gets that recording, once (a retry of the
    same request is answered anew, as a model would); anything else (tool results, a
    continuation, another prompt) gets a short text answer."""
    served: set[str] = set()

    def turn(body: dict[str, Any]) -> Any:
        last = body["messages"][-1]
        has_results = isinstance(last["content"], list) and any(
            b.get("type") == "tool_result" for b in last["content"])
        content = last["content"] if isinstance(last["content"], list) else [{"type": "text", "text": last["content"]}]
        asked = [b["text"] for b in content if b.get("type") == "text" and b.get("text", "").startswith("replay ")]
        name = asked[-1].removeprefix("replay ").strip() if asked and not has_results else None
        if name is not None and name not in served:
            served.add(name)
            return recordings[name]
        return "Done."

    return turn


def blocks_of(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]]


def append_then_cut(path: str) -> RecordedStream:
    """A response asking for two appends to ``path``, the connection closed inside the second
    one's JSON: the first call is complete (it runs), the second is cut (it must not)."""
    from jupyter_toolagent.models.stream_events import message_stream_events
    from jupyter_toolagent.testing.recorded import encode_sse

    message = {"id": "msg_01AppendThenCut000000000", "model": "claude-replay", "stop_reason": "tool_use",
               "usage": {"input_tokens": 30, "output_tokens": 40},
               "content": [{"type": "text", "text": "Appending two lines."},
                           {"type": "tool_use", "id": "toolu_01AppendOne0000000000", "name": "append_line",
                            "input": {"path": path, "text": "first line"}},
                           {"type": "tool_use", "id": "toolu_01AppendTwo0000000000", "name": "append_line",
                            "input": {"path": path, "text": "second line"}}]}
    recorded = RecordedStream(encode_sse(message_stream_events(message, json_chunk=8)), name="append_then_cut")
    events = recorded.events()
    second = next(i for i, e in enumerate(events) if e.name == "content_block_start" and e.data["index"] == 2)
    deltas = [e for e in events[second:] if e.name == "content_block_delta" and e.data["delta"].get("partial_json")]
    inside = deltas[1]
    return recorded.cut((inside.start + inside.end) // 2, "inside the second tool_use")


APPEND_TOOL_SOURCE = '''
from jupyter_toolagent import tool

@tool
def append_line(path: str, text: str) -> str:
    """Append one line to a file.

    Args:
        path: The file.
        text: The line.
    """
    with open(path, "a") as handle:
        handle.write(text + "\\n")
    return f"appended to {path}"
'''
