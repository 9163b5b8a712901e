"""Scripted assistant turns: what a turn may be, how it becomes a complete message, how a
script hands turns out. Shared by `ScriptedModel` and the fake server, so a script behaves the
same whether it is played in-process or over HTTP.

A turn is any of:

* a list of content blocks — ``[{"type": "text", "text": "Looking"}, tool_use_block("Read", {...})]``;
* a string — one text block;
* a full message dict with ``content`` (and optionally ``stop_reason``, ``stop_sequence``,
  ``usage``); an explicit ``"stop_reason": None`` streams a message without a stop reason
  (what a truncated stream looks like);
* a list of raw stream events (the first one a ``message_start``) — streamed exactly as
  written, to script what no well-formed message produces: a ``max_tokens`` stop inside a
  tool's JSON, a block that never gets its ``content_block_stop``, a missing ``message_stop``;
* a `ScriptedTurn`, which adds timing (its ``events`` field takes raw events too).

Without an explicit ``stop_reason`` a turn that contains ``tool_use`` stops with ``tool_use``,
any other with ``end_turn``. Missing ``tool_use`` ids and message ids are filled with fresh
API-shaped ids every time a turn is played, so replaying a script never repeats an id.
"""

from __future__ import annotations

import copy
import threading
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Sequence, TypeGuard, Union, cast

from ..core.accumulator import MessageAccumulator
from ..errors import ModelAPIError, ScriptExhaustedError
from .stream_events import estimate_tokens, new_message_id, new_tool_use_id

__all__ = [
    "PreparedTurn",
    "ScriptedTurn",
    "Turn",
    "TurnScript",
    "TurnSource",
    "invalid_script",
    "is_raw_events",
    "message_of_events",
    "prepare_turn",
    "text_block",
    "thinking_block",
    "timed_events",
    "tool_use_block",
]

_AUTO = object()


@dataclass
class ScriptedTurn:
    """One assistant turn plus how to pace its stream.

    ``delay`` waits before the turn's first event; ``event_delay`` and ``block_delay`` override
    the model-wide values for this turn (``block_delay`` is waited before every block after the
    first, e.g. 0.3 to stream two tool_use blocks 300 ms apart). ``events`` replaces
    ``content`` with raw stream events, sent as written.
    """

    content: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: Any = _AUTO
    stop_sequence: str | None = None
    usage: dict[str, Any] | None = None
    delay: float = 0.0
    event_delay: float | None = None
    block_delay: float | None = None
    events: list[dict[str, Any]] | None = None


Turn = Union[ScriptedTurn, str, Sequence[dict[str, Any]], dict[str, Any]]
TurnSource = Union[Sequence[Turn], Callable[[dict[str, Any]], Union[Turn, None, Awaitable[Union[Turn, None]]]]]


def invalid_script(problem: str) -> ModelAPIError:
    """The error for a turn that cannot be played (shown like any model failure)."""
    return ModelAPIError(
        problem,
        error_type="invalid_script",
        hint="A turn is a list of content blocks, a string, a message dict, a list of raw stream "
        "events or a ScriptedTurn",
    )


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def tool_use_block(name: str, input: dict[str, Any] | None = None, *, id: str | None = None) -> dict[str, Any]:
    """A ``tool_use`` block; without ``id`` a fresh one is assigned each time it is played."""
    block: dict[str, Any] = {"type": "tool_use", "name": name, "input": dict(input or {})}
    if id is not None:
        block["id"] = id
    return block


def thinking_block(thinking: str, signature: str = "scripted-signature") -> dict[str, Any]:
    return {"type": "thinking", "thinking": thinking, "signature": signature}


@dataclass
class PreparedTurn:
    """A turn made concrete: a complete API message and its pacing.

    ``events`` is set for a raw-event turn: those events are streamed instead of the ones
    `message_stream_events` would make, and ``message`` is what they add up to.
    """

    message: dict[str, Any]
    delay: float = 0.0
    event_delay: float | None = None
    block_delay: float | None = None
    source: Any = field(default=None, repr=False)
    events: list[dict[str, Any]] | None = None


def is_raw_events(value: Any) -> TypeGuard[Sequence[dict[str, Any]]]:
    """Whether ``value`` is a list of raw stream events (it starts with ``message_start``)."""
    return (
        isinstance(value, (list, tuple))
        and bool(value)
        and isinstance(value[0], dict)
        and value[0].get("type") == "message_start"
    )


def _as_scripted_turn(turn: Turn) -> ScriptedTurn:
    if isinstance(turn, ScriptedTurn):
        return turn
    if is_raw_events(turn):
        return ScriptedTurn(events=list(turn))
    if isinstance(turn, str):
        return ScriptedTurn(content=[text_block(turn)])
    if isinstance(turn, dict):
        if "content" in turn:
            content = turn["content"]
            if isinstance(content, str):
                content = [text_block(content)]
            return ScriptedTurn(
                content=list(content),
                stop_reason=turn["stop_reason"] if "stop_reason" in turn else _AUTO,
                stop_sequence=turn.get("stop_sequence"),
                usage=turn.get("usage"),
            )
        if "type" in turn:
            return ScriptedTurn(content=[turn])
        raise TypeError(f"a scripted turn dict needs 'content' (a message) or 'type' (a block): {turn!r}")
    if isinstance(turn, Sequence):
        # a str returned above; mypy widens `turn` again on the Sequence check
        return ScriptedTurn(content=list(cast("Sequence[dict[str, Any]]", turn)))
    raise TypeError(f"cannot use {type(turn).__name__} as a scripted turn")


def _check_blocks(content: list[Any]) -> None:
    for position, block in enumerate(content):
        where = f"block {position}"
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise TypeError(f"{where} is {block!r}: a content block is a dict with a 'type'")
        kind = block["type"]
        if kind == "text" and not isinstance(block.get("text"), str):
            raise TypeError(f"{where} is a text block without a string 'text'")
        if kind == "tool_use":
            if not isinstance(block.get("name"), str) or not block["name"]:
                raise TypeError(f"{where} is a tool_use block without a 'name'")
            if not isinstance(block.get("input", {}), dict):
                raise TypeError(f"{where} ({block['name']}) has an 'input' that is not a dict")


def _check_events(events: list[Any]) -> None:
    for position, event in enumerate(events):
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            raise TypeError(f"raw event {position} is {event!r}: an event is a dict with a 'type'")


def message_of_events(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The assistant message a list of raw events adds up to (incomplete blocks included).

    Used to record what a raw-event turn delivered; a stream that breaks the protocol gives
    whatever was folded before the break.
    """
    acc = MessageAccumulator()
    try:
        for event in events:
            acc.feed(event)
    except Exception:  # a deliberately malformed stream: keep what was folded
        pass
    message: dict[str, Any] = copy.deepcopy(acc.message) if acc.message is not None else {"type": "message", "role": "assistant"}
    message["content"] = acc.assistant_message(keep_incomplete=True)["content"]
    message["stop_reason"] = acc.stop_reason
    message["stop_sequence"] = acc.stop_sequence
    message["usage"] = dict(acc.usage)
    return message


def prepare_turn(turn: Turn, *, model: str, request_body: dict[str, Any] | None = None) -> PreparedTurn:
    """Fill in what a hand-written turn leaves out: ids, stop reason, usage. Never mutates ``turn``.

    Raises `TypeError` for a turn that cannot be played.
    """
    scripted = _as_scripted_turn(turn)
    if scripted.events is not None:
        _check_events(scripted.events)
        events = copy.deepcopy(list(scripted.events))
        return PreparedTurn(
            message=message_of_events(events),
            delay=scripted.delay,
            event_delay=scripted.event_delay,
            block_delay=scripted.block_delay,
            source=turn,
            events=events,
        )
    _check_blocks(scripted.content)
    content = copy.deepcopy(scripted.content)
    for block in content:
        if block.get("type") == "tool_use" and not block.get("id"):
            block["id"] = new_tool_use_id()
        if block.get("type") == "tool_use":
            block.setdefault("input", {})
    stop_reason = scripted.stop_reason
    if stop_reason is _AUTO:
        stop_reason = "tool_use" if any(b.get("type") == "tool_use" for b in content) else "end_turn"
    usage = dict(scripted.usage or {})
    usage.setdefault("input_tokens", estimate_tokens(request_body) if request_body else 1)
    usage.setdefault("output_tokens", estimate_tokens(content) if content else 1)
    message = {
        "id": new_message_id(),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": scripted.stop_sequence,
        "usage": usage,
    }
    return PreparedTurn(
        message=message,
        delay=scripted.delay,
        event_delay=scripted.event_delay,
        block_delay=scripted.block_delay,
        source=turn,
    )


def timed_events(
    events: list[dict[str, Any]], *, delay: float = 0.0, event_delay: float = 0.0, block_delay: float = 0.0
) -> list[tuple[float, dict[str, Any]]]:
    """Pair each event with the pause to take before sending it."""
    timed: list[tuple[float, dict[str, Any]]] = []
    for position, event in enumerate(events):
        pause = delay if position == 0 else event_delay
        if event.get("type") == "content_block_start" and event.get("index", 0) > 0:
            pause += block_delay
        timed.append((pause, event))
    return timed


class TurnScript:
    """Hands out turns in order (thread-safe: the fake server serves requests concurrently).

    ``take`` returns the next raw turn (for a function source: whatever it returns, possibly an
    awaitable), or raises `ScriptExhaustedError`. ``give_back`` puts an undelivered turn back in
    front — the fake server uses it when a fault broke the stream before the turn was delivered.
    """

    def __init__(self, turns: TurnSource, *, when_exhausted: str | None = None) -> None:
        self._function = turns if callable(turns) else None
        self._pending: list[Turn] = [] if callable(turns) else list(turns)
        self._given = len(self._pending)
        self._when_exhausted = when_exhausted
        self._lock = threading.Lock()

    @property
    def remaining(self) -> int | None:
        """Turns left in a list script (``None`` for a function script)."""
        return None if self._function else len(self._pending)

    def take(self, body: dict[str, Any]) -> Any:
        if self._function is not None:
            return self._function(body)
        with self._lock:
            if self._pending:
                return self._pending.pop(0)
        return self.exhausted()

    def exhausted(self) -> Turn:
        """The turn to play when the script is over (or raise)."""
        if self._when_exhausted is not None:
            return [text_block(self._when_exhausted)]
        raise ScriptExhaustedError(
            f"the script has no turn left (it had {self._given} turn(s))"
            if self._function is None
            else "the turn function returned no turn",
            error_type="script_exhausted",
            hint="Add a turn to the script, or pass when_exhausted='...' to end with a text reply",
        )

    def extend(self, turns: Sequence[Turn]) -> None:
        """Append turns to a list script."""
        if self._function is not None:
            raise TypeError("cannot add turns to a script that is a function")
        with self._lock:
            self._pending.extend(turns)
            self._given += len(turns)

    def give_back(self, turn: Turn) -> None:
        if self._function is None:
            with self._lock:
                self._pending.insert(0, turn)
