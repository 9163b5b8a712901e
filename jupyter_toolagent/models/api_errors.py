"""Turn SDK and transport failures into one `ModelAPIError` a person can act on.

The SDK raises a zoo of exceptions, some only after its own retries, some from deep in the
HTTP stack while a stream is being read (``httpx2.RemoteProtocolError`` when a connection drops
mid-body, ``httpx2.ReadTimeout`` when it stalls) and some with no HTTP status at all. The cell
shows one line: what happened, the HTTP status and the API's error type, the request id (the
thing support asks for), and a hint on what to do — which depends on whether the SDK already
retried (429/5xx/529 before the stream) or never will (an ``error`` event inside a 200 stream).

Nothing here may leak a protected value: messages and response bodies pass through the
session's one scrubber (`core.secrets`), given the key the client was built with on top of the
environment's secret-looking variables, before they are shown; very long bodies (an HTML error
page from a proxy) are shortened.
"""

from __future__ import annotations

from typing import Any, Iterable

from ..core.secrets import SecretScrubber, environment_scrubber
from ..errors import ModelAPIError

__all__ = ["MAX_MESSAGE_CHARS", "missing_key_error", "to_model_api_error"]

MAX_MESSAGE_CHARS = 600


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _shorten(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"


def missing_key_error(detail: str | None = None) -> ModelAPIError:
    return ModelAPIError(
        detail or "no API key: ANTHROPIC_API_KEY is not set and no api_key was given",
        error_type="authentication_error",
        hint="Set ANTHROPIC_API_KEY (or pass api_key=...), or run offline against "
        "jupyter_toolagent.testing.FakeAnthropicServer by setting ANTHROPIC_BASE_URL to its base_url",
    )


def _retries_taken(response: Any) -> int | None:
    """How many times the SDK retried before this response (its ``x-stainless-retry-count``)."""
    try:
        return int(response.request.headers.get("x-stainless-retry-count"))
    except (AttributeError, TypeError, ValueError, RuntimeError):
        return None


def _retry_after(response: Any) -> str | None:
    headers = getattr(response, "headers", None) or {}
    if headers.get("retry-after-ms"):
        return f"{headers['retry-after-ms']} ms"
    if headers.get("retry-after"):
        return f"{headers['retry-after']} s"
    return None


def _retried(retries: int | None) -> str:
    if retries is None:
        return "after the SDK's retries"
    return f"after {retries} retr{'y' if retries == 1 else 'ies'} by the SDK"


def _status_hint(status: int, error_type: str | None, response: Any) -> str:
    retries = _retries_taken(response)
    if status == 200:
        return (
            f"the API sent an error event ({error_type or 'error'}) after the response had started: "
            "the message is incomplete (the SDK does not retry this): "
            "its complete blocks and the results of the calls that ran are kept, and the run goes on by itself (at most 3 times per run)"
        )
    if status == 401:
        return "the API key was rejected: check ANTHROPIC_API_KEY"
    if status == 403:
        return "this key is not allowed to do this (check the model and the key's workspace)"
    if status == 404:
        return "check the model name (--model / TOOLAGENT_MODEL) and ANTHROPIC_BASE_URL"
    if status == 413:
        return "the request is too large: start a new conversation (--new) or send smaller tool results"
    if status == 400:
        return "the API rejected the request as invalid; the message above says what to change"
    if status == 429:
        wait = _retry_after(response)
        return (
            f"rate limited {_retried(retries)}"
            + (f" (the API asked to wait {wait})" if wait else "")
            + "; wait a moment and run the cell again, or raise max_retries"
        )
    if status == 529:
        return f"the API is overloaded {_retried(retries)}; try again in a little while"
    if status >= 500:
        return f"the API had a server error {_retried(retries)}; try again, and quote the request id if it persists"
    return "see the API's message above"


def _api_status_error(exc: Any, scrubber: SecretScrubber) -> ModelAPIError:
    status = int(getattr(exc, "status_code", 0) or 0)
    error_type = getattr(exc, "type", None)
    body = getattr(exc, "body", None)
    message = getattr(exc, "api_message", None)
    if not message:
        message = body if isinstance(body, str) and body else getattr(exc, "message", "") or str(exc)
    error_type = error_type if isinstance(error_type, str) else None
    hint = _status_hint(status, error_type, getattr(exc, "response", None))
    return ModelAPIError(
        _shorten(scrubber.scrub(str(message))),
        status=status or None,
        error_type=error_type,
        request_id=getattr(exc, "request_id", None),
        hint=_sentence(scrubber.scrub(hint)),
    )


def to_model_api_error(
    exc: BaseException, *, secrets: Iterable[str | None] = (), request_id: str | None = None
) -> ModelAPIError:
    """The `ModelAPIError` for ``exc`` (an SDK, httpx2 or parsing failure).

    ``request_id`` is the id of the response being read when the failure happened mid-stream
    (the SDK's transport errors do not carry it).
    """
    import anthropic
    import httpx2

    scrubber = environment_scrubber(extra=secrets)
    if isinstance(exc, ModelAPIError):
        return exc
    if isinstance(exc, anthropic.APIStatusError):
        return _api_status_error(exc, scrubber)
    if isinstance(exc, (anthropic.APITimeoutError, httpx2.TimeoutException)):
        during = "while the response was streaming" if request_id else "before the response started"
        return ModelAPIError(
            f"the request timed out {during}",
            error_type="timeout",
            request_id=request_id,
            hint="The API or the network is slow: try again, or raise the model's timeout=",
        )
    if isinstance(exc, (anthropic.APIConnectionError, httpx2.TransportError)):
        cause = exc.__cause__ if isinstance(exc, anthropic.APIConnectionError) and exc.__cause__ else exc
        detail = _shorten(scrubber.scrub(f"{type(cause).__name__}: {cause}"), 300)
        if request_id:
            text = f"the connection dropped while the response was streaming ({detail})"
            hint = "The message is incomplete: its complete blocks and the results of the calls that ran are kept, and the run goes on by itself (at most 3 times per run)"
        else:
            text = f"could not reach the API ({detail})"
            hint = "Check the network and ANTHROPIC_BASE_URL; the SDK already retried"
        return ModelAPIError(text, error_type="connection_error", request_id=request_id, hint=hint)
    if isinstance(exc, TypeError) and "authentication method" in str(exc):
        return missing_key_error()
    if isinstance(exc, anthropic.CredentialsError):
        return missing_key_error(f"the API credentials could not be loaded: {_shorten(scrubber.scrub(str(exc)), 300)}")
    detail = _shorten(scrubber.scrub(f"{type(exc).__name__}: {exc}"), 300)
    return ModelAPIError(
        f"the response could not be read ({detail})",
        error_type="stream_error",
        request_id=request_id,
        hint="The message is incomplete: its complete blocks and the results of the calls that ran are kept, and the run goes on by itself (at most 3 times per run)",
    )
