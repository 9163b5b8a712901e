"""A pure fold of raw Messages-API stream events into an assistant message (SPEC §4.2, §7.1).

Both models (SDK over HTTP, scripted) feed the same raw events here, so a run behaves the
same whatever produced the turn. The product folds the events itself, not with the SDK's
accumulator, because that one raises on streams the API really sends (usage fields omitted,
tool JSON that does not parse) and drops what it does not know. Here:

* tool input is decided from the *raw* concatenated ``partial_json`` parsed strictly: a block
  whose JSON does not parse as one complete object, or that never got its
  ``content_block_stop``, is truncated and must never be executed (SPEC §4.2) — it is still
  reported (`BlockDone.truncated`, `cut_tool_uses`) so the model is told its call was cut;
* blocks and deltas of types this module does not know are kept and accumulated generically
  (strings concatenate, lists extend, anything else is replaced by the newer value), so they
  go back to the API verbatim — e.g. ``compaction`` + ``compaction_delta``;
* usage is whatever the events carried: missing fields stay missing (never an error), and a
  ``message_delta`` value overrides the ``message_start`` one only when it is present;
* ``stop_details`` (why the model refused, …) and other ``message_delta`` fields are kept;
* events that contradict the stream so far (a delta for a block that never started, a second
  ``message_start``, a delta after a block's stop) raise `StreamProtocolError` with a sentence
  that says what came in which order — the run treats it like a broken stream.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from ..errors import StreamProtocolError
from .pairing.server_tools import unpaired_server_tool_uses

INPUT_BLOCKS = {"tool_use", "server_tool_use"}
CUT_OFF = "no content_block_stop arrived for it: the stream ended inside the block"

# How the deltas this module knows change their block: (block field, delta field, concatenate?).
_KNOWN_DELTAS: dict[str, tuple[str, str, bool]] = {
    "text_delta": ("text", "text", True),
    "thinking_delta": ("thinking", "thinking", True),
    "signature_delta": ("signature", "signature", True),
}
# Opaque payloads of unknown deltas: each delta carries the whole value, so the latest wins
# (splitting an encrypted token and concatenating the halves would corrupt it).
_OPAQUE_FIELDS = frozenset({"encrypted_content", "signature", "data"})


@dataclass
class BlockDone:
    """A content block got its ``content_block_stop`` (or, for a cut tool_use, the stream
    ended without one). ``truncated`` says why its input is unusable (None when complete)."""

    index: int
    block: dict[str, Any]
    truncated: str | None = None


@dataclass
class TextDelta:
    index: int
    text: str
    snapshot: str


@dataclass
class ThinkingDelta:
    index: int
    thinking: str


@dataclass
class _Slot:
    block: dict[str, Any]
    raw_json: list[str] = field(default_factory=list)
    stopped: bool = False
    truncated: str | None = None


def json_problem(raw: str) -> str | None:
    """Why ``raw`` is not one complete JSON object, as one clause; None if it is.

    ``json`` reports e.g. ``Unterminated string starting at`` + a position; the sentence is
    built so that it reads "starting at character 73", never "at at".
    """
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        what = exc.msg[0].lower() + exc.msg[1:] if exc.msg else "invalid JSON"
        where = f"character {exc.pos}" if what.endswith(" at") else f"at character {exc.pos}"
        return f"its JSON input is incomplete or invalid ({len(raw)} characters; {what} {where})"
    if not isinstance(value, dict):
        return f"its input is a JSON {type(value).__name__}, not an object"
    return None


def _merge_unknown(block: dict[str, Any], delta: dict[str, Any]) -> None:
    for key, value in delta.items():
        if key == "type" or value is None:
            continue
        current = block.get(key)
        if key in _OPAQUE_FIELDS:
            block[key] = copy.deepcopy(value)
        elif isinstance(value, str) and isinstance(current, str):
            block[key] = current + value
        elif isinstance(value, list) and isinstance(current, list):
            current.extend(copy.deepcopy(value))
        else:
            block[key] = copy.deepcopy(value)


def _block_index(event: dict[str, Any]) -> int:
    """The ``index`` of a content-block event. A missing or non-integer index is refused here:
    kept, it would become a block key no later event can be matched against reliably."""
    index = event.get("index")
    if not isinstance(index, int) or isinstance(index, bool):
        raise StreamProtocolError(f"a {event.get('type')} event has no integer index (got {index!r})")
    return index


class MessageAccumulator:
    """Folds one response's raw events (`feed`); the stored message is `assistant_message`."""

    def __init__(self) -> None:
        self.message: dict[str, Any] | None = None
        self._slots: dict[int, _Slot] = {}
        self.stop_reason: str | None = None
        self.stop_sequence: str | None = None
        self.stop_details: dict[str, Any] | None = None
        self.usage: dict[str, Any] = {}
        self.stopped = False
        self.request_id: str | None = None

    def feed(self, event: dict[str, Any]) -> list[Any]:
        """Fold one event; return what it completed (`TextDelta`, `ThinkingDelta`, `BlockDone`)."""
        kind = event.get("type")
        if kind == "_request":
            self.request_id = event.get("request_id")
            return []
        if kind == "ping":
            return []
        if kind == "message_start":
            if self.message is not None:
                raise StreamProtocolError("a second message_start arrived in one stream")
            self.message = copy.deepcopy(event.get("message") or {})
            self.message["content"] = []
            self.usage = {k: v for k, v in (self.message.get("usage") or {}).items() if v is not None}
            if isinstance(self.message.get("stop_details"), dict):
                self.stop_details = self.message["stop_details"]
            return []
        if self.message is None:
            raise StreamProtocolError(f"a {kind} event arrived before message_start")
        if kind == "content_block_start":
            index = _block_index(event)
            if index in self._slots:
                raise StreamProtocolError(f"content_block_start for index {index} arrived twice")
            self._slots[index] = _Slot(copy.deepcopy(event.get("content_block") or {}))
            return []
        if kind == "content_block_delta":
            return self._delta(event)
        if kind == "content_block_stop":
            return [self._stop(_block_index(event))]
        if kind == "message_delta":
            self._message_delta(event)
            return []
        if kind == "message_stop":
            self.stopped = True
            return []
        if kind == "error":
            raise StreamProtocolError(f"an error event reached the accumulator: {event.get('error')}")
        return []  # unknown future event types are ignored, as the SDK does

    def _message_delta(self, event: dict[str, Any]) -> None:
        delta = event.get("delta") or {}
        if "stop_reason" in delta:
            self.stop_reason = delta["stop_reason"]
        if "stop_sequence" in delta:
            self.stop_sequence = delta["stop_sequence"]
        if isinstance(delta.get("stop_details"), dict):
            self.stop_details = delta["stop_details"]
        assert self.message is not None
        for key, value in delta.items():
            if key not in ("stop_reason", "stop_sequence", "stop_details") and value is not None:
                self.message[key] = copy.deepcopy(value)
        for key, value in (event.get("usage") or {}).items():
            if value is not None:
                self.usage[key] = value
        for key, value in event.items():
            if key not in ("type", "delta", "usage") and value is not None:
                self.message[key] = copy.deepcopy(value)

    def _slot(self, index: int, kind: str) -> _Slot:
        slot = self._slots.get(index)
        if slot is None:
            started = ", ".join(map(str, sorted(self._slots))) or "none"
            raise StreamProtocolError(
                f"a {kind} arrived for content block {index}, which never started (blocks started: {started})")
        if slot.stopped:
            raise StreamProtocolError(f"a {kind} arrived for content block {index} after its content_block_stop")
        return slot

    def _delta(self, event: dict[str, Any]) -> list[Any]:
        index = _block_index(event)
        slot = self._slot(index, "content_block_delta")
        delta = event.get("delta") or {}
        dtype = delta.get("type")
        block = slot.block
        if dtype in _KNOWN_DELTAS:
            target, source, _ = _KNOWN_DELTAS[dtype]
            piece = delta.get(source) or ""
            block[target] = (block.get(target) or "") + piece
            if dtype == "text_delta":
                return [TextDelta(index, piece, block[target])]
            if dtype == "thinking_delta":
                return [ThinkingDelta(index, piece)]
            return []
        if dtype == "input_json_delta":
            slot.raw_json.append(delta.get("partial_json") or "")
            return []
        if dtype == "citations_delta":
            citations = block.get("citations")
            block["citations"] = [*(citations or []), copy.deepcopy(delta.get("citation"))]
            return []
        _merge_unknown(block, delta)
        return []

    def _stop(self, index: int) -> BlockDone:
        slot = self._slot(index, "content_block_stop")
        slot.stopped = True
        block = slot.block
        if block.get("type") in INPUT_BLOCKS:
            raw = "".join(slot.raw_json)
            if raw.strip():
                slot.truncated = json_problem(raw)
                block["input"] = {} if slot.truncated else json.loads(raw)
            elif not isinstance(block.get("input"), dict):
                block["input"] = {}
        return BlockDone(index, block, slot.truncated)

    # --- results -------------------------------------------------------------------------
    def incomplete_blocks(self) -> list[dict[str, Any]]:
        """Blocks that never got their ``content_block_stop``."""
        return [s.block for _, s in self._ordered() if not s.stopped]

    def cut_tool_uses(self) -> list[BlockDone]:
        """Client tool_use blocks whose ``content_block_stop`` never came, as truncated
        `BlockDone`s with empty input: kept so the model learns its call was cut (SPEC §7.1)."""
        cut = []
        for index, slot in self._ordered():
            if not slot.stopped and slot.block.get("type") == "tool_use" and slot.block.get("id"):
                slot.block["input"] = {}
                slot.truncated = CUT_OFF
                cut.append(BlockDone(index, slot.block, CUT_OFF))
        return cut

    def _ordered(self) -> list[tuple[Any, _Slot]]:
        return sorted(self._slots.items(), key=lambda kv: (0, kv[0]) if isinstance(kv[0], int) else (1, str(kv[0])))

    def assistant_message(self, *, keep_incomplete: bool = False) -> dict[str, Any]:
        """The assistant message to store: complete blocks in index order.

        Blocks without ``content_block_stop`` are dropped (the stream broke inside them: what
        the model half-said is not something it can be held to) — except a client tool_use
        that `cut_tool_uses` reported: it is kept with empty input, and whoever called
        `cut_tool_uses` owes it an error result (the query loop gives one). Until then a cut
        block is dropped, so a transcript is never left with a call nobody answered.
        A ``server_tool_use`` without its result block is dropped too unless the turn was
        paused (``pause_turn``): sent back, it would make every later request a 400 (SPEC §6).
        """
        content = []
        for _, slot in self._ordered():
            block = slot.block
            if not slot.stopped and not keep_incomplete and not (
                    block.get("type") == "tool_use" and slot.truncated == CUT_OFF):
                continue
            if block.get("type") == "text" and not block.get("text"):
                continue  # the API rejects empty text blocks
            content.append(block)
        if not keep_incomplete and self.stop_reason != "pause_turn":
            drop = set(unpaired_server_tool_uses(content))
            content = [b for k, b in enumerate(content) if k not in drop]
        return {"role": "assistant", "content": content}

    def tool_use_blocks(self) -> list[BlockDone]:
        return [BlockDone(i, s.block, s.truncated) for i, s in self._ordered()
                if s.stopped and s.block.get("type") == "tool_use"]
