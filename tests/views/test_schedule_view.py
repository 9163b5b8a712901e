"""`ScheduleView`: which calls shared a batch, and when each was queued, waited and ran.

Real runs on both scheduling paths (while streaming, and after the stream), a real approver,
partial event lists read while the run goes on, and hand-made event lists for the corner
cases of grouping.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from view_support import Meeting, SleepTool, arriving_policy, config, has_html, run, use

from jupyter_toolagent.core.events import (
    PermissionDecidedEvent,
    RequestStartedEvent,
    ToolFinishedEvent,
    ToolQueuedEvent,
    ToolStartedEvent,
)
from jupyter_toolagent.core.permission_types import ApprovalRequest, ApprovalResponse
from jupyter_toolagent.core.session import Session
from jupyter_toolagent.core.simple_policy import SimplePolicy
from jupyter_toolagent.views import ScheduleView

SEGMENT = re.compile(r"<rect [^>]*data-tool-use-id=\"([^\"]+)\" data-group=\"([^\"]+)\" "
                     r"data-segment=\"([^\"]+)\" data-status=\"([^\"]+)\" data-waited=\"([^\"]+)\"")


def svg_segments(view: ScheduleView) -> list[tuple[str, str, str, str, float]]:
    return [(i, g, seg, status, float(w)) for i, g, seg, status, w in SEGMENT.findall(view.to_html())]


def tools(delay: float = 0.05, meeting: Meeting | None = None) -> list[SleepTool]:
    """Read and Grep are safe (and, given a meeting, each waits there); Edit is not safe."""
    return [SleepTool("Read", safe=True, delay=delay, meeting=meeting),
            SleepTool("Grep", safe=True, delay=delay, meeting=meeting),
            SleepTool("Edit", safe=False, delay=0.03)]


SAFE_SAFE_UNSAFE = [[use("Read", "a", "toolu_A"), use("Grep", "b", "toolu_B"), use("Edit", "c", "toolu_C")], "done"]


@pytest.mark.asyncio
@pytest.mark.parametrize("streaming", [True, False], ids=["while-streaming", "after-stream"])
async def test_two_overlapping_safe_calls_then_an_unsafe_one_make_two_groups(streaming: bool) -> None:
    session = Session()
    await run(session, "go", config(SAFE_SAFE_UNSAFE, tools(meeting=Meeting(2)), streaming=streaming))
    view = ScheduleView(session.runs[-1])
    schedule = view.schedule
    assert [[c.tool_use_id for c in g.calls] for g in schedule.groups] == [["toolu_A", "toolu_B"], ["toolu_C"]]
    first, second = schedule.groups
    assert first.concurrent and not second.concurrent
    a, b = first.calls
    c = second.calls[0]
    assert a.started_at < b.finished_at and b.started_at < a.finished_at  # they really overlapped
    assert c.started_at >= max(a.finished_at, b.finished_at)
    assert [first.kind, second.kind] == (["group", "group"] if streaming else ["batch", "batch"])
    if not streaming:
        assert [first.batch, second.batch] == [0, 1]
    # text: the groups in order, each call under its group
    out = view.to_text()
    assert not has_html(out)
    label = "batch 0" if not streaming else "group 0"
    assert re.search(rf"response 1 · {label} \(2 call\(s\), concurrent\)\n +toolu_A .*\n +toolu_B ", out)
    assert re.search(r"response 1 · (batch 1|group 1) \(1 call\(s\), alone\)\n +toolu_C +Edit +done", out)
    # svg: every segment carries its call, group, state and status
    segments = svg_segments(view)
    groups = {i: g for i, g, *_ in segments}
    assert groups["toolu_A"] == groups["toolu_B"] != groups["toolu_C"]
    running = [(i, status) for i, _, seg, status, _ in segments if seg == "running"]
    assert running == [("toolu_A", "done"), ("toolu_B", "done"), ("toolu_C", "done")]
    assert any(i == "toolu_C" and seg == "queued" for i, _, seg, *_ in segments)  # C waited for A and B


@pytest.mark.asyncio
async def test_an_approval_wait_is_drawn_and_labelled() -> None:
    asked: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> ApprovalResponse:
        asked.append(request)
        await asyncio.sleep(0.2)
        return ApprovalResponse("allow")

    session = Session()
    policy = SimplePolicy(approver=approver)
    turns = [[use("Read", "a", "toolu_A"), use("Edit", "c", "toolu_C")], "done"]
    await run(session, "go", config(turns, tools(0.02), can_use_tool=policy))
    assert [r.tool_use_id for r in asked] == ["toolu_C"]
    view = ScheduleView(session.runs[-1])
    edit = next(c for c in view.schedule.calls if c.tool_use_id == "toolu_C")
    assert 0.2 <= edit.waited < 10.0
    assert [s.state for s in edit.segments][-2:] == ["waiting", "running"] or \
        [s.state for s in edit.segments][-3:] == ["waiting", "queued", "running"]
    waiting = [(w, status) for i, _, seg, status, w in svg_segments(view) if i == "toolu_C" and seg == "waiting"]
    assert len(waiting) == 1 and waiting[0][0] == pytest.approx(edit.waited, abs=0.001) and waiting[0][1] == "done"
    assert f'data-tool-use-id="toolu_C">approval {edit.waited:.3f} s</text>' in view.to_html()
    row = next(line for line in view.to_text().splitlines() if "toolu_C" in line)
    assert f"{edit.waited:.3f}" in row and "?" in row.split("|")[1]
    read = next(c for c in view.schedule.calls if c.tool_use_id == "toolu_A")
    assert read.waited == 0 and read.asked_at is None


@pytest.mark.asyncio
async def test_a_partial_event_list_shows_the_run_live() -> None:
    session = Session()
    seen: list[ScheduleView] = []
    events: list[Any] = []
    async for event in session.run("go", config(SAFE_SAFE_UNSAFE, tools(meeting=Meeting(2)))):
        events.append(event)
        if isinstance(event, ToolStartedEvent) and event.tool_use_id == "toolu_B":
            seen.append(ScheduleView(list(events)))
    live = seen[0]
    assert live.schedule.live and "(still running)" in live.to_text()
    status = {c.tool_use_id: c.status for c in live.schedule.calls}
    assert status["toolu_A"] == "running" and status["toolu_B"] == "running"
    assert status.get("toolu_C", "queued") == "queued"
    a = next(c for c in live.schedule.calls if c.tool_use_id == "toolu_A")
    assert a.segments[-1].open and a.segments[-1].state == "running"
    done = ScheduleView(events)
    assert not done.schedule.live and all(c.finished for c in done.schedule.calls)
    # any prefix (a live run) or suffix (a list read from the middle) renders without raising
    for cut in range(len(events) + 1):
        for part in (events[:cut], events[cut:]):
            view = ScheduleView(part, now=events[-1].at)
            assert view.to_text() and view.to_html()
            assert {c.tool_use_id for g in view.schedule.groups for c in g.calls} == \
                {c.tool_use_id for c in view.schedule.calls}


@pytest.mark.asyncio
@pytest.mark.parametrize("streaming", [True, False], ids=["while-streaming", "after-stream"])
async def test_a_denied_call_joins_the_batch_it_was_part_of(streaming: bool) -> None:
    session = Session()
    # Read cannot finish before Grep's permission is decided: the two really overlap
    meeting = Meeting(2)
    policy = arriving_policy(SimplePolicy(allow={"Edit"}, deny={"Grep"}), meeting, "toolu_B")
    turns = [[use("Read", "a", "toolu_A"), use("Grep", "b", "toolu_B"), use("Edit", "c", "toolu_C")], "done"]
    read, grep, edit = tools()
    read.meeting = meeting
    await run(session, "go", config(turns, [read, grep, edit], streaming=streaming, can_use_tool=policy))
    assert meeting.arrived == 2
    schedule = ScheduleView(session.runs[-1]).schedule
    assert [[(c.tool_use_id, c.status) for c in g.calls] for g in schedule.groups] == [
        [("toolu_A", "done"), ("toolu_B", "denied")],
        [("toolu_C", "done")],
    ]
    denied = schedule.groups[0].calls[1]
    assert denied.started_at is None and not any(s.state == "running" for s in denied.segments)


@pytest.mark.asyncio
async def test_a_denied_first_call_and_a_denied_unsafe_call_after_the_stream() -> None:
    session = Session()
    turns = [[use("Grep", "b", "toolu_B"), use("Read", "a", "toolu_A"), use("Edit", "c", "toolu_C"),
              use("Read", "d", "toolu_D")], "done"]
    policy = SimplePolicy(deny={"Grep", "Edit"})
    await run(session, "go", config(turns, tools(0.05), streaming=False, can_use_tool=policy))
    schedule = ScheduleView(session.runs[-1]).schedule
    assert [([c.tool_use_id for c in g.calls], g.batch) for g in schedule.groups] == [
        (["toolu_B", "toolu_A"], 0),  # denied before its batch-mate started: still batch 0
        (["toolu_C"], 1),  # a denied unsafe call was a batch of its own
        (["toolu_D"], 2),
    ]


def _events(*spec: tuple[str, str, Any]) -> list[Any]:
    """Hand-made events: (kind, tool_use_id, extra) with increasing times."""
    out: list[Any] = []
    for t, (kind, tool_use_id, extra) in enumerate(spec):
        at = float(t)
        if kind == "request":
            out.append(RequestStartedEvent(index=extra, model="m", at=at))
        elif kind == "queued":
            out.append(ToolQueuedEvent(tool_use_id=tool_use_id, name=extra or "Read", input={}, at=at))
        elif kind == "decided":
            out.append(PermissionDecidedEvent(tool_use_id=tool_use_id, name="Read", behavior=extra, decided_by="rule",
                                              at=at))
        elif kind == "started":
            out.append(ToolStartedEvent(tool_use_id=tool_use_id, name="Read", batch=extra, at=at))
        elif kind == "finished":
            out.append(ToolFinishedEvent(tool_use_id=tool_use_id, name="Read", status=extra, result={}, at=at))
    return out


def test_groups_never_span_two_responses() -> None:
    events = _events(
        ("request", "", 0), ("queued", "A", None), ("started", "A", None),
        ("request", "", 1), ("queued", "B", None), ("started", "B", None),
        ("finished", "A", "done"), ("finished", "B", "done"),
    )
    schedule = ScheduleView(events).schedule
    assert [(g.response, [c.tool_use_id for c in g.calls]) for g in schedule.groups] == [(0, ["A"]), (1, ["B"])]
    assert [g.label for g in schedule.groups] == ["response 1 · group 0", "response 2 · group 0"]


def test_an_id_reused_by_a_later_response_is_a_second_call() -> None:
    events = _events(
        ("request", "", 0), ("queued", "A", None), ("started", "A", None), ("finished", "A", "done"),
        ("request", "", 1), ("queued", "A", None), ("started", "A", None), ("finished", "A", "error"),
    )
    schedule = ScheduleView(events).schedule
    assert [(c.tool_use_id, c.response, c.status) for c in schedule.calls] == [("A", 0, "done"), ("A", 1, "error")]
    assert len(schedule.groups) == 2


def test_never_started_calls_fill_the_gaps_between_batch_numbers() -> None:
    events = _events(
        ("request", "", 0), ("queued", "A", None), ("queued", "X", None), ("queued", "Y", None),
        ("queued", "D", None),
        ("started", "A", 0), ("finished", "A", "done"),
        ("decided", "X", "deny"), ("finished", "X", "denied"),
        ("decided", "Y", "deny"), ("finished", "Y", "denied"),
        ("started", "D", 3), ("finished", "D", "done"),
    )
    schedule = ScheduleView(events).schedule
    assert [([c.tool_use_id for c in g.calls], g.batch) for g in schedule.groups] == [
        (["A"], 0), (["X"], 1), (["Y"], 2), (["D"], 3)]


def test_no_source_and_markup_in_names() -> None:
    empty = ScheduleView(None)
    assert empty.to_text() == "Schedule — no tool call (no run yet)"
    hostile = _events(("request", "", 0), ("queued", '"><script>x</script>', "<script>alert(1)</script>"),
                      ("started", '"><script>x</script>', None), ("finished", '"><script>x</script>', "error"))
    view = ScheduleView(hostile)
    html = view.to_html()
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert not has_html(ScheduleView(_events(("request", "", 0), ("queued", "A", None))).to_text())


def test_bar_width_and_unfinished_calls_end_at_now() -> None:
    events = _events(("request", "", 0), ("queued", "A", None), ("started", "A", None))
    view = ScheduleView(events, now=4.0, bar_width=16)
    call = view.schedule.calls[0]
    assert call.status == "running" and call.end == 4.0 and view.schedule.duration == 4.0
    row = next(line for line in view.to_text().splitlines() if line.strip().startswith("A "))
    bar = row[row.index("|") + 1:row.rindex("|")]
    # the request started at 0, A was queued at 1 and started at 2: a quarter each, then running
    assert bar == "    ----########"
