"""A model whose assistant turns are written by hand (SPEC §7.2).

Teachers write ``tool_use`` blocks to show validation, permissions, scheduling and pairing
without a model; tests script exact conversations; demos run offline. The turns (see
`turns` for every form a turn may take) are streamed as the same raw events the API sends
(`message_stream_events`, pings left out as the SDK leaves them out), so everything
downstream runs the production path.

Turns come from a list (consumed in order) or from a function of the request body (sync or
async) that returns the next turn — e.g. to answer based on the tool results it was sent.

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
from typing import Any, AsyncIterator

from ..core.abort import AbortSignal
from ..errors import ModelAPIError
from .stream_events import events_without_pings, message_stream_events, new_request_id
from .turns import PreparedTurn, TurnScript, TurnSource, invalid_script, prepare_turn, timed_events

__all__ = ["ScriptedModel"]


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
