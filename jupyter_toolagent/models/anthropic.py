"""The Messages API through the official SDK's async streaming (SPEC §7.1).

`AnthropicModel.stream` sends one request body with ``AsyncAnthropic.messages.stream`` and
yields the API's *raw* events as dicts, the same shapes `ScriptedModel` yields, so one
accumulator in the core folds both. The SDK's own derived events (``text``, ``input_json``,
``thinking``, ``signature``, ``citation``) are dropped, and its ``content_block_stop`` /
``message_stop`` — which it enriches with a snapshot — are reduced to the raw form: the
core decides from the raw ``partial_json`` whether a tool input is complete, because the SDK's
partial-JSON snapshot silently drops an unfinished string (Appendix B).

Why the SDK and not a hand-written SSE client: retries with ``retry-after``, auth, headers,
``ANTHROPIC_BASE_URL`` and error classes are its job, and users expect its behaviour.

Decisions:

* Body keys the installed SDK's ``messages.stream`` does not name go through ``extra_body``,
  so a newer API parameter works before the SDK learns it.
* One ``AsyncAnthropic`` per event loop: its connection pool belongs to the loop that opened
  it, and `Agent.run_sync` runs each call on a fresh loop.
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
import weakref
from typing import Any, AsyncIterator

from ..core.abort import AbortSignal
from ..errors import ModelAPIError
from .api_errors import missing_key_error, to_model_api_error

__all__ = ["AnthropicModel", "raw_event"]

# Derived events the SDK adds next to the raw ones; the raw events carry the same data.
_DERIVED_EVENTS = frozenset({"text", "input_json", "thinking", "signature", "citation"})
_NOT_PARAMS = frozenset({"self", "extra_headers", "extra_query", "extra_body", "timeout", "output_format"})

_REQUEST, _EVENT, _END, _ERROR, _ABORTED = "request", "event", "end", "error", "aborted"


def raw_event(event: Any) -> dict[str, Any] | None:
    """The raw API event behind an SDK stream event, or None for an SDK-derived one."""
    kind = getattr(event, "type", None) if not isinstance(event, dict) else event.get("type")
    if kind in _DERIVED_EVENTS:
        return None
    if kind == "content_block_stop":
        index = event["index"] if isinstance(event, dict) else event.index
        return {"type": "content_block_stop", "index": index}
    if kind == "message_stop":
        return {"type": "message_stop"}
    if isinstance(event, dict):
        return dict(event)
    to_dict = getattr(event, "to_dict", None)
    if to_dict is not None:
        return to_dict(mode="json")
    return None


@functools.lru_cache(maxsize=1)
def _stream_parameters() -> frozenset[str]:
    """The body keys the installed SDK's ``messages.stream`` takes as keyword arguments."""
    from anthropic.resources.messages import AsyncMessages

    return frozenset(inspect.signature(AsyncMessages.stream).parameters) - _NOT_PARAMS


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

    def _secrets(self, client: Any) -> tuple[str | None, ...]:
        return (self._api_key, getattr(client, "api_key", None), getattr(client, "auth_token", None))

    @staticmethod
    def _split(body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        known = _stream_parameters()
        kwargs: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in body.items():
            if key == "stream":
                continue  # messages.stream always streams
            (kwargs if key in known else extra)[key] = value
        return kwargs, extra

    async def stream(self, body: dict[str, Any], *, abort: AbortSignal) -> AsyncIterator[dict[str, Any]]:
        if abort.aborted:
            return
        client = self.client()
        secrets = self._secrets(client)
        if not any((client.api_key, client.auth_token, getattr(client, "credentials", None))):
            raise missing_key_error()
        kwargs, extra = self._split(body)
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        pump = asyncio.ensure_future(self._pump(client, kwargs, extra, queue))
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
    async def _pump(client: Any, kwargs: dict[str, Any], extra: dict[str, Any], queue: asyncio.Queue[Any]) -> None:
        """Run the SDK stream and hand every raw event to ``queue``; cancelled on abort."""
        try:
            try:
                manager = client.messages.stream(**kwargs, extra_body=extra or None)
            except TypeError as exc:  # e.g. no max_tokens: nothing was sent
                raise ModelAPIError(f"the request body cannot be sent: {exc}", error_type="invalid_request") from None
            async with manager as stream:
                queue.put_nowait((_REQUEST, stream.request_id))
                async for event in stream:
                    raw = raw_event(event)
                    if raw is not None:
                        queue.put_nowait((_EVENT, raw))
            queue.put_nowait((_END, None))
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # handed to the consumer, which maps it
            queue.put_nowait((_ERROR, exc))
