"""How a sub-agent's events and asks are drawn: its tool cards appear in the cell named after
the sub-agent; its text, requests and end do not disturb the cell's own; its ask says who asks."""

from __future__ import annotations

from jupyter_toolagent.core.events import (RequestStartedEvent, RunFinishedEvent, SubagentEvent, TextDeltaEvent,
                                           ToolFinishedEvent, ToolQueuedEvent)
from jupyter_toolagent.core.permission_types import ApprovalRequest
from jupyter_toolagent.core.usage import Usage
from jupyter_toolagent.notebook.view_state import RunViewState, apply_event


def wrap(event, agent="explore: look", depth=1):
    return SubagentEvent(parent_tool_use_id="toolu_agent", agent=agent, depth=depth, event=event)


def test_inner_tool_cards_are_labelled_and_other_events_are_kept_out() -> None:
    state = RunViewState(started_at=0.0)
    apply_event(state, ToolQueuedEvent(tool_use_id="toolu_agent", name="Agent", input={}))
    apply_event(state, wrap(RequestStartedEvent(index=3, model="m")))
    apply_event(state, wrap(TextDeltaEvent(text="x", snapshot="x", block_index=0)))
    apply_event(state, wrap(ToolQueuedEvent(tool_use_id="toolu_inner", name="lookup", input={"key": "a"})))
    apply_event(state, wrap(wrap(ToolQueuedEvent(tool_use_id="toolu_deep", name="Read", input={}), "explore: deep", 2)))
    apply_event(state, wrap(ToolFinishedEvent(tool_use_id="toolu_inner", name="lookup", status="done",
                                              result={"type": "tool_result", "tool_use_id": "toolu_inner",
                                                      "content": "v"})))
    apply_event(state, wrap(RunFinishedEvent(reason="end_turn", usage=Usage())))
    assert state.cards["toolu_inner"].name == "explore: look › lookup"
    assert state.cards["toolu_inner"].status == "done"
    assert state.cards["toolu_deep"].name == "explore: deep › Read"
    assert state.request_index != 3 and not state.texts
    assert state.finish_reason is None  # the sub-agent's end is not the cell's


def test_approval_panel_names_the_asking_sub_agent() -> None:
    from jupyter_toolagent.notebook.approval import ApprovalPanel

    request = ApprovalRequest("write_note", {}, "toolu_1", reason="write_note is not allowed by any rule",
                              suggested_rule="write_note", agent="general-purpose: notes")
    html = ApprovalPanel(request).reason.value
    assert "sub-agent general-purpose: notes asks" in html
    assert ">write_note</code>" in html  # "Always allow" still adds the plain rule
    plain = ApprovalPanel(ApprovalRequest("write_note", {}, "toolu_2", reason="r")).reason.value
    assert "sub-agent" not in plain
