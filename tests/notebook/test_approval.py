"""The widget approver: answers come from button clicks; abort, interrupt and timeout end it."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from jupyter_toolagent.core import events as E
from jupyter_toolagent.core.abort import AbortSignal
from jupyter_toolagent.core.permission_types import ApprovalRequest
from jupyter_toolagent.notebook.approval import ApprovalPanel, WidgetApprover
from jupyter_toolagent.notebook.display import RunDisplay

REQUEST = ApprovalRequest(
    tool_name="Bash",
    input={"command": "git log --oneline -5"},
    tool_use_id="toolu_ask",
    reason="no allow rule matches Bash(git log --oneline -5)",
    suggested_rule="Bash(git log:*)",
)


async def start_ask(view: RunDisplay) -> tuple[asyncio.Task, ApprovalPanel]:
    view.handle(E.ToolQueuedEvent(tool_use_id=REQUEST.tool_use_id, name="Bash", input=REQUEST.input))
    task = asyncio.ensure_future(view.approver(REQUEST))
    for _ in range(100):
        await asyncio.sleep(0.001)
        card = view.widgets.cards.get(REQUEST.tool_use_id)
        if card is not None and card.approval_slot.children:
            (panel_box,) = card.approval_slot.children
            panel = view._approver.panels[REQUEST.tool_use_id]
            assert panel.box is panel_box
            return task, panel
    raise AssertionError("no approval panel appeared in the card")


def all_disabled(panel: ApprovalPanel) -> bool:
    return all(c.disabled for c in panel.controls)


@pytest.mark.asyncio
async def test_panel_shows_tool_input_reason_and_rule():
    view = RunDisplay(AbortSignal(), interactive=True)
    task, panel = await start_ask(view)
    card = view.widgets.cards[REQUEST.tool_use_id]
    assert "git log --oneline -5" in card.input.value
    assert "no allow rule matches" in panel.reason.value
    assert "Bash(git log:*)" in panel.reason.value
    assert 'data-status="waiting"' in card.header.value
    assert [b.description for b in (panel.allow_once, panel.always_allow, panel.deny)] == ["Allow once", "Always allow", "Deny"]
    assert not any(c.disabled for c in panel.controls)
    panel.allow_once.click()
    await task


@pytest.mark.asyncio
async def test_allow_once_resolves_and_disables_buttons():
    view = RunDisplay(AbortSignal(), interactive=True)
    task, panel = await start_ask(view)
    panel.allow_once.click()
    response = await asyncio.wait_for(task, 2)
    assert (response.behavior, response.always, response.decided_by) == ("allow", False, "user")
    assert all_disabled(panel)
    card = view.widgets.cards[REQUEST.tool_use_id]
    assert "Allowed once by you at" in card.decision.value
    assert len(view.approval_latencies) == 1 and view.approval_latencies[0] < 1.0


@pytest.mark.asyncio
async def test_always_allow_returns_always_and_shows_the_rule():
    view = RunDisplay(AbortSignal(), interactive=True)
    task, panel = await start_ask(view)
    panel.always_allow.click()
    response = await asyncio.wait_for(task, 2)
    assert response.behavior == "allow" and response.always is True
    decision = view.widgets.cards[REQUEST.tool_use_id].decision.value
    assert "Always allowed by you" in decision and "Bash(git log:*)" in decision


@pytest.mark.asyncio
async def test_deny_carries_the_typed_reason():
    view = RunDisplay(AbortSignal(), interactive=True)
    task, panel = await start_ask(view)
    panel.deny_reason.value = "  use git status instead  "
    panel.deny.click()
    response = await asyncio.wait_for(task, 2)
    assert (response.behavior, response.reason) == ("deny", "use git status instead")
    assert all_disabled(panel)
    assert view.state.cards[REQUEST.tool_use_id].status == "denied"
    assert "use git status instead" in view.widgets.cards[REQUEST.tool_use_id].decision.value


@pytest.mark.asyncio
async def test_only_the_first_click_counts():
    view = RunDisplay(AbortSignal(), interactive=True)
    task, panel = await start_ask(view)
    panel.deny.click()
    panel.allow_once.click()  # a racing second click (disabled in the browser, but not here)
    response = await asyncio.wait_for(task, 2)
    assert response.behavior == "deny"


@pytest.mark.asyncio
async def test_click_from_another_thread_is_delivered():
    """On ipykernel 6 the pump may run widget callbacks off the loop thread."""
    view = RunDisplay(AbortSignal(), interactive=True)
    task, panel = await start_ask(view)
    threading.Thread(target=panel.allow_once.click).start()
    response = await asyncio.wait_for(task, 2)
    assert response.behavior == "allow"


@pytest.mark.asyncio
async def test_abort_ends_the_wait_promptly():
    abort = AbortSignal()
    view = RunDisplay(abort, interactive=True)
    task, panel = await start_ask(view)
    started = time.monotonic()
    threading.Timer(0.05, abort.abort, args=("stopped by user",)).start()
    response = await asyncio.wait_for(task, 2)
    elapsed = time.monotonic() - started
    assert elapsed < 0.3
    assert (response.behavior, response.decided_by) == ("deny", "interrupt")
    assert all_disabled(panel)


@pytest.mark.asyncio
async def test_stop_button_ends_the_wait():
    view = RunDisplay(AbortSignal(), interactive=True)
    task, panel = await start_ask(view)
    view.widgets.stop_button.click()
    response = await asyncio.wait_for(task, 1)
    assert response.decided_by == "interrupt" and all_disabled(panel)


@pytest.mark.asyncio
async def test_already_aborted_run_does_not_wait():
    abort = AbortSignal()
    abort.abort()
    view = RunDisplay(abort, interactive=True)
    started = time.monotonic()
    response = await asyncio.wait_for(view.approver(REQUEST), 1)
    assert response.behavior == "deny" and time.monotonic() - started < 0.2


@pytest.mark.asyncio
async def test_cancellation_interrupt_propagates_and_leaves_buttons_disabled():
    view = RunDisplay(AbortSignal(), interactive=True)
    task, panel = await start_ask(view)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert all_disabled(panel)
    decision = view.state.cards[REQUEST.tool_use_id].decision
    assert decision.decided_by == "interrupt" and decision.behavior == "deny"
    assert "Not answered" in view.widgets.cards[REQUEST.tool_use_id].decision.value


@pytest.mark.asyncio
async def test_timeout_denies():
    view = RunDisplay(AbortSignal(), interactive=True, approval_timeout=0.15)
    task, panel = await start_ask(view)
    response = await asyncio.wait_for(task, 2)
    assert (response.behavior, response.decided_by) == ("deny", "timeout")
    assert "0.15 s" in response.reason and all_disabled(panel)


@pytest.mark.asyncio
async def test_approver_works_without_a_display():
    """`WidgetApprover` only needs somewhere to mount the panel."""
    mounted, answers = [], []
    approver = WidgetApprover(
        AbortSignal(),
        mount=lambda req, panel: mounted.append(panel),
        on_answer=lambda req, resp, panel: answers.append(resp),
    )
    task = asyncio.ensure_future(approver(REQUEST))
    await asyncio.sleep(0.01)
    mounted[0].always_allow.click()
    response = await asyncio.wait_for(task, 1)
    assert response.always and answers == [response]


@pytest.mark.asyncio
async def test_ask_before_tool_queued_still_gets_a_card():
    view = RunDisplay(AbortSignal(), interactive=True)
    task = asyncio.ensure_future(view.approver(REQUEST))
    await asyncio.sleep(0.01)
    card = view.widgets.cards[REQUEST.tool_use_id]
    assert card.approval_slot.children
    view.handle(E.ToolQueuedEvent(tool_use_id=REQUEST.tool_use_id, name="Bash", input=REQUEST.input))
    view.handle(E.PermissionAskedEvent(tool_use_id=REQUEST.tool_use_id, name="Bash", input=REQUEST.input, reason=REQUEST.reason))
    assert len(view.widgets.timeline.children) == 1
    view._approver.panels[REQUEST.tool_use_id].allow_once.click()
    await task
    # the core's late events do not re-open the question
    view.handle(E.PermissionDecidedEvent(tool_use_id=REQUEST.tool_use_id, name="Bash", behavior="allow", decided_by="user"))
    assert view.state.cards[REQUEST.tool_use_id].status == "queued"
