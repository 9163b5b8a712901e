"""`RunDisplay` with real ipywidgets (no front end attached): tree, cards, end states."""

from __future__ import annotations

import ipywidgets as widgets
import pytest

from jupyter_toolagent.core import events as E
from jupyter_toolagent.core.abort import AbortSignal
from jupyter_toolagent.core.usage import Usage
from jupyter_toolagent.notebook import display as display_module
from jupyter_toolagent.notebook.display import RunDisplay


def tool_run(view: RunDisplay) -> None:
    view.handle(E.RequestStartedEvent(index=0, model="claude-sonnet-4-5"))
    view.handle(E.TextDeltaEvent(text="Looking", snapshot="Looking **now**", block_index=0))
    view.handle(E.ToolQueuedEvent(tool_use_id="toolu_1", name="RunPython", input={"code": "x = 41 + 1\nprint(x)"}))
    view.handle(E.ToolStartedEvent(tool_use_id="toolu_1", name="RunPython"))


def never_throttled():
    ticks = iter(range(0, 100_000))
    return lambda: float(next(ticks))  # one second per reading


def test_tree_is_built_once_with_named_parts():
    view = RunDisplay(AbortSignal(), interactive=True)
    root = view.widgets.root
    assert isinstance(root, widgets.VBox)
    tool_run(view)
    card = view.widgets.cards["toolu_1"]
    header_widget, progress_bar = card.header, card.progress_bar
    assert view.widgets.timeline.children == (view.widgets.texts["0:0"], card.box)
    assert "<strong>now</strong>" in view.widgets.texts["0:0"].value
    assert "RunPython" in card.header.value and 'data-status="running"' in card.header.value
    assert "x = 41 + 1" in card.input.value
    assert "jp-toolagent-s-running" in card.box._dom_classes
    view.handle(E.ToolProgressEvent(tool_use_id="toolu_1", fraction=0.25, message="quarter"))
    view.handle(E.ToolFinishedEvent(tool_use_id="toolu_1", name="RunPython", status="done",
                                    result={"type": "tool_result", "tool_use_id": "toolu_1", "content": "42"},
                                    duration=0.3, captured_output="42\n"))
    # same widget objects, new values
    assert view.widgets.cards["toolu_1"].header is header_widget and card.progress_bar is progress_bar
    assert view.widgets.root is root
    assert 'data-status="done"' in card.header.value and "300 ms" in card.header.value
    assert "42" in card.result.value and "Printed output" in card.result.value
    assert "jp-toolagent-s-done" in card.box._dom_classes and "jp-toolagent-s-running" not in card.box._dom_classes


def test_progress_bar_hides_when_the_call_ends():
    view = RunDisplay(AbortSignal(), interactive=True, clock=never_throttled())
    tool_run(view)
    card = view.widgets.cards["toolu_1"]
    assert card.progress_bar.layout.display == "none"
    view.handle(E.ToolProgressEvent(tool_use_id="toolu_1", fraction=0.5, message="halfway"))
    assert card.progress_bar.layout.display is None
    view.handle(E.ToolFinishedEvent(tool_use_id="toolu_1", name="RunPython", status="done", result={"content": "ok"}))
    assert card.progress_bar.layout.display == "none" and card.progress_text.value == ""


def test_progress_is_shown_when_flushed():
    view = RunDisplay(AbortSignal(), interactive=True, clock=never_throttled())
    tool_run(view)
    card = view.widgets.cards["toolu_1"]
    view.handle(E.ToolProgressEvent(tool_use_id="toolu_1", fraction=0.5, message="halfway"))
    assert card.progress_bar.layout.display is None and card.progress_bar.value == 0.5
    assert "halfway" in card.progress_text.value


def test_stop_button_aborts_the_run():
    abort = AbortSignal()
    view = RunDisplay(abort, interactive=True)
    view.widgets.stop_button.click()
    assert abort.aborted and abort.reason == "stopped by user"
    assert view.widgets.stop_button.disabled


def test_finish_sets_end_states_and_hides_stop():
    view = RunDisplay(AbortSignal(), interactive=True)
    tool_run(view)
    view.handle(E.RunFinishedEvent(reason="aborted", usage=Usage(5, 6, 0, 0, 1)))
    view.finish()
    card = view.widgets.cards["toolu_1"]
    assert 'data-status="interrupted"' in card.header.value
    assert 'data-run-status="stopped"' in view.widgets.status.value
    assert view.widgets.stop_button.layout.display == "none"
    assert "input 5" in view.widgets.footer.value


def test_finish_without_run_finished_marks_the_run_interrupted_or_failed():
    view = RunDisplay(AbortSignal(), interactive=True)
    tool_run(view)
    view.finish(KeyboardInterrupt())
    assert view.state.status == "stopped" and view.state.cards["toolu_1"].status == "interrupted"
    other = RunDisplay(AbortSignal(), interactive=True)
    tool_run(other)
    other.finish(RuntimeError("kaput"))
    assert other.state.status == "error" and "kaput" in other.widgets.status.value
    assert other.state.cards["toolu_1"].status == "cancelled"


def test_notices_are_visible():
    view = RunDisplay(AbortSignal(), interactive=True)
    view.handle(E.NoticeEvent(level="error", text="overloaded, retrying"))
    (notice,) = view.widgets.notices.values()
    assert "overloaded, retrying" in notice.value and 'data-level="error"' in notice.value


def test_shows_and_finishes_in_the_cell(monkeypatch):
    shown, updated = [], []
    import IPython.display as ipd

    class Handle:
        display_id = "abc"

    monkeypatch.setattr(ipd, "display", lambda obj, **kw: shown.append((obj, kw)) or Handle())
    monkeypatch.setattr(ipd, "update_display", lambda obj, **kw: updated.append((obj, kw)))
    view = RunDisplay(AbortSignal(), interactive=True)
    view.show()
    assert shown == [(view.widgets.root, {"display_id": True})]
    tool_run(view)
    view.finish()
    (bundle, kw) = updated[0]
    assert kw == {"raw": True, "display_id": "abc"}
    assert {"application/vnd.jupyter.widget-view+json", "text/html", "text/plain"} <= set(bundle)
    assert "RunPython" in bundle["text/html"] and "RunPython" in bundle["text/plain"]


def test_non_interactive_draws_nothing_live_and_displays_static_at_finish(monkeypatch):
    shown = []
    import IPython.display as ipd

    monkeypatch.setattr(ipd, "display", lambda obj, **kw: shown.append(obj))
    view = RunDisplay(AbortSignal(), interactive=False)
    view.show()
    tool_run(view)
    assert shown == [] and view.widgets is None
    view.handle(E.RunFinishedEvent(reason="end_turn", usage=Usage(1, 1, 0, 0, 1)))
    view.finish()
    view.finish()  # idempotent
    (static,) = shown
    bundle = static._repr_mimebundle_()
    assert "RunPython" in bundle["text/html"] and "Agent finished" in bundle["text/plain"]


@pytest.mark.asyncio
async def test_non_interactive_approver_denies_naming_the_rule():
    from jupyter_toolagent.core.permission_types import ApprovalRequest

    view = RunDisplay(AbortSignal(), interactive=False)
    response = await view.approver(ApprovalRequest("Bash", {"command": "rm x"}, "toolu_1", "no rule", "Bash(rm x)"))
    assert response.behavior == "deny" and response.decided_by == "policy"
    assert "--allow 'Bash(rm x)'" in response.reason


def test_updates_are_counted_only_when_widgets_change():
    view = RunDisplay(AbortSignal(), interactive=True)
    before = view.updates
    view.handle(E.ToolProgressEvent(tool_use_id="unknown", fraction=0.5))
    assert view.updates == before
    view.handle(E.NoticeEvent(text="hello"))
    assert view.updates == before + 1
    assert display_module.DEFAULT_MAX_UPDATES_PER_SECOND <= 20
