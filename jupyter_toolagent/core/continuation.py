"""Bounded automatic continuation after a broken response stream (SPEC §7.1).

A stream that breaks mid-message (the connection drops, the API sends an ``overloaded_error``
or ``api_error`` event inside the 200 response, the events stop making sense) used to end the
run with "run the cell again" — and running the cell again repeats every effect that already
happened (an ``>>`` append that ran once would run twice). Instead the run goes on by itself,
as Claude Code does:

* the partial assistant message keeps its complete blocks; complete tool_use blocks keep the
  result of the call that ran (a call never runs twice), calls that never started get "not
  run", and a tool_use cut inside its input gets an error result saying so (the accumulator
  and the schedulers do that part);
* the next request carries that, plus `continuation_note`: a short user note that the
  previous response was cut, so the model goes on from there instead of starting over;
* it waits first, with exponential backoff (an overloaded API needs a moment);
* at most `MAX_CONTINUATIONS` times per run, each one visible in the cell as a notice.

A failure before any response began (no ``message_start``: the SDK already retried 429/5xx/
529 there) or one a retry cannot fix (invalid request, authentication, a script error) still
ends the run with the error.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from ..errors import ModelAPIError
from .abort import AbortSignal

__all__ = ["MAX_CONTINUATIONS", "StreamContinuations", "continuation_note"]

MAX_CONTINUATIONS = 3
BASE_DELAY = 0.5
"""Seconds before the first continuation; doubled for each next one (0.5, 1, 2)."""

# Failures that a new request would meet again: not a broken stream.
_NOT_RETRYABLE = frozenset({
    "invalid_request_error", "invalid_request", "authentication_error", "permission_error",
    "not_found_error", "request_too_large", "invalid_script", "script_exhausted", "billing_error",
})


def continuation_note(failure: ModelAPIError) -> str:
    """The user note sent after a cut response (what the model needs to go on correctly)."""
    what = failure.error_type or "stream error"
    return (
        f"[The previous response was cut off before it finished ({what}). Its complete blocks are "
        "above, and each tool call in it has its result: calls that ran keep their real result and "
        "were not run again; calls that had not started, or whose input was cut off, did not run. "
        "Continue from where the response stopped, without repeating what already happened.]"
    )


@dataclass
class StreamContinuations:
    """How many automatic continuations a run has used, and whether it may take another.

    ``limit`` and ``base_delay`` (seconds) come from `RunConfig.max_continuations` and
    `RunConfig.continuation_delay` (tests lower the delay).
    """

    limit: int = MAX_CONTINUATIONS
    base_delay: float = BASE_DELAY
    used: int = 0

    @staticmethod
    def is_broken_stream(failure: ModelAPIError | None, response_started: bool) -> bool:
        """A failure after the response began streaming that a new request may not meet."""
        return failure is not None and response_started and (failure.error_type or "") not in _NOT_RETRYABLE

    def take(self, failure: ModelAPIError | None, response_started: bool) -> float | None:
        """The delay before the next continuation, or None when the run must end instead."""
        if not self.is_broken_stream(failure, response_started) or self.used >= self.limit:
            return None
        delay = self.base_delay * 2.0 ** self.used
        self.used += 1
        return delay

    def notice(self, failure: ModelAPIError, delay: float) -> str:
        """What the cell shows for one continuation."""
        return (
            f"The response stream broke ({failure.one_line()}). Continuing automatically in {delay:g} s "
            f"(continuation {self.used} of {self.limit} in this run): complete blocks and the results of "
            "calls that ran are kept, nothing is run twice."
        )

    def exhausted_notice(self) -> str:
        return (f"The response stream broke again after {self.limit} automatic continuations, so the run "
                "stopped. The transcript is valid: a new cell goes on from here.")


async def wait_unless_aborted(seconds: float, abort: AbortSignal) -> bool:
    """Sleep ``seconds``; False if the run was aborted meanwhile (the wait ends at once then)."""
    if seconds <= 0:
        return not abort.aborted
    try:
        await asyncio.wait_for(abort.wait(), seconds)
    except asyncio.TimeoutError:
        return True
    return False
