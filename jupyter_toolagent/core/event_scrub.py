"""Scrubbing the events a run emits that are not tool results (SPEC §5.6).

Tool results, error results and progress lines are scrubbed where they are made, in
`run_tool_use`; everything else the notebook shows or a session keeps is derived from the
events and the transcript, so scrubbing those at the point they are emitted covers every view
(cards, notices, the transcript, raw and export views) without each view scrubbing again.

The events scrubbed here carry text the runtime composed from things it did not write: a
notice quoting an exception or a hook's message, a permission reason quoting a command, the
run's final error. The model's own stream (text and thinking deltas, the finished assistant
message) is not: the model never receives a protected value, and scrubbing a growing snapshot
at every delta would cost time quadratic in the answer's length.
"""

from __future__ import annotations

import dataclasses
from typing import TypeVar

from .events import AgentEvent
from .secrets import SecretScrubber

__all__ = ["SCRUBBED_KINDS", "scrub_event"]

SCRUBBED_KINDS = frozenset({"notice", "permission_asked", "permission_decided", "run_finished", "tool_queued"})
"""Event kinds whose text fields are scrubbed on emission (tool_progress and tool_finished are
scrubbed in `run_tool_use`)."""

E = TypeVar("E", bound=AgentEvent)


def scrub_event(event: E, scrubber: SecretScrubber) -> E:
    """``event`` with every text field (strings, and strings inside dicts and lists) scrubbed;
    the same object when nothing protected is in it or its kind is not scrubbed."""
    if not scrubber or getattr(event, "kind", None) not in SCRUBBED_KINDS:
        return event
    changes = {}
    for f in dataclasses.fields(event):
        value = getattr(event, f.name)
        cleaned = scrubber.scrub_data(value)
        if cleaned is not value:
            changes[f.name] = cleaned
    return dataclasses.replace(event, **changes) if changes else event
