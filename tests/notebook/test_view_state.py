"""The pure reducer: every event kind and every card status."""

from __future__ import annotations

import pytest

from jupyter_toolagent.core import events as E
from jupyter_toolagent.core.usage import Usage
from jupyter_toolagent.notebook.view_state import (
    PREVIEW_CHARS,
    RunViewState,
    apply_event,
    finish_run,
    record_user_decision,
)


def fresh() -> RunViewState:
    return RunViewState(started_at=100.0)


def queue(state: RunViewState, tid: str = "toolu_1", name: str = "Bash", **input):
    return apply_event(state, E.ToolQueuedEvent(tool_use_id=tid, name=name, input=input or {"command": "ls"}, at=101.0))


def finished(tid: str, status: str, content="ok", *, is_error=False, duration=0.5, captured=""):
    result = {"type": "tool_result", "tool_use_id": tid, "content": content}
    if is_error:
        result["is_error"] = True
    return E.ToolFinishedEvent(
        tool_use_id=tid, name="Bash", status=status, result=result, duration=duration, captured_output=captured, at=103.0
    )


def test_request_started_sets_model_and_index():
    s = fresh()
    up = apply_event(s, E.RequestStartedEvent(index=2, model="claude-x"))
    assert (s.request_index, s.model) == (2, "claude-x")
    assert "header" in up.dirty


def test_text_deltas_use_snapshot_and_only_a_new_block_is_urgent():
    s = fresh()
    apply_event(s, E.RequestStartedEvent(index=0, model="m"))
    first = apply_event(s, E.TextDeltaEvent(text="Hel", snapshot="Hel", block_index=0))
    second = apply_event(s, E.TextDeltaEvent(text="lo", snapshot="Hello", block_index=0))
    assert s.texts["0:0"].text == "Hello"
    assert s.items == [("text", "0:0")]
    assert "items" in first.dirty and "items" not in second.dirty
    assert first.urgent and not second.urgent  # a new block appears at once, then coalesces


def test_text_blocks_of_different_requests_are_separate_items():
    s = fresh()
    apply_event(s, E.RequestStartedEvent(index=0, model="m"))
    apply_event(s, E.TextDeltaEvent(text="a", snapshot="a", block_index=0))
    apply_event(s, E.RequestStartedEvent(index=1, model="m"))
    apply_event(s, E.TextDeltaEvent(text="b", snapshot="b", block_index=0))
    assert [s.texts[k].text for _, k in s.items] == ["a", "b"]


def test_thinking_accumulates_deltas():
    s = fresh()
    apply_event(s, E.RequestStartedEvent(index=0, model="m"))
    apply_event(s, E.ThinkingDeltaEvent(thinking="let me ", block_index=0))
    apply_event(s, E.ThinkingDeltaEvent(thinking="think", block_index=0))
    (block,) = s.texts.values()
    assert block.thinking and block.text == "let me think"


def test_tool_lifecycle_queued_running_done():
    s = fresh()
    up = queue(s)
    card = s.cards["toolu_1"]
    assert card.status == "queued" and up.urgent and "items" in up.dirty
    apply_event(s, E.ToolStartedEvent(tool_use_id="toolu_1", name="Bash", batch=0, at=102.0))
    assert card.status == "running" and card.batch == 0
    apply_event(s, E.ToolProgressEvent(tool_use_id="toolu_1", message="half", fraction=0.5, output="line\n"))
    assert (card.progress_fraction, card.progress_message, card.live_output) == (0.5, "half", "line\n")
    apply_event(s, finished("toolu_1", "done", "a\nb", captured="printed"))
    assert card.status == "done" and card.duration == 0.5
    assert card.result_text == "a\nb" and card.captured_output == "printed"
    assert card.progress_fraction == 1.0


def test_progress_is_coalescible_and_clamped():
    s = fresh()
    queue(s)
    up = apply_event(s, E.ToolProgressEvent(tool_use_id="toolu_1", fraction=3.0))
    assert not up.urgent and s.cards["toolu_1"].progress_fraction == 1.0
    assert apply_event(s, E.ToolProgressEvent(tool_use_id="nope", fraction=0.1)).dirty == frozenset()


def test_duration_falls_back_to_start_and_finish_times():
    s = fresh()
    queue(s)
    apply_event(s, E.ToolStartedEvent(tool_use_id="toolu_1", name="Bash", at=102.0))
    apply_event(s, finished("toolu_1", "done", duration=None))
    assert s.cards["toolu_1"].duration == pytest.approx(1.0)


@pytest.mark.parametrize("status", ["done", "error", "denied", "cancelled", "interrupted", "invalid"])
def test_every_finished_status_is_kept(status):
    s = fresh()
    queue(s)
    apply_event(s, finished("toolu_1", status, "msg", is_error=status != "done"))
    card = s.cards["toolu_1"]
    assert card.status == status and card.finished
    assert card.is_error == (status != "done")


def test_result_preview_is_bounded_and_keeps_head_and_tail():
    s = fresh()
    queue(s)
    big = "HEAD" + "x" * 50_000 + "TAIL"
    apply_event(s, finished("toolu_1", "done", big))
    text = s.cards["toolu_1"].result_text
    assert len(text) < PREVIEW_CHARS + 100
    assert text.startswith("HEAD") and text.endswith("TAIL") and "characters cut" in text


def test_result_blocks_text_and_images():
    s = fresh()
    queue(s)
    content = [
        {"type": "text", "text": "fig"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0K"}},
    ]
    apply_event(s, finished("toolu_1", "done", content))
    card = s.cards["toolu_1"]
    assert card.result_text == "fig"
    assert card.result_images == [("image/png", "iVBORw0K")]


def test_permission_asked_then_user_decision_then_core_event():
    s = fresh()
    queue(s)
    apply_event(s, E.PermissionAskedEvent(tool_use_id="toolu_1", name="Bash", input={"command": "ls"}, reason="no rule", suggested_rule="Bash(ls:*)", at=101.5))
    card = s.cards["toolu_1"]
    assert card.status == "waiting" and card.ask.reason == "no rule" and not card.ask.answered
    record_user_decision(s, "toolu_1", behavior="allow", decided_by="user", at=102.0, wall_time=5.0, always=True, rule="Bash(ls:*)")
    assert card.status == "queued" and card.ask.answered
    assert card.decision.always and card.decision.rule_added == "Bash(ls:*)"
    # a late duplicate ask (the core's own event) must not re-open the question
    apply_event(s, E.PermissionAskedEvent(tool_use_id="toolu_1", name="Bash", input={"command": "ls"}, reason="no rule", at=101.5))
    assert card.status == "queued" and card.ask.answered
    apply_event(s, E.PermissionDecidedEvent(tool_use_id="toolu_1", name="Bash", behavior="allow", decided_by="user", rule_added="Bash(ls:*)", at=102.1))
    assert card.decision.wall_time == 5.0 and card.decision.always
    apply_event(s, E.ToolStartedEvent(tool_use_id="toolu_1", name="Bash", at=102.2))
    assert card.status == "running"


def test_permission_denied_by_rule_marks_card_denied():
    s = fresh()
    queue(s)
    up = apply_event(s, E.PermissionDecidedEvent(tool_use_id="toolu_1", name="Bash", behavior="deny", decided_by="rule", message="Bash(rm:*) is denied"))
    card = s.cards["toolu_1"]
    assert up.urgent and card.status == "denied"
    assert card.decision.decided_by == "rule" and card.decision.message == "Bash(rm:*) is denied"


def test_ask_can_arrive_before_the_card():
    """The approver may run before the consumer has seen ToolQueued."""
    s = fresh()
    apply_event(s, E.PermissionAskedEvent(tool_use_id="toolu_9", name="Write", input={"path": "a.txt"}, reason="edit"))
    assert s.cards["toolu_9"].status == "waiting"
    queue(s, "toolu_9", "Write", path="a.txt")
    assert s.items == [("card", "toolu_9")]
    assert s.cards["toolu_9"].status == "waiting"


def test_notice_is_an_urgent_timeline_item():
    s = fresh()
    up = apply_event(s, E.NoticeEvent(level="error", text="rate limited"))
    assert up.urgent and s.items == [("notice", "0")]
    assert s.notices["0"].level == "error"


def test_request_finished_sums_usage_and_completes_its_text():
    s = fresh()
    apply_event(s, E.RequestStartedEvent(index=0, model="m"))
    apply_event(s, E.TextDeltaEvent(text="a", snapshot="a", block_index=0))
    assert not s.texts["0:0"].complete
    up = apply_event(s, E.RequestFinishedEvent(index=0, stop_reason="tool_use", usage=Usage(10, 5, 2, 1, 1), request_id="req_1"))
    apply_event(s, E.RequestFinishedEvent(index=1, stop_reason="end_turn", usage=Usage(3, 4, 0, 7, 1)))
    assert up.urgent and "text:0:0" in up.dirty and "footer" in up.dirty
    assert s.texts["0:0"].complete
    assert s.usage == Usage(13, 9, 2, 8, 2)
    assert s.last_request_id == "req_1"


@pytest.mark.parametrize(
    "reason,status,leftover",
    [("end_turn", "done", "cancelled"), ("aborted", "stopped", "interrupted"), ("api_error", "error", "cancelled"), ("max_turns", "ended", "cancelled")],
)
def test_run_finished_sets_explicit_end_states(reason, status, leftover):
    s = fresh()
    queue(s, "toolu_a")
    queue(s, "toolu_b")
    apply_event(s, E.PermissionAskedEvent(tool_use_id="toolu_b", name="Bash", input={}, reason="r"))
    apply_event(s, finished("toolu_a", "done"))
    up = apply_event(s, E.RunFinishedEvent(reason=reason, usage=Usage(1, 2, 0, 0, 1), error="boom" if status == "error" else None, at=110.0))
    assert s.status == status and s.finish_reason == reason and up.urgent
    assert s.cards["toolu_a"].status == "done"
    assert s.cards["toolu_b"].status == leftover
    assert s.cards["toolu_b"].ask.answered
    assert s.usage == Usage(1, 2, 0, 0, 1)
    assert s.finished_at == 110.0


def test_finish_run_is_idempotent_and_completes_texts():
    s = fresh()
    apply_event(s, E.TextDeltaEvent(text="a", snapshot="a", block_index=0))
    finish_run(s, reason="aborted", at=1.0)
    assert all(block.complete for block in s.texts.values())
    assert finish_run(s, reason="error", error="late", at=2.0).dirty == frozenset()
    assert s.status == "stopped" and s.error is None
