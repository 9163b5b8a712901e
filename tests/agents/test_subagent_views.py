"""How a sub-agent's events are drawn (SPEC §12): inside the card of the ``Agent`` call that
started it — its text and its tool cards (with their asks) in that card's nested timeline, at
each depth; the cell's own timeline, request counter and end are untouched. The same state
fills the live widgets (built once) and the static HTML/text of a saved notebook."""

from __future__ import annotations

import asyncio

import pytest
from bs4 import BeautifulSoup
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_toolagent.core.abort import AbortSignal
from jupyter_toolagent.core.events import (PermissionAskedEvent, PermissionDecidedEvent, RequestFinishedEvent,
                                           RequestStartedEvent, RunFinishedEvent, SubagentEvent, TextDeltaEvent,
                                           ToolFinishedEvent, ToolQueuedEvent, ToolStartedEvent)
from jupyter_toolagent.core.permission_types import ApprovalRequest
from jupyter_toolagent.core.usage import Usage
from jupyter_toolagent.notebook import static_render as sr
from jupyter_toolagent.notebook.display import RunDisplay
from jupyter_toolagent.notebook.view_state import RunViewState, apply_event, record_user_decision


def wrap(event, parent="toolu_agent", agent="explore: look", depth=1):
    return SubagentEvent(parent_tool_use_id=parent, agent=agent, depth=depth, event=event)


def finished(tool_use_id, name, text="ok"):
    return ToolFinishedEvent(tool_use_id=tool_use_id, name=name, status="done",
                             result={"type": "tool_result", "tool_use_id": tool_use_id, "content": text})


def agent_call(state_or_view, tool_use_id="toolu_agent", description="look"):
    event = ToolQueuedEvent(tool_use_id=tool_use_id, name="Agent",
                            input={"description": description, "prompt": "p", "subagent_type": "explore"})
    if isinstance(state_or_view, RunViewState):
        apply_event(state_or_view, event)
        apply_event(state_or_view, ToolStartedEvent(tool_use_id=tool_use_id, name="Agent"))
    else:
        state_or_view.handle(event)
        state_or_view.handle(ToolStartedEvent(tool_use_id=tool_use_id, name="Agent"))


def sub_run(parent="toolu_agent", agent="explore: look", inner="toolu_inner", text="a is 42"):
    """A sub-agent's whole run as the parent receives it."""
    return [wrap(e, parent, agent) for e in (
        RequestStartedEvent(index=0, model="m"),
        ToolQueuedEvent(tool_use_id=inner, name="lookup", input={"key": "a"}),
        ToolStartedEvent(tool_use_id=inner, name="lookup"),
        finished(inner, "lookup", "42"),
        RequestFinishedEvent(index=0, stop_reason="tool_use", usage=Usage(input_tokens=10, output_tokens=5, requests=1)),
        RequestStartedEvent(index=1, model="m"),
        TextDeltaEvent(text=text, snapshot=text, block_index=0),
        RequestFinishedEvent(index=1, stop_reason="end_turn", usage=Usage(input_tokens=20, output_tokens=7, requests=1)),
        RunFinishedEvent(reason="end_turn", usage=Usage(input_tokens=30, output_tokens=12, requests=2)),
    )]


# --- the view state ------------------------------------------------------------------------------
def test_sub_agent_text_and_cards_nest_inside_the_agent_card() -> None:
    state = RunViewState(started_at=0.0)
    apply_event(state, RequestStartedEvent(index=0, model="cell-model"))
    agent_call(state)
    for event in sub_run():
        apply_event(state, event)
    assert state.items == [("card", "toolu_agent")]  # nothing of the sub-agent's in the cell's own timeline
    agent = state.cards["toolu_agent"]
    assert agent.nested is not None and agent.nested.agent == "explore: look"
    kinds = [(kind, key) for kind, key in agent.nested.items]
    assert kinds == [("card", "toolu_inner"), ("text", "toolu_agent/1:0")]
    inner = state.cards["toolu_inner"]
    assert (inner.name, inner.agent, inner.title, inner.status) == ("lookup", "explore: look",
                                                                      "explore: look › lookup", "done")
    assert state.texts["toolu_agent/1:0"].text == "a is 42" and state.texts["toolu_agent/1:0"].complete
    assert agent.nested.requests == 2 and agent.nested.usage.input_tokens == 30
    assert agent.nested.finish_reason == "end_turn"
    assert state.request_index == 0 and state.model == "cell-model" and state.requests_finished == 0
    assert state.finish_reason is None and state.status == "running"  # the sub-agent's end is not the cell's
    assert state.usage.input_tokens == 30  # rolled up into the cell's footer while the run goes on


def test_two_parallel_agents_each_keep_their_own_nested_timeline() -> None:
    state = RunViewState(started_at=0.0)
    agent_call(state, "toolu_a", "left")
    agent_call(state, "toolu_b", "right")
    left = sub_run("toolu_a", "explore: left", "toolu_left", "left done")
    right = sub_run("toolu_b", "explore: right", "toolu_right", "right done")
    for pair in zip(left, right):  # strictly interleaved, as two parallel runs deliver them
        for event in pair:
            apply_event(state, event)
    a, b = state.cards["toolu_a"].nested, state.cards["toolu_b"].nested
    assert a is not None and b is not None
    assert [k for _, k in a.items] == ["toolu_left", "toolu_a/1:0"]
    assert [k for _, k in b.items] == ["toolu_right", "toolu_b/1:0"]
    assert state.texts["toolu_a/1:0"].text == "left done" and state.texts["toolu_b/1:0"].text == "right done"
    assert state.items == [("card", "toolu_a"), ("card", "toolu_b")]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=2), min_size=0, max_size=60), st.integers(min_value=1, max_value=3))
def test_any_interleaving_of_parallel_sub_agents_keeps_each_ones_items_in_its_own_card(order, agents) -> None:
    """Generated: each of 1–3 parallel sub-agents' runs, interleaved in any order."""
    state = RunViewState(started_at=0.0)
    runs = []
    for i in range(agents):
        agent_call(state, f"toolu_agent{i}", f"task {i}")
        runs.append(sub_run(f"toolu_agent{i}", f"explore: task {i}", f"toolu_inner{i}", f"text {i}"))
    cursors = [0] * agents
    for pick in order + list(range(agents)) * 10:
        i = pick % agents
        if cursors[i] < len(runs[i]):
            apply_event(state, runs[i][cursors[i]])
            cursors[i] += 1
    assert state.items == [("card", f"toolu_agent{i}") for i in range(agents)]
    for i in range(agents):
        nested = state.cards[f"toolu_agent{i}"].nested
        assert nested is not None and nested.agent == f"explore: task {i}"
        assert [k for _, k in nested.items] == [f"toolu_inner{i}", f"toolu_agent{i}/1:0"]
        assert state.texts[f"toolu_agent{i}/1:0"].text == f"text {i}"
        assert state.cards[f"toolu_inner{i}"].agent == f"explore: task {i}"
    assert state.finish_reason is None


def test_a_second_level_nests_inside_the_first() -> None:
    state = RunViewState(started_at=0.0)
    agent_call(state, "toolu_outer")
    outer = lambda e: wrap(e, "toolu_outer", "general-purpose: plan")  # noqa: E731
    apply_event(state, outer(ToolQueuedEvent(tool_use_id="toolu_mid", name="Agent", input={"description": "deep"})))
    apply_event(state, outer(wrap(ToolQueuedEvent(tool_use_id="toolu_deep", name="Read", input={"file_path": "x"}),
                                  "toolu_mid", "explore: deep", 2)))
    apply_event(state, outer(wrap(TextDeltaEvent(text="deep text", snapshot="deep text", block_index=0),
                                  "toolu_mid", "explore: deep", 2)))
    first = state.cards["toolu_outer"].nested
    second = state.cards["toolu_mid"].nested
    assert first is not None and second is not None
    assert first.items == [("card", "toolu_mid")] and state.cards["toolu_mid"].agent == "general-purpose: plan"
    assert second.items == [("card", "toolu_deep"), ("text", "toolu_mid/-1:0")] and second.depth == 2
    assert state.cards["toolu_deep"].title == "explore: deep › Read"
    assert state.items == [("card", "toolu_outer")]


def test_a_sub_agents_ask_shows_inside_and_is_counted_on_every_agent_card_around_it() -> None:
    state = RunViewState(started_at=0.0)
    agent_call(state, "toolu_outer")
    ask = PermissionAskedEvent(tool_use_id="toolu_w", name="Write", input={"file_path": "n.txt"},
                               reason="Write is not allowed by any rule", suggested_rule="Write")
    update = apply_event(state, wrap(wrap(ask, "toolu_mid", "general-purpose: notes", 2), "toolu_outer", "gp: plan"))
    assert state.cards["toolu_w"].status == "waiting" and state.cards["toolu_w"].agent == "general-purpose: notes"
    assert state.cards["toolu_outer"].nested.waiting == 1 and state.cards["toolu_mid"].nested.waiting == 1
    assert {"card:toolu_outer", "card:toolu_mid", "card:toolu_w"} <= update.dirty and update.urgent
    assert 'data-waiting-inside="1"' in sr.card_header_html(state.cards["toolu_outer"])
    assert "1 call inside waits for your approval" in sr.render_text(state)
    update = record_user_decision(state, "toolu_w", behavior="allow", decided_by="user", at=1.0, wall_time=None,
                                  agent="general-purpose: notes")
    assert state.cards["toolu_w"].decision is not None and state.cards["toolu_w"].decision.behavior == "allow"
    assert state.cards["toolu_outer"].nested.waiting == 0 and "card:toolu_outer" in update.dirty
    assert "data-waiting-inside" not in sr.card_header_html(state.cards["toolu_outer"])


def test_a_repeated_tool_use_id_in_a_sub_agent_gets_its_own_card() -> None:
    """Scripts may reuse ids across transcripts: the cell's card and the sub-agent's stay apart."""
    state = RunViewState(started_at=0.0)
    apply_event(state, ToolQueuedEvent(tool_use_id="toolu_1", name="Read", input={"file_path": "cell.txt"}))
    agent_call(state)
    apply_event(state, wrap(ToolQueuedEvent(tool_use_id="toolu_1", name="Grep", input={"pattern": "x"})))
    apply_event(state, wrap(finished("toolu_1", "Grep", "sub result")))
    assert state.cards["toolu_1"].name == "Read" and state.cards["toolu_1"].status == "queued"
    inner = state.cards["toolu_agent/toolu_1"]
    assert (inner.name, inner.status, inner.result_text) == ("Grep", "done", "sub result")
    assert state.cards["toolu_agent"].nested.items == [("card", "toolu_agent/toolu_1")]


# --- the static rendering --------------------------------------------------------------------------
def card_ancestors(html_text: str) -> dict[str, list[str]]:
    """For each card drawn in ``html_text``: the ids of the cards it is drawn inside, outermost first."""
    soup = BeautifulSoup(html_text, "html.parser")
    return {card["data-tool-use-id"]: [a["data-tool-use-id"] for a in reversed(card.find_parents(attrs={"data-tool-use-id": True}))]
            for card in soup.find_all(attrs={"data-tool-use-id": True})}


def test_static_html_and_text_draw_the_sub_agents_inside_its_card() -> None:
    state = RunViewState(started_at=0.0)
    apply_event(state, ToolQueuedEvent(tool_use_id="toolu_cell", name="Read", input={"file_path": "a"}))
    agent_call(state, "toolu_a", "left")
    agent_call(state, "toolu_b", "right")
    for event in sub_run("toolu_a", "explore: left", "toolu_left", "LEFT REPORT") + sub_run(
            "toolu_b", "explore: right", "toolu_right", "RIGHT REPORT"):
        apply_event(state, event)
    apply_event(state, RunFinishedEvent(reason="end_turn", usage=Usage()))
    assert card_ancestors(sr.render_html(state)) == {"toolu_cell": [], "toolu_a": [], "toolu_b": [],
                              "toolu_left": ["toolu_a"], "toolu_right": ["toolu_b"]}
    html_text = sr.render_html(state)
    assert html_text.index("LEFT REPORT") < html_text.index('data-tool-use-id="toolu_b"') < html_text.index("RIGHT REPORT")
    assert 'data-agent="explore: left"' in html_text
    text = sr.render_text(state)
    assert "  | sub-agent explore: left · 2 requests, input 30, output 12 · ended: end_turn" in text
    assert "  | [explore: left › lookup] done" in text and "  | LEFT REPORT" in text
    assert text.index("[Agent]") < text.index("  | [explore: left › lookup]")


# --- the live widgets --------------------------------------------------------------------------------
def test_live_widgets_nest_each_sub_agents_cards_and_are_built_once() -> None:
    view = RunDisplay(AbortSignal(), interactive=True)
    agent_call(view, "toolu_a", "left")
    agent_call(view, "toolu_b", "right")
    left = sub_run("toolu_a", "explore: left", "toolu_left", "left text")
    right = sub_run("toolu_b", "explore: right", "toolu_right", "right text")
    for a, b in zip(left[:3], right[:3]):
        view.handle(a)
        view.handle(b)
    w = view.widgets
    assert w is not None
    inner_left, agent_a = w.cards["toolu_left"], w.cards["toolu_a"]
    assert len(w.timeline.children) == 2  # only the two Agent cards in the cell's own timeline
    assert agent_a.nested_items.children == (inner_left.box,)
    assert w.cards["toolu_b"].nested_items.children == (w.cards["toolu_right"].box,)
    assert agent_a.nested_box.layout.display is None and "sub-agent explore: left" in agent_a.nested_header.value
    for a, b in zip(left[3:], right[3:]):
        view.handle(a)
        view.handle(b)
    view.finish()
    assert w.cards["toolu_left"] is inner_left and w.cards["toolu_a"] is agent_a  # built once
    assert 'data-status="done"' in inner_left.header.value
    assert agent_a.nested_items.children[0] is inner_left.box
    assert "left text" in agent_a.nested_items.children[1].value
    assert "right text" in w.cards["toolu_b"].nested_items.children[1].value
    assert "2 requests" in agent_a.nested_header.value


def test_live_widgets_nest_a_second_level() -> None:
    view = RunDisplay(AbortSignal(), interactive=True)
    agent_call(view, "toolu_outer")
    outer = lambda e: wrap(e, "toolu_outer", "general-purpose: plan")  # noqa: E731
    view.handle(outer(ToolQueuedEvent(tool_use_id="toolu_mid", name="Agent", input={"description": "deep"})))
    view.handle(outer(wrap(ToolQueuedEvent(tool_use_id="toolu_deep", name="Read", input={}), "toolu_mid", "explore: d", 2)))
    w = view.widgets
    assert w is not None
    assert w.cards["toolu_outer"].nested_items.children == (w.cards["toolu_mid"].box,)
    assert w.cards["toolu_mid"].nested_items.children == (w.cards["toolu_deep"].box,)


@pytest.mark.asyncio
async def test_a_sub_agents_approval_panel_goes_into_its_nested_card() -> None:
    view = RunDisplay(AbortSignal(), interactive=True)
    agent_call(view, "toolu_agent", "notes")
    label = "general-purpose: notes"
    request = ApprovalRequest("write_note", {"text": "hi"}, "toolu_w", reason="write_note is not allowed by any rule",
                              suggested_rule="write_note", agent=label)
    view.handle(wrap(ToolQueuedEvent(tool_use_id="toolu_w", name="write_note", input={"text": "hi"}), agent=label))
    view.handle(wrap(PermissionAskedEvent(tool_use_id="toolu_w", name="write_note", input={"text": "hi"},
                                          reason=request.reason, suggested_rule="write_note"), agent=label))
    task = asyncio.ensure_future(view.approver(request))
    w = view.widgets
    assert w is not None
    for _ in range(200):
        await asyncio.sleep(0.001)
        if w.cards["toolu_w"].approval_slot.children:
            break
    panel = view._approver.panels["toolu_w"]  # type: ignore[union-attr]
    assert w.cards["toolu_w"].approval_slot.children == (panel.box,)
    assert w.cards["toolu_agent"].nested_items.children == (w.cards["toolu_w"].box,)
    assert len(w.timeline.children) == 1 and set(view.state.cards) == {"toolu_agent", "toolu_w"}
    assert "sub-agent general-purpose: notes asks" in panel.reason.value
    assert "general-purpose: notes › write_note" in w.cards["toolu_w"].header.value
    assert 'data-waiting-inside="1"' in w.cards["toolu_agent"].header.value
    panel.allow_once.click()
    response = await task
    assert response.behavior == "allow"
    view.handle(wrap(PermissionDecidedEvent(tool_use_id="toolu_w", name="write_note", behavior="allow",
                                            decided_by="user"), agent=label))
    assert view.state.cards["toolu_w"].decision is not None
    assert "data-waiting-inside" not in w.cards["toolu_agent"].header.value
    assert "Allowed once by you" in w.cards["toolu_w"].decision.value


async def _panel_mounted(view: RunDisplay, key: str) -> bool:
    for _ in range(300):
        await asyncio.sleep(0.005)
        card = view.widgets.cards.get(key) if view.widgets is not None else None
        if card is not None and card.approval_slot.children:
            return True
    return False


@pytest.mark.asyncio
async def test_an_approval_asked_before_the_view_saw_the_call_waits_for_its_nested_card() -> None:
    """The real order: the approver runs while the sub-agent's events are still on their way
    through the run's event stream; the panel must not open a card of its own at the top."""
    view = RunDisplay(AbortSignal(), interactive=True)
    agent_call(view, "toolu_agent", "notes")
    label = "general-purpose: notes"
    request = ApprovalRequest("write_note", {"text": "hi"}, "toolu_w", reason="not allowed", suggested_rule="write_note",
                              agent=label)
    task = asyncio.ensure_future(view.approver(request))
    await asyncio.sleep(0.05)
    assert set(view.state.cards) == {"toolu_agent"}  # nothing drawn at the top meanwhile
    view.handle(wrap(ToolQueuedEvent(tool_use_id="toolu_w", name="write_note", input={"text": "hi"}), agent=label))
    assert await _panel_mounted(view, "toolu_w")
    w = view.widgets
    assert w is not None and w.cards["toolu_agent"].nested_items.children == (w.cards["toolu_w"].box,)
    assert len(w.timeline.children) == 1 and view.state.cards["toolu_w"].status == "waiting"
    view._approver.panels["toolu_w"].deny.click()  # type: ignore[union-attr]
    assert (await task).behavior == "deny"
    assert view.state.cards["toolu_w"].decision is not None and view.state.cards["toolu_w"].status == "denied"


@pytest.mark.asyncio
async def test_a_sub_agents_approval_whose_card_never_comes_is_still_shown(monkeypatch) -> None:
    from jupyter_toolagent.notebook import display

    monkeypatch.setattr(display, "PENDING_PANEL_SECONDS", 0.05)
    view = RunDisplay(AbortSignal(), interactive=True)
    request = ApprovalRequest("write_note", {}, "toolu_lost", reason="not allowed", agent="explore: lost")
    task = asyncio.ensure_future(view.approver(request))
    assert await _panel_mounted(view, "toolu_lost")
    assert view.state.cards["toolu_lost"].title == "explore: lost › write_note"
    view._approver.panels["toolu_lost"].allow_once.click()  # type: ignore[union-attr]
    assert (await task).behavior == "allow"
    assert view.state.cards["toolu_lost"].decision is not None


def test_approval_panel_names_the_asking_sub_agent() -> None:
    from jupyter_toolagent.notebook.approval import ApprovalPanel

    request = ApprovalRequest("write_note", {}, "toolu_1", reason="write_note is not allowed by any rule",
                              suggested_rule="write_note", agent="general-purpose: notes")
    html = ApprovalPanel(request).reason.value
    assert "sub-agent general-purpose: notes asks" in html
    assert ">write_note</code>" in html  # "Always allow" still adds the plain rule
    plain = ApprovalPanel(ApprovalRequest("write_note", {}, "toolu_2", reason="r")).reason.value
    assert "sub-agent" not in plain
