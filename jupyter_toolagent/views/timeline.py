"""From a run's events to a schedule: per call, when it was queued, waited for approval, ran;
and which calls shared a batch (SPEC §4, §9).

Times come from the events' ``at`` (one monotonic clock). Which calls overlapped is decided on
the *order* of the events instead: it is exact, where two timestamps taken microseconds apart
are not. Grouping:

- after the stream (`run_tools`), started calls carry their batch number; a call that never
  started (denied, invalid) carries none, so it joins the batch it overlaps, or — when the batch
  numbers of its neighbours leave a gap — takes the missing number (it was a batch of its own);
- while streaming (batch ``None``), calls whose active times overlap form one group;
- a group never spans two responses (a response's calls all end before the next request).

A partial list of events (a run still going) works: unfinished calls end at ``now``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Literal

from ..core.events import (
    PermissionAskedEvent,
    PermissionDecidedEvent,
    RequestStartedEvent,
    ToolFinishedEvent,
    ToolQueuedEvent,
    ToolStartedEvent,
)

__all__ = ["CallGroup", "CallTimeline", "Schedule", "Segment", "build_schedule"]

SegmentState = Literal["queued", "waiting", "running"]


@dataclass
class Segment:
    state: SegmentState
    start: float
    end: float
    open: bool = False
    """Still going when the events were read (``end`` is ``now``)."""

    @property
    def duration(self) -> float:
        return max(0.0, self.end - self.start)


@dataclass
class CallTimeline:
    tool_use_id: str
    name: str
    response: int
    """Index of the request whose response asked for this call (-1: unknown)."""
    order: int
    """Position among the calls of its response, in queue (block) order."""
    batch: int | None = None
    """Batch number after the stream: as reported when the call started, or inferred (see the
    module docstring) for a call that never started. ``None`` while streaming."""
    queued_at: float | None = None
    asked_at: float | None = None
    decided_at: float | None = None
    started_at: float | None = None
    finished_at: float | None = None
    status: str = "queued"
    """The final `ToolStatus`, or while live: ``queued``, ``waiting`` or ``running``."""
    decided_by: str | None = None
    segments: list[Segment] = field(default_factory=list)
    span: tuple[float, float] | None = None
    """First and last event positions of the call's active part (not counting queueing)."""

    @property
    def finished(self) -> bool:
        return self.finished_at is not None

    @property
    def waited(self) -> float:
        """Seconds spent waiting for an approval (0 when never asked)."""
        return sum(s.duration for s in self.segments if s.state == "waiting")

    @property
    def start(self) -> float:
        if self.segments:
            return self.segments[0].start
        return self.finished_at if self.finished_at is not None else 0.0

    @property
    def end(self) -> float:
        if self.segments:
            return self.segments[-1].end
        return self.finished_at if self.finished_at is not None else 0.0


@dataclass
class CallGroup:
    response: int
    number: int
    """Order of the group within its response (0 first)."""
    kind: Literal["batch", "group"]
    batch: int | None
    calls: list[CallTimeline] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.response}.{self.number}"

    @property
    def label(self) -> str:
        prefix = f"response {self.response + 1} · " if self.response >= 0 else ""
        name = f"batch {self.batch}" if self.kind == "batch" and self.batch is not None else f"group {self.number}"
        return prefix + name

    @property
    def concurrent(self) -> bool:
        return len(self.calls) > 1

    @property
    def start(self) -> float:
        return min((c.start for c in self.calls), default=0.0)

    @property
    def end(self) -> float:
        return max((c.end for c in self.calls), default=0.0)


@dataclass
class Schedule:
    calls: list[CallTimeline]
    groups: list[CallGroup]
    origin: float
    end: float
    live: bool

    def group_of(self, tool_use_id: str) -> CallGroup | None:
        return next((g for g in self.groups if any(c.tool_use_id == tool_use_id for c in g.calls)), None)

    @property
    def duration(self) -> float:
        return max(0.0, self.end - self.origin)


# --- reading the events ------------------------------------------------------------------------
class _Reader:
    def __init__(self) -> None:
        self.calls: list[CallTimeline] = []
        self.current: dict[str, CallTimeline] = {}
        self.positions: dict[int, list[int]] = {}  # id(call) -> event positions of its active part
        self.response = -1
        self.per_response: dict[int, int] = {}
        self.times: list[float] = []

    def call(self, tool_use_id: str, name: str, *, new: bool = False) -> CallTimeline:
        """The call with this id; ``new`` (a queue event) starts a fresh one even if the id was
        seen before, so a transcript that reuses an id still shows two calls."""
        found = self.current.get(tool_use_id)
        if found is None or (new and (found.finished or found.response != self.response)):
            order = self.per_response.get(self.response, 0)
            self.per_response[self.response] = order + 1
            found = CallTimeline(tool_use_id, name, self.response, order)
            self.current[tool_use_id] = found
            self.calls.append(found)
            self.positions[id(found)] = []
        return found

    def active(self, position: int, event: Any) -> CallTimeline:
        call = self.call(event.tool_use_id, event.name)
        self.positions[id(call)].append(position)
        return call

    def read(self, position: int, event: Any) -> None:
        at = getattr(event, "at", None)
        if isinstance(at, (int, float)):
            self.times.append(float(at))
        if isinstance(event, RequestStartedEvent):
            self.response = event.index
        elif isinstance(event, ToolQueuedEvent):
            self.call(event.tool_use_id, event.name, new=True).queued_at = event.at
        elif isinstance(event, PermissionAskedEvent):
            self.active(position, event).asked_at = event.at
        elif isinstance(event, PermissionDecidedEvent):
            call = self.active(position, event)
            call.decided_at, call.decided_by = event.at, event.decided_by
        elif isinstance(event, ToolStartedEvent):
            call = self.active(position, event)
            call.started_at, call.batch = event.at, event.batch
        elif isinstance(event, ToolFinishedEvent):
            call = self.active(position, event)
            call.finished_at, call.status = event.at, event.status


def _segments(call: CallTimeline, now: float) -> list[Segment]:
    marks: list[tuple[float, SegmentState]] = []
    if call.queued_at is not None:
        marks.append((call.queued_at, "queued"))
    if call.asked_at is not None:
        marks.append((call.asked_at, "waiting"))
        if call.decided_at is not None:
            marks.append((call.decided_at, "queued"))
    if call.started_at is not None:
        marks.append((call.started_at, "running"))
    marks.sort(key=lambda mark: mark[0])
    end = call.finished_at if call.finished_at is not None else max(now, marks[-1][0] if marks else now)
    segments = []
    for i, (start, state) in enumerate(marks):
        stop = marks[i + 1][0] if i + 1 < len(marks) else end
        if stop > start or state == "running":
            segments.append(Segment(state, start, stop, open=call.finished_at is None and i + 1 == len(marks)))
    return segments


def _live_status(call: CallTimeline) -> str:
    if call.started_at is not None:
        return "running"
    if call.asked_at is not None and call.decided_at is None:
        return "waiting"
    return "queued"


# --- grouping -----------------------------------------------------------------------------------
def _overlaps(span: tuple[float, float] | None, group: list[CallTimeline]) -> bool:
    spans = [c.span for c in group if c.span is not None]
    if span is None or not spans:
        return False
    return span[0] < max(s[1] for s in spans) and min(s[0] for s in spans) < span[1]


def _group_streaming(calls: list[CallTimeline]) -> list[list[CallTimeline]]:
    active = sorted((c for c in calls if c.span is not None), key=lambda c: c.span[0])  # type: ignore[index]  # span set: filtered
    groups: list[list[CallTimeline]] = []
    end = -math.inf
    for call in active:
        assert call.span is not None
        if groups and call.span[0] < end:
            groups[-1].append(call)
            end = max(end, call.span[1])
        else:
            groups.append([call])
            end = call.span[1]
    groups += [[c] for c in calls if c.span is None]  # not active yet: nothing known
    return groups


def _group_batches(calls: list[CallTimeline]) -> list[list[CallTimeline]]:
    by_batch: dict[int, list[CallTimeline]] = {}
    for call in calls:
        if call.batch is not None:
            by_batch.setdefault(call.batch, []).append(call)
    position = 0
    while position < len(calls):
        if calls[position].batch is not None:
            position += 1
            continue
        run_end = position
        while run_end < len(calls) and calls[run_end].batch is None:
            run_end += 1
        stray = calls[position:run_end]
        before = calls[position - 1].batch if position > 0 else None
        after = calls[run_end].batch if run_end < len(calls) else None
        _place(stray, before, after, by_batch)
        position = run_end
    return [by_batch[b] for b in sorted(by_batch)]


def _place(stray: list[CallTimeline], before: int | None, after: int | None,
           by_batch: dict[int, list[CallTimeline]]) -> None:
    """Give never-started calls (between the batches ``before`` and ``after``) a batch."""
    low = before if before is not None else -1
    missing = list(range(low + 1, after)) if after is not None else None
    if missing is not None and len(missing) == len(stray):
        for number, call in zip(missing, stray):  # each was a batch of its own
            call.batch = number
            by_batch[number] = [call]
        return
    next_free = max(by_batch, default=low) + 1
    for call in stray:
        if before is not None and _overlaps(call.span, by_batch[before]):
            target = before
        elif after is not None and _overlaps(call.span, by_batch[after]):
            target = after
        elif missing:
            target = missing.pop(0)
        elif missing is None:
            target, next_free = next_free, next_free + 1
        else:  # no room between the neighbours: it must belong to one of them (so one is not None)
            target = before if before is not None else after  # type: ignore[assignment]
        call.batch = target
        by_batch.setdefault(target, []).append(call)
        before = target


def build_schedule(events: Iterable[Any], *, now: float | None = None) -> Schedule:
    """The schedule of a run from its events (a `RunRecord.events` list or any prefix of it)."""
    reader = _Reader()
    for position, event in enumerate(events):
        reader.read(position, event)
    calls = reader.calls
    live = any(not c.finished for c in calls)
    if now is None:
        now = time.monotonic() if live else max(reader.times, default=0.0)
    for call in calls:
        positions = reader.positions[id(call)]
        if positions:
            call.span = (positions[0], positions[-1] if call.finished else math.inf)
        call.segments = _segments(call, now)
        if not call.finished:
            call.status = _live_status(call)
    groups: list[CallGroup] = []
    for response in sorted({c.response for c in calls}):
        members = sorted((c for c in calls if c.response == response), key=lambda c: c.order)
        batched = any(c.batch is not None for c in members)
        if batched:
            parts = _group_batches(members)  # in batch order
        else:
            parts = _group_streaming(members)
            parts.sort(key=lambda part: min((c.span[0] for c in part if c.span is not None), default=math.inf))
        for number, part in enumerate(parts):
            part.sort(key=lambda c: c.order)
            batch = part[0].batch if batched else None
            groups.append(CallGroup(response, number, "batch" if batched else "group", batch, part))
    ordered = [c for g in groups for c in g.calls]
    starts = [s.start for c in calls for s in c.segments]
    origin = min([*reader.times, *starts], default=0.0)
    end = max([*reader.times, *(s.end for c in calls for s in c.segments)], default=origin)
    return Schedule(ordered, groups, origin, end, live)
