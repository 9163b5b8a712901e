"""Failures the fake server can inject, and how each one changes a response (SPEC §7.3).

``server.inject(Fault.rate_limit(retry_after_ms=50), times=2)`` queues a fault; the queue is
FIFO and each ``/v1/messages`` request takes the first queued fault that applies to it
(``count_tokens`` requests take none). HTTP faults (429, 529,
5xx, any status) replace the whole response, before the body is validated, as the API's
front door does. Stream faults change a streamed 200 response and wait for a streaming
request (a non-streaming request passes them by):

* ``error_event`` — an ``event: error`` after some events, then the stream ends;
* ``cut_in_tool_use`` — the connection is dropped inside the first ``tool_use`` block's JSON,
  so that block never gets its ``content_block_stop``;
* ``stall`` — a pause after some events (a short client timeout turns it into a timeout);
* ``missing_message_stop`` — the stream ends cleanly without ``message_stop`` (and, by
  default, without ``message_delta``: the SDK then reports ``stop_reason=None``).

A turn whose stream was broken by an error event or a cut was not delivered: the server plays
it again on the next request, as a model would answer the retried request anew.

`plan_stream` is pure (events in, plan out), so what each fault does is testable without HTTP.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Fault", "FaultKind", "StreamPlan", "error_envelope", "plan_stream"]

FaultKind = Literal["http", "error_event", "cut", "stall", "missing_message_stop"]


def error_envelope(error_type: str, message: str, request_id: str | None = None) -> dict[str, Any]:
    """The API's error body: ``{"type": "error", "error": {...}, "request_id": ...}``."""
    body: dict[str, Any] = {"type": "error", "error": {"type": error_type, "message": message}}
    if request_id is not None:
        body["request_id"] = request_id
    return body


def _retry_headers(retry_after_ms: float | None, retry_after: float | None) -> tuple[tuple[str, str], ...]:
    headers: list[tuple[str, str]] = []
    if retry_after_ms is not None:
        headers.append(("retry-after-ms", str(int(retry_after_ms))))
        if retry_after is None:
            retry_after = math.ceil(retry_after_ms / 1000)
    if retry_after is not None:
        headers.append(("retry-after", str(int(math.ceil(retry_after)))))
    return tuple(headers)


@dataclass(frozen=True)
class Fault:
    """One injected failure. Build it with the class methods, not directly."""

    kind: FaultKind
    status: int = 200
    error_type: str = "api_error"
    message: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    after_events: int = 0
    after_json_deltas: int = 1
    seconds: float = 0.0
    drop_message_delta: bool = True

    @property
    def streaming_only(self) -> bool:
        return self.kind != "http"

    # --- HTTP faults -------------------------------------------------------------------------
    @classmethod
    def http_error(
        cls,
        status: int,
        error_type: str,
        message: str,
        *,
        headers: dict[str, str] | None = None,
        should_retry: bool | None = None,
    ) -> "Fault":
        """Any error response; ``should_retry`` sets ``x-should-retry`` (the SDK obeys it)."""
        extra = dict(headers or {})
        if should_retry is not None:
            extra["x-should-retry"] = "true" if should_retry else "false"
        return cls("http", status=status, error_type=error_type, message=message, headers=tuple(extra.items()))

    @classmethod
    def prompt_too_long(cls, tokens: int = 250_000, maximum: int = 200_000) -> "Fault":
        """HTTP 400 ``invalid_request_error``: ``prompt is too long: N tokens > M maximum``."""
        return cls.http_error(400, "invalid_request_error",
                              f"prompt is too long: {tokens} tokens > {maximum} maximum", should_retry=False)

    @classmethod
    def rate_limit(
        cls,
        retry_after_ms: float | None = None,
        *,
        retry_after: float | None = None,
        message: str = "Number of request tokens has exceeded your per-minute rate limit",
    ) -> "Fault":
        """HTTP 429 ``rate_limit_error``, with ``retry-after-ms`` / ``retry-after`` if given."""
        return cls("http", status=429, error_type="rate_limit_error", message=message,
                   headers=_retry_headers(retry_after_ms, retry_after))

    @classmethod
    def overloaded(cls, retry_after_ms: float | None = None, *, message: str = "Overloaded") -> "Fault":
        """HTTP 529 ``overloaded_error``."""
        return cls("http", status=529, error_type="overloaded_error", message=message,
                   headers=_retry_headers(retry_after_ms, None))

    @classmethod
    def server_error(
        cls, status: int = 500, *, message: str = "Internal server error", retry_after_ms: float | None = None
    ) -> "Fault":
        """HTTP 5xx ``api_error``."""
        return cls("http", status=status, error_type="api_error", message=message,
                   headers=_retry_headers(retry_after_ms, None))

    # --- stream faults -----------------------------------------------------------------------
    @classmethod
    def error_event(cls, error_type: str = "overloaded_error", *, after_events: int = 3,
                    message: str | None = None) -> "Fault":
        """An ``event: error`` after ``after_events`` events (pings count), then the end."""
        return cls("error_event", error_type=error_type, after_events=after_events,
                   message=message or ("Overloaded" if error_type == "overloaded_error" else error_type))

    @classmethod
    def cut_in_tool_use(cls, after_json_deltas: int = 1) -> "Fault":
        """Drop the connection after the first tool_use block's ``after_json_deltas``-th
        ``input_json_delta`` (the first one of a block is the API's empty one). A turn without
        tool_use is cut after the first delta of its first block."""
        return cls("cut", after_json_deltas=max(0, after_json_deltas))

    @classmethod
    def stall(cls, seconds: float, *, after_events: int = 1) -> "Fault":
        """Pause ``seconds`` after ``after_events`` events, then go on (if the client is still there)."""
        return cls("stall", seconds=seconds, after_events=after_events)

    @classmethod
    def missing_message_stop(cls, *, drop_message_delta: bool = True) -> "Fault":
        """End the stream cleanly without ``message_stop`` (and ``message_delta``)."""
        return cls("missing_message_stop", drop_message_delta=drop_message_delta)


@dataclass
class StreamPlan:
    """What to send for one streamed turn: ``(pause, event)`` pairs, then how to end."""

    steps: list[tuple[float, dict[str, Any]]]
    ending: Literal["end", "error", "cut"] = "end"
    error: dict[str, Any] | None = None
    broken: bool = False
    """The turn was not delivered (error event or cut): it is played again next time."""
    final_pause: float = 0.0
    """A pause after the last step, before the ending (a stall after every event)."""
    notes: list[str] = field(default_factory=list)


def _cut_position(steps: list[tuple[float, dict[str, Any]]], after_json_deltas: int) -> int:
    """How many steps to send before the cut: inside the first tool_use block, after its
    ``after_json_deltas``-th delta (or, without tool_use, after the first block's first delta)."""
    starts = [(n, e) for n, (_, e) in enumerate(steps) if e.get("type") == "content_block_start"]
    if not starts:
        return max(1, len(steps) - 1)
    tool = next(((n, e) for n, e in starts if e["content_block"].get("type") == "tool_use"), None)
    position, start_event = tool if tool is not None else starts[0]
    index, wanted = start_event["index"], (after_json_deltas if tool is not None else 1)
    seen = 0
    for position in range(position + 1, len(steps)):
        event = steps[position][1]
        if event.get("index") != index:
            continue
        if event.get("type") == "content_block_stop" or seen >= wanted:
            return position  # this block's stop is never sent
        if event.get("type") == "content_block_delta":
            seen += 1
    return len(steps)


def plan_stream(steps: list[tuple[float, dict[str, Any]]], fault: Fault | None) -> StreamPlan:
    """Apply a stream fault (or none) to the timed events of one turn."""
    steps = list(steps)
    if fault is None or fault.kind == "http":
        return StreamPlan(steps)
    if fault.kind == "error_event":
        keep = min(max(0, fault.after_events), max(0, len(steps) - 1))
        error = error_envelope(fault.error_type, fault.message)
        return StreamPlan(steps[:keep], ending="error", error=error, broken=True)
    if fault.kind == "cut":
        return StreamPlan(steps[: _cut_position(steps, fault.after_json_deltas)], ending="cut", broken=True)
    if fault.kind == "stall":
        at = max(0, fault.after_events)
        if at >= len(steps):
            return StreamPlan(steps, final_pause=fault.seconds)
        pause, event = steps[at]
        steps[at] = (pause + fault.seconds, event)
        return StreamPlan(steps)
    if fault.kind == "missing_message_stop":
        dropped = {"message_stop", "message_delta"} if fault.drop_message_delta else {"message_stop"}
        return StreamPlan([(p, e) for p, e in steps if e.get("type") not in dropped])
    raise ValueError(f"unknown fault kind {fault.kind!r}")
