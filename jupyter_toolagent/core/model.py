"""What the query loop needs from a model: raw Messages-API stream events.

A model turns one request body (exactly the JSON the Messages API takes) into the API's raw
stream events as plain dicts — ``message_start``, ``content_block_start``,
``content_block_delta``, ``content_block_stop``, ``message_delta``, ``message_stop`` — the
same shapes the API sends over SSE. `AnthropicModel` gets them from the official SDK over
HTTP; `ScriptedModel` makes them from hand-written turns. The loop folds them with one pure
accumulator, so both paths behave identically.

Before the first API event a model may yield ``{"type": "_request", "request_id": ...}``
(leading underscore: never an API event) so the run can show the request id.
Failures are raised as `jupyter_toolagent.errors.ModelAPIError`; an exception after some
events means the stream broke mid-message.
"""

from __future__ import annotations

from typing import Any, AsyncIterator, Protocol, runtime_checkable

from .abort import AbortSignal

StreamEvent = dict[str, Any]


@runtime_checkable
class Model(Protocol):
    @property
    def model_name(self) -> str: ...

    def stream(self, body: dict[str, Any], *, abort: AbortSignal) -> AsyncIterator[StreamEvent]:
        """Send ``body`` (``model`` already set) and yield raw stream events as dicts."""
        ...
