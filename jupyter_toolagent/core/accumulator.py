"""A pure fold of raw Messages-API stream events into an assistant message.

Both models (SDK over HTTP, scripted) feed the same raw events here, so a run behaves the
same whatever produced the turn. Unlike the SDK's snapshot, tool input is decided from the
*raw* concatenated ``partial_json`` parsed strictly: a block whose JSON does not parse as one
complete object, or that never got its ``content_block_stop``, is truncated and must never be
executed (SPEC §4.2). Out-of-order events raise `StreamProtocolError` loudly.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from ..errors import ToolAgentError

INPUT_BLOCKS = {"tool_use", "server_tool_use"}


class StreamProtocolError(ToolAgentError):
    """The stream's events are out of order or refer to unknown blocks."""


@dataclass
class BlockDone:
    """A content block got its ``content_block_stop``. ``truncated`` says why its input is
    unusable (None when complete)."""

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


class MessageAccumulator:
    def __init__(self) -> None:
        self.message: dict[str, Any] | None = None
        self._slots: dict[int, _Slot] = {}
        self.stop_reason: str | None = None
        self.stop_sequence: str | None = None
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
                raise StreamProtocolError("second message_start in one stream")
            self.message = copy.deepcopy(event["message"])
            self.message["content"] = []
            self.usage = dict(self.message.get("usage") or {})
            return []
        if self.message is None:
            raise StreamProtocolError(f"{kind} before message_start")
        if kind == "content_block_start":
            index = event["index"]
            if index in self._slots:
                raise StreamProtocolError(f"content_block_start for index {index} twice")
            self._slots[index] = _Slot(copy.deepcopy(event["content_block"]))
            return []
        if kind == "content_block_delta":
            return self._delta(event)
        if kind == "content_block_stop":
            return [self._stop(event["index"])]
        if kind == "message_delta":
            delta = event.get("delta") or {}
            self.stop_reason = delta.get("stop_reason", self.stop_reason)
            self.stop_sequence = delta.get("stop_sequence", self.stop_sequence)
            for key, value in (event.get("usage") or {}).items():
                if value is not None:
                    self.usage[key] = value
            return []
        if kind == "message_stop":
            self.stopped = True
            return []
        if kind == "error":
            raise StreamProtocolError(f"error event reached the accumulator: {event.get('error')}")
        return []  # unknown future event types are ignored, as the SDK does

    def _slot(self, index: int) -> _Slot:
        slot = self._slots.get(index)
        if slot is None:
            raise StreamProtocolError(f"event for unknown content block {index}")
        if slot.stopped:
            raise StreamProtocolError(f"event for content block {index} after its content_block_stop")
        return slot

    def _delta(self, event: dict[str, Any]) -> list[Any]:
        index = event["index"]
        slot = self._slot(index)
        delta = event["delta"]
        dtype = delta.get("type")
        block = slot.block
        if dtype == "text_delta":
            block["text"] = block.get("text", "") + delta["text"]
            return [TextDelta(index, delta["text"], block["text"])]
        if dtype == "input_json_delta":
            slot.raw_json.append(delta.get("partial_json", ""))
            return []
        if dtype == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + delta["thinking"]
            return [ThinkingDelta(index, delta["thinking"])]
        if dtype == "signature_delta":
            block["signature"] = block.get("signature", "") + delta["signature"]
            return []
        if dtype == "citations_delta":
            block.setdefault("citations", []).append(delta["citation"])
            return []
        return []

    def _stop(self, index: int) -> BlockDone:
        slot = self._slot(index)
        slot.stopped = True
        block = slot.block
        if block.get("type") in INPUT_BLOCKS:
            raw = "".join(slot.raw_json)
            if raw.strip():
                try:
                    value = json.loads(raw)
                except json.JSONDecodeError as exc:
                    slot.truncated = f"its JSON input is incomplete ({exc.msg} at character {exc.pos})"
                    value = {}
                else:
                    if not isinstance(value, dict):
                        slot.truncated = "its input is not a JSON object"
                        value = {}
                block["input"] = value
            elif not isinstance(block.get("input"), dict):
                block["input"] = {}
        return BlockDone(index, block, slot.truncated)

    # --- results -------------------------------------------------------------------------
    def incomplete_blocks(self) -> list[dict[str, Any]]:
        """Blocks that never got their ``content_block_stop``."""
        return [s.block for _, s in sorted(self._slots.items()) if not s.stopped]

    def assistant_message(self, *, keep_incomplete: bool = False) -> dict[str, Any]:
        """The assistant message to store: complete blocks in index order.

        Blocks without ``content_block_stop`` are dropped (the stream broke inside them):
        what the model half-said is not something it can be held to.
        """
        content = []
        for _, slot in sorted(self._slots.items()):
            if not slot.stopped and not keep_incomplete:
                continue
            block = slot.block
            if block.get("type") == "text" and not block.get("text"):
                continue  # the API rejects empty text blocks
            content.append(block)
        return {"role": "assistant", "content": content}

    def tool_use_blocks(self) -> list[BlockDone]:
        return [BlockDone(i, s.block, s.truncated) for i, s in sorted(self._slots.items())
                if s.stopped and s.block.get("type") == "tool_use"]
