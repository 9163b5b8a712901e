"""The Messages API through the official SDK's async streaming (SPEC §7.1).

`AnthropicModel.stream` sends one request body with the SDK's async client and yields the
API's *raw* events as the plain dicts that came over the wire — the same shapes
`ScriptedModel` yields — so one accumulator in the core folds both. The product folds the
events itself (``core.accumulator``): the SDK's ``messages.stream`` accumulator raises on
streams the API really sends (omitted usage fields, tool JSON that does not parse) and its
partial-JSON snapshot silently drops an unfinished string (Appendix B).

The request goes out as ``messages.create(stream=True)`` does — the client's ``post`` to
``/v1/messages`` with the SDK's own ``AsyncStream`` — but with ``cast_to=object``, so each
event is the JSON dict as sent rather than an SDK model. Models would have to be dumped back
to dicts, and a block type the installed SDK does not know (``compaction``, ``fallback``, …)
comes back from that dump coerced, with pydantic serializer warnings on stderr.

Why the SDK and not a hand-written SSE client: retries with ``retry-after``, auth, headers,
``ANTHROPIC_BASE_URL``, SSE parsing, mid-stream ``error`` events and error classes are its
job, and users expect its behaviour.

Decisions:

* The body is sent as given (a newer API parameter works before the SDK learns it), encoded
  here as the SDK encodes it when it is plain JSON (`_encoded`: the SDK's own preparation walks
  the whole conversation on every request); the keys
  ``messages.create`` requires are checked against its signature first, so a body it could not
  send fails before anything is sent, as it would through ``messages.create``.
* One ``AsyncAnthropic`` per event loop: its connection pool belongs to the loop that opened
  it, and `Agent.run_sync` runs each call on a fresh loop (and closes that loop's client with
  `aclose` before the loop ends — otherwise its connections are closed later by the garbage
  collector, on a loop that no longer runs: "Event loop is closed").
* Abort is raced against everything, including the SDK's retry sleeps (a 429 may ask for a
  20 s wait): the SDK call runs in a pump task that is cancelled when the run is aborted, so
  the stream ends at once and quietly (the run knows why it stopped).
* Every failure leaves as a `ModelAPIError` with status, error type, request id and hint
  (`api_errors`), with the key scrubbed and the SDK exception not chained (its text may hold
  a response body).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import weakref
from typing import Any, AsyncIterator

from ..core.abort import AbortSignal
from ..errors import ModelAPIError
from .api_errors import missing_key_error, to_model_api_error

__all__ = ["AnthropicModel"]

_NOT_PARAMS = frozenset({"self", "stream", "extra_headers", "extra_query", "extra_body", "timeout", "output_format"})

_REQUEST, _EVENT, _END, _ERROR, _ABORTED = "request", "event", "end", "error", "aborted"


@functools.lru_cache(maxsize=1)
def _create_signature() -> inspect.Signature:
    """The installed SDK's ``messages.create`` signature (which body keys it requires)."""
    from anthropic.resources.messages import AsyncMessages

    return inspect.signature(AsyncMessages.create)


def _stream_parameters() -> frozenset[str]:
    """The body keys the installed SDK's ``messages.create`` takes as keyword arguments."""
    return frozenset(_create_signature().parameters) - _NOT_PARAMS


def _sendable_problem(body: dict[str, Any]) -> str | None:
    """Why ``messages.create`` would refuse ``body`` before sending it (a required key missing)."""
    known = _stream_parameters()
    try:
        _create_signature().bind(None, **{k: v for k, v in body.items() if k in known})
    except TypeError as exc:
        return str(exc)
    return None


def _encoded(body: dict[str, Any]) -> bytes | None:
    """``body`` as the JSON bytes the SDK would send for it, or None when it is not plain JSON.

    Handed a ``body``, the SDK first copies the whole tree (looking for file inputs and omitted
    values) and then encodes it — per request, a walk over the entire conversation. A request
    body built by the core is plain JSON, so it is encoded here the way the SDK encodes (compact
    separators, UTF-8 unescaped, no NaN) and sent as the content: the same bytes, without the
    walk. Anything else (a NaN, an object JSON does not know) goes the SDK's way, unchanged.
    """
    try:
        return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
    except (TypeError, ValueError):
        return None


class AnthropicModel:
    """Implements the `Model` protocol over ``anthropic.AsyncAnthropic`` (see module docstring).

    ``api_key`` and ``base_url`` default to ``ANTHROPIC_API_KEY`` / ``ANTHROPIC_BASE_URL`` (the
    SDK reads them); ``max_retries`` and ``timeout`` (seconds) are the SDK's.
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int = 2,
        timeout: float | None = None,
        default_headers: dict[str, str] | None = None,
    ) -> None:
        self._model = model
        self._api_key = api_key
        self._base_url = base_url
        self.max_retries = max_retries
        self.timeout = timeout
        self.default_headers = dict(default_headers or {})
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()

    @property
    def model_name(self) -> str:
        return self._model

    @property
    def context_window(self) -> int | None:
        """The model's window from the maintained table (`context_windows`); None if unknown."""
        from .context_windows import context_window_for

        return context_window_for(self._model)

    def __repr__(self) -> str:  # never shows the key
        return f"AnthropicModel({self._model!r})"

    def client(self) -> Any:
        """The ``AsyncAnthropic`` client of the running event loop (made on first use)."""
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            from anthropic import AsyncAnthropic

            options: dict[str, Any] = {"max_retries": self.max_retries}
            if self._api_key is not None:
                options["api_key"] = self._api_key
            if self._base_url is not None:
                options["base_url"] = self._base_url
            if self.timeout is not None:
                options["timeout"] = self.timeout
            if self.default_headers:
                options["default_headers"] = self.default_headers
            try:
                client = AsyncAnthropic(**options)
            except Exception as exc:  # e.g. a named credentials profile that cannot be loaded
                raise to_model_api_error(exc, secrets=(self._api_key,)) from None
            self._clients[loop] = client
        return client

    async def aclose(self) -> None:
        """Close the running loop's client and its connections (a later call makes a new one)."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()

    def protected_values(self) -> tuple[str, ...]:
        """The credentials this model authenticates with: the session scrubs them from every
        result, notice and error (SPEC §5.6), wherever they came from (argument, environment,
        a credentials profile the SDK loaded)."""
        found = [self._api_key]
        for client in list(self._clients.values()):
            found += [getattr(client, "api_key", None), getattr(client, "auth_token", None)]
        return tuple(v for v in found if isinstance(v, str) and v)

    def _secrets(self, client: Any) -> tuple[str | None, ...]:
        return (self._api_key, getattr(client, "api_key", None), getattr(client, "auth_token", None))

    async def stream(self, body: dict[str, Any], *, abort: AbortSignal) -> AsyncIterator[dict[str, Any]]:
        if abort.aborted:
            return
        client = self.client()
        secrets = self._secrets(client)
        if not any((client.api_key, client.auth_token, getattr(client, "credentials", None))):
            raise missing_key_error()
        problem = _sendable_problem(body)
        if problem is not None:  # e.g. no max_tokens: nothing is sent
            raise ModelAPIError(f"the request body cannot be sent: {problem}", error_type="invalid_request")
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        pump = asyncio.ensure_future(self._pump(client, {**body, "stream": True}, queue))
        watcher = asyncio.ensure_future(abort.wait())
        watcher.add_done_callback(lambda f: None if f.cancelled() else queue.put_nowait((_ABORTED, None)))
        request_id: str | None = None
        try:
            while True:
                kind, value = await queue.get()
                if abort.aborted or kind in (_ABORTED, _END):
                    return
                if kind == _EVENT:
                    yield value
                elif kind == _REQUEST:
                    request_id = value
                    yield {"type": "_request", "request_id": value}
                else:
                    raise to_model_api_error(value, secrets=secrets, request_id=request_id) from None
        finally:
            watcher.cancel()
            if not pump.done():
                pump.cancel()
            await asyncio.gather(pump, return_exceptions=True)

    @staticmethod
    async def _pump(client: Any, body: dict[str, Any], queue: asyncio.Queue[Any]) -> None:
        """Run the SDK stream and hand every raw event to ``queue``; cancelled on abort."""
        from anthropic import AsyncStream

        try:
            encoded = _encoded(body)
            if encoded is not None:
                stream = await client.post(
                    "/v1/messages", content=encoded, cast_to=object, stream=True, stream_cls=AsyncStream[object],
                )
            else:  # a value plain JSON cannot hold: the SDK's own preparation takes it
                stream = await client.post(
                    "/v1/messages", body=body, cast_to=object, stream=True, stream_cls=AsyncStream[object],
                )
            async with stream:  # closes the response however the pump ends
                queue.put_nowait((_REQUEST, stream.response.headers.get("request-id")))
                async for event in stream:
                    if isinstance(event, dict):
                        queue.put_nowait((_EVENT, event))
            queue.put_nowait((_END, None))
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # handed to the consumer, which maps it
            queue.put_nowait((_ERROR, exc))
