"""A model whose assistant turns are written by hand (SPEC §7.2).

Teachers write ``tool_use`` blocks to show validation, permissions, scheduling and pairing
without a model; tests script exact conversations; demos run offline. The turns are streamed
as the same raw events the API sends (`message_stream_events`, pings left out as the SDK
leaves them out), so everything downstream runs the production path.

A turn is any of:

* a list of content blocks — ``[{"type": "text", "text": "Looking"}, tool_use_block("Read", {...})]``;
* a string — one text block;
* a full message dict with ``content`` (and optionally ``stop_reason``, ``stop_sequence``,
  ``usage``, ``id``); an explicit ``"stop_reason": None`` streams a message without a stop
  reason (what a truncated stream looks like);
* a list of raw stream events (the first one a ``message_start``) — streamed exactly as
  written, to script what no well-formed message produces: a ``max_tokens`` stop inside a
  tool's JSON, a block that never gets its ``content_block_stop``, a missing ``message_stop``;
* a `ScriptedTurn`, which adds timing (its ``events`` field takes raw events too).

Turns come from a list (consumed in order) or from a function of the request body (sync or
async) that returns the next turn — e.g. to answer based on the tool results it was sent.
Without an explicit ``stop_reason`` a turn that contains ``tool_use`` stops with ``tool_use``,
any other with ``end_turn``. Missing ``tool_use`` ids and message ids are filled with fresh
API-shaped ids every time a turn is played, so replaying a script never repeats an id.

Running out of turns raises `ScriptExhaustedError` (a `ModelAPIError`, so the run shows it
like any model failure) — a script that ends early is a mistake worth seeing. Pass
``when_exhausted="Done."`` to answer every extra request with that text instead. A turn that
cannot be played (not a block list, a ``tool_use`` without a name, a turn function that
raises) is a `ModelAPIError` of type ``invalid_script`` naming the problem.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import threading
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Awaitable, Callable, Sequence, Union

from ..core.abort import AbortSignal
from ..core.accumulator import MessageAccumulator
from ..errors import ModelAPIError
from .stream_events import (
    estimate_tokens,
    events_without_pings,
    message_stream_events,
    new_message_id,
    new_request_id,
    new_tool_use_id,
)

__all__ = [
    "PreparedTurn",
    "ScriptExhaustedError",
    "ScriptedModel",
    "ScriptedTurn",
    "TurnScript",
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


class ScriptExhaustedError(ModelAPIError):
    """The script has no turn left for a request."""


def invalid_script(problem: str) -> ModelAPIError:
    """The error for a turn that cannot be played (shown like any model failure)."""
    return ModelAPIError(
        problem,
        error_type="invalid_script",
        hint="a turn is a list of content blocks, a string, a message dict, a list of raw stream "
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


def is_raw_events(value: Any) -> bool:
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
        return ScriptedTurn(events=list(turn))  # type: ignore[arg-type]
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
        return ScriptedTurn(content=list(turn))
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
    message = copy.deepcopy(acc.message) if acc.message is not None else {"type": "message", "role": "assistant"}
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
            hint="add a turn to the script, or pass when_exhausted='...' to end with a text reply",
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


async def _aborted_within(seconds: float, abort: AbortSignal) -> bool:
    """Sleep ``seconds`` unless aborted first; say whether the abort happened."""
    if abort.aborted:
        return True
    if seconds <= 0:
        return False
    try:
        await asyncio.wait_for(abort.wait(), timeout=seconds)
    except asyncio.TimeoutError:
        return False
    return True


class ScriptedModel:
    """Implements the `Model` protocol from scripted turns (see the module docstring).

    ``event_delay`` pauses before every event, ``block_delay`` additionally before each block
    after the first. Every request body is kept in ``requests`` (deep copies) so a test or a
    teacher can see exactly what would have been sent. When aborted the stream stops at the
    next event or at once during a pause; it ends quietly — the run knows it aborted.
    """

    def __init__(
        self,
        turns: TurnSource,
        *,
        model: str = "scripted",
        event_delay: float = 0.0,
        block_delay: float = 0.0,
        text_chunk: int = 24,
        json_chunk: int = 16,
        when_exhausted: str | None = None,
    ) -> None:
        self._model = model
        self._script = TurnScript(turns, when_exhausted=when_exhausted)
        self.event_delay = event_delay
        self.block_delay = block_delay
        self.text_chunk = text_chunk
        self.json_chunk = json_chunk
        self.requests: list[dict[str, Any]] = []
        self.messages_sent: list[dict[str, Any]] = []

    @property
    def model_name(self) -> str:
        return self._model

    async def next_turn(self, body: dict[str, Any]) -> PreparedTurn:
        number = len(self.requests)
        try:
            raw = self._script.take(body)
            if inspect.isawaitable(raw):
                raw = await raw
        except ModelAPIError:
            raise
        except Exception as exc:
            raise invalid_script(
                f"the turn function failed on request {number} ({type(exc).__name__}: {exc})"
            ) from exc
        if raw is None:
            raw = self._script.exhausted()
        try:
            return prepare_turn(raw, model=str(body.get("model") or self._model), request_body=body)
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            raise invalid_script(f"the turn for request {number} cannot be played: {exc}") from exc

    async def stream(self, body: dict[str, Any], *, abort: AbortSignal) -> AsyncIterator[dict[str, Any]]:
        self.requests.append(copy.deepcopy(body))
        turn = await self.next_turn(body)
        self.messages_sent.append(copy.deepcopy(turn.message))
        if turn.events is not None:
            events = turn.events
        else:
            events = events_without_pings(
                message_stream_events(turn.message, text_chunk=self.text_chunk, json_chunk=self.json_chunk)
            )
        if abort.aborted:
            return
        yield {"type": "_request", "request_id": new_request_id()}
        schedule = timed_events(
            events,
            delay=turn.delay,
            event_delay=self.event_delay if turn.event_delay is None else turn.event_delay,
            block_delay=self.block_delay if turn.block_delay is None else turn.block_delay,
        )
        for pause, event in schedule:
            if await _aborted_within(pause, abort):
                return
            yield event
