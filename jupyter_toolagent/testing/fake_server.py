"""A Messages-API server on 127.0.0.1 that plays scripted turns (SPEC §7.3).

It exists so that the real SDK path — HTTP, SSE parsing, retries, error classes — runs with no
API key: in the project's tests, in teaching notebooks and in the offline quickstart. So it
speaks the protocol as the API does, not as a convenient mock would:

* HTTP/1.1 with keep-alive, streamed responses in chunked encoding, one SSE event per chunk
  (with its ``event:`` line — the SDK drops data-only events), a ``request-id`` header on every
  response and the API's JSON error envelope;
* ``POST /v1/messages`` streaming and not, ``POST /v1/messages/count_tokens``; query strings
  (``?beta=true``) are ignored;
* a request without credentials gets 401; every request is validated (`validation`) and a
  broken one gets the API's 400 text;
* faults are injected with `inject` (`faults`); a turn broken by an error event or a cut is
  played again on the next request;
* a `RecordedStream` in the script is served byte for byte (`recorded`): streams the API
  really sent, including the strange ones no scripted turn produces, optionally cut after a
  given number of bytes. Each one is played once, cut or not.

Turns are the `ScriptedModel`'s (a list, or a function of the request body, sync or async);
see `jupyter_toolagent.models.scripted`. A turn function that raises, or a script that runs
out, gets a 500 with ``x-should-retry: false`` and a message saying so — the SDK must not
retry a bug in the script.

Every request is recorded (`RecordedRequest`) with credential header values replaced by
``"<present, not recorded>"``, so a recording can be printed or saved without the key.
Delivered messages are recorded *before* their last bytes are written: a client that has read
the whole stream must find its message in `responses` (under load the other order lost that
race).

Sockets get ``TCP_NODELAY``: each SSE event is its own small write, and with Nagle's
algorithm every response waits for the client's delayed ACK (measured 55 ms vs 12 ms per
streamed request on loopback).
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ..errors import ModelAPIError
from ..models.turns import PreparedTurn, TurnScript, TurnSource, prepare_turn, timed_events
from ..models.stream_events import estimate_tokens, message_stream_events, new_request_id
from ._http import _Handler, _HTTPServer, _StreamBroken
from .faults import Fault, StreamPlan, error_envelope, plan_stream
from .summaries import body_tokens, is_summary_request, prompt_too_long_message, summary_text
from .recorded import RecordedStream
from .validation import request_error

__all__ = ["CREDENTIAL_HEADERS", "FakeAnthropicServer", "NOT_RECORDED", "RecordedRequest"]

MESSAGES_PATH = "/v1/messages"
COUNT_TOKENS_PATH = "/v1/messages/count_tokens"
CREDENTIAL_HEADERS = frozenset({"authorization", "x-api-key", "proxy-authorization"})
NOT_RECORDED = "<present, not recorded>"


@dataclass
class RecordedRequest:
    """One request as the server received it (credential header values not kept)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    """The parsed JSON body (None when it was not JSON)."""
    raw: bytes = field(repr=False)
    request_id: str
    received_at: float
    """``time.monotonic()`` when the request was read."""

    @property
    def stream(self) -> bool:
        return isinstance(self.body, dict) and self.body.get("stream") is True


def _run_awaitable(value: Any) -> Any:
    async def wait() -> Any:
        return await value

    return asyncio.run(wait())


class FakeAnthropicServer:
    """The fake Messages API (see the module docstring).

    ``turns``: a list of turns or a function of the request body (sync or async) returning the
    next turn; ``when_exhausted``: text to answer with once the script is over (else 500).
    ``event_delay`` / ``block_delay`` pace every stream (a `ScriptedTurn` can override them).
    ``api_key``: if set, only this key is accepted (401 otherwise); by default any key is.
    ``validate=False`` skips the 400 checks (to see what a client does with a broken request).
    ``keep``: how many requests and responses `requests` / `responses` keep (the latest; None:
    all). Every request repeats the whole conversation, so a long-lived server — the offline demo
    in a kernel — must not keep them all.
    ``context_window``: a request counted (`summaries.body_tokens`: characters of the JSON body
    / 4) past it gets the API's 400 ``prompt is too long: N tokens > M maximum``.
    ``summarize``: answer the core's compaction request with a summary (`summaries`) without
    using a scripted turn; `summary_requests` counts them.
    """

    def __init__(
        self,
        turns: TurnSource = (),
        *,
        when_exhausted: str | None = None,
        event_delay: float = 0.0,
        block_delay: float = 0.0,
        text_chunk: int = 24,
        json_chunk: int = 16,
        pings: bool = True,
        validate: bool = True,
        api_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        keep: int | None = None,
        context_window: int | None = None,
        summarize: bool = True,
    ) -> None:
        self.context_window = context_window
        self.summarize = summarize
        self.summary_requests = 0
        self.too_long_answers = 0
        self._script = TurnScript(turns, when_exhausted=when_exhausted)
        self.event_delay = event_delay
        self.block_delay = block_delay
        self.text_chunk = text_chunk
        self.json_chunk = json_chunk
        self.pings = pings
        self.validate = validate
        self._api_key = api_key
        self._address = (host, port)
        self.keep = keep
        self.requests: list[RecordedRequest] = []
        self.responses: list[dict[str, Any]] = []
        """The assistant messages delivered, in order."""
        self._faults: list[list[Any]] = []  # [fault, times left]
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle ---------------------------------------------------------------------------
    def start(self) -> "FakeAnthropicServer":
        if self._httpd is not None:
            return self
        self._stopping.clear()
        httpd = _HTTPServer(self._address, _Handler)
        httpd.app = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-anthropic", daemon=True
        )
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop serving and drop open connections (streams in a pause end at once)."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout)

    def __enter__(self) -> "FakeAnthropicServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("the server is not running: call start() or use it as a context manager")
        host, port = self._httpd.server_address[:2]
        assert isinstance(host, str)  # an AF_INET server's address (bytes only for AF_UNIX)
        return f"http://{host}:{port}"

    @property
    def bodies(self) -> list[Any]:
        """The bodies of the ``/v1/messages`` requests, in order."""
        return [r.body for r in self.requests if urlsplit(r.path).path.rstrip("/") == MESSAGES_PATH]

    # --- script and faults -------------------------------------------------------------------
    def set_turns(self, turns: TurnSource, *, when_exhausted: str | None = None) -> None:
        """Replace the script (turns not yet played are dropped)."""
        self._script = TurnScript(turns, when_exhausted=when_exhausted)

    def add_turns(self, *turns: Any) -> None:
        """Append turns to a list script."""
        self._script.extend(turns)

    def inject(self, fault: Fault, *, times: int = 1) -> None:
        """Queue ``fault`` for the next ``times`` requests it applies to (FIFO)."""
        if times < 1:
            raise ValueError("times must be at least 1")
        with self._lock:
            self._faults.append([fault, times])

    def clear_faults(self) -> None:
        """Drop every queued fault."""
        with self._lock:
            self._faults.clear()

    @property
    def pending_faults(self) -> list[tuple[Fault, int]]:
        with self._lock:
            return [(fault, times) for fault, times in self._faults]

    def _take_fault(self, streaming: bool) -> Fault | None:
        with self._lock:
            for entry in self._faults:
                fault = entry[0]
                if fault.streaming_only and not streaming:
                    continue
                entry[1] -= 1
                if entry[1] <= 0:
                    self._faults.remove(entry)
                return fault
        return None

    def _untake_fault(self, fault: Fault | None) -> None:
        """Put back a fault taken for a request that ended before it could apply."""
        if fault is None:
            return
        with self._lock:
            if self._faults and self._faults[0][0] is fault:
                self._faults[0][1] += 1
            else:
                self._faults.insert(0, [fault, 1])

    # --- connections -------------------------------------------------------------------------
    def _connection_opened(self, connection: socket.socket) -> None:
        with self._lock:
            self._connections.add(connection)

    def _connection_closed(self, connection: socket.socket) -> None:
        with self._lock:
            self._connections.discard(connection)

    # --- serving -----------------------------------------------------------------------------
    def _serve(self, handler: _Handler) -> None:
        request_id = new_request_id()
        raw = handler.read_body()
        try:
            body = json.loads(raw) if raw else None
            parsed = True
        except ValueError:
            body, parsed = None, False
        headers = {
            name.lower(): (NOT_RECORDED if name.lower() in CREDENTIAL_HEADERS else value)
            for name, value in handler.headers.items()
        }
        self._record(self.requests, RecordedRequest(
            handler.command, handler.path, headers, body, raw, request_id, time.monotonic()
        ))

        def fail(status: int, error_type: str, message: str, extra: tuple[tuple[str, str], ...] = ()) -> None:
            handler.send_json(status, error_envelope(error_type, message, request_id), request_id, extra)

        path = urlsplit(handler.path).path.rstrip("/")
        if handler.command != "POST" or path not in (MESSAGES_PATH, COUNT_TOKENS_PATH):
            return fail(404, "not_found_error", f"Not found: {handler.command} {path}")
        auth_problem = self._auth_problem(handler)
        if auth_problem:
            return fail(401, "authentication_error", auth_problem)
        if not parsed:
            return fail(400, "invalid_request_error", "There was an error parsing the body of your request")
        if not isinstance(body, dict):
            return fail(400, "invalid_request_error", "Request body must be a JSON object")
        if path == COUNT_TOKENS_PATH:
            problem = request_error(body, count_tokens=True) if self.validate else None
            if problem:
                return fail(400, "invalid_request_error", problem)
            counted = {k: v for k, v in body.items() if k in ("system", "tools", "messages")}
            return handler.send_json(200, {"input_tokens": estimate_tokens(counted)}, request_id)

        streaming = body.get("stream") is True
        fault = self._take_fault(streaming)
        if fault is not None and fault.kind == "http":
            return fail(fault.status, fault.error_type, fault.message, fault.headers)
        problem = request_error(body) if self.validate else None
        if problem:
            self._untake_fault(fault)  # a stream fault waits for a stream
            return fail(400, "invalid_request_error", problem)
        if self.context_window is not None and (tokens := body_tokens(body)) > self.context_window:
            self._untake_fault(fault)
            with self._lock:
                self.too_long_answers += 1
            return fail(400, "invalid_request_error", prompt_too_long_message(tokens, self.context_window))
        try:
            if self.summarize and is_summary_request(body):
                with self._lock:
                    self.summary_requests += 1
                turn = prepare_turn(summary_text(body), model=str(body.get("model") or ""), request_body=body)
                source = None  # not a scripted turn: never given back to the script
            else:
                source, turn = self._next_turn(body)
        except _ScriptFailure as exc:
            self._untake_fault(fault)
            return fail(500, "api_error", str(exc), (("x-should-retry", "false"),))
        if isinstance(source, RecordedStream):
            return self._replay(handler, request_id, source)
        if not streaming:
            if turn.delay and self._stopping.wait(turn.delay):
                return handler.cut()
            self._record(self.responses, copy.deepcopy(turn.message))
            return handler.send_json(200, turn.message, request_id)
        self._stream(handler, request_id, source, turn, fault)

    def _record(self, log: list[Any], item: Any) -> None:
        with self._lock:
            log.append(item)
            if self.keep is not None and len(log) > self.keep:
                del log[: len(log) - self.keep]

    def _auth_problem(self, handler: _Handler) -> str | None:
        key = handler.headers.get("x-api-key")
        authorization = handler.headers.get("authorization") or ""
        if not key and authorization.lower().startswith("bearer "):
            key = authorization[7:].strip()
        if not key:
            return "x-api-key or authorization header is required"
        if self._api_key is not None and key != self._api_key:
            return "invalid x-api-key"
        return None

    def _next_turn(self, body: dict[str, Any]) -> tuple[Any, PreparedTurn]:
        try:
            source = self._script.take(body)
            if inspect.isawaitable(source):
                source = _run_awaitable(source)
            if source is None:
                source = self._script.exhausted()
            if isinstance(source, RecordedStream):
                return source, None  # type: ignore[return-value]  # replayed as recorded: nothing prepared
        except ModelAPIError as exc:
            raise _ScriptFailure(f"fake server: {exc.message}" + (f" ({exc.hint})" if exc.hint else "")) from exc
        except Exception as exc:
            raise _ScriptFailure(f"fake server: the turn function failed: {type(exc).__name__}: {exc}") from exc
        try:
            return source, prepare_turn(source, model=str(body.get("model") or ""), request_body=body)
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            raise _ScriptFailure(f"fake server: the scripted turn cannot be played: {exc}") from exc

    def _stream(self, handler: _Handler, request_id: str, source: Any, turn: PreparedTurn, fault: Fault | None) -> None:
        events = turn.events if turn.events is not None else message_stream_events(
            turn.message, text_chunk=self.text_chunk, json_chunk=self.json_chunk, pings=self.pings
        )
        steps = timed_events(
            events,
            delay=turn.delay,
            event_delay=self.event_delay if turn.event_delay is None else turn.event_delay,
            block_delay=self.block_delay if turn.block_delay is None else turn.block_delay,
        )
        plan = plan_stream(steps, fault)
        if plan.broken and source is not None:
            self._script.give_back(source)  # before any byte: the retry may come at once
        delivered = False
        try:
            handler.start_stream(request_id)
            for position, (pause, event) in enumerate(plan.steps):
                self._pause(pause)
                if not plan.broken and position == len(plan.steps) - 1:
                    self._record(self.responses, copy.deepcopy(turn.message))
                    delivered = True
                handler.send_event(event["type"], event)
            self._pause(plan.final_pause)
            self._finish(handler, plan, turn, delivered)
        except _StreamBroken:
            handler.close_connection = True
            if not plan.broken and not delivered and source is not None:
                self._script.give_back(source)

    def _finish(self, handler: _Handler, plan: StreamPlan, turn: PreparedTurn, delivered: bool) -> None:
        if plan.ending == "cut":
            return handler.cut()
        if plan.ending == "error":
            handler.send_event("error", plan.error or error_envelope("api_error", "error"))
        elif not delivered:  # a plan with no events at all
            self._record(self.responses, copy.deepcopy(turn.message))
        handler.end_stream()

    def _replay(self, handler: _Handler, request_id: str, recorded: RecordedStream) -> None:
        """Write a recorded body as it is, event by event, then end it or drop the connection."""
        self._record(self.responses, {"recorded": recorded.name, "bytes": len(recorded.served)})
        handler.start_stream(request_id, status=recorded.status, content_type=recorded.content_type)
        served = recorded.served
        position = 0
        while position < len(served):
            end = served.find(b"\n\n", position)
            stop = len(served) if end < 0 else end + 2
            handler.send_chunk(served[position:stop])
            position = stop
        if recorded.cut_after is not None:
            return handler.cut()
        handler.end_stream()

    def _pause(self, seconds: float) -> None:
        if seconds > 0 and self._stopping.wait(seconds):
            raise _StreamBroken("the server is stopping")


class _ScriptFailure(Exception):
    """The script could not give a turn; answered with a 500 the SDK will not retry."""
