"""``%agent transcript | raw | schedule | check | help`` in an in-process IPython shell: each
answers with the view of `jupyter_toolagent.views` for the current session, built from what
the session really recorded."""

from __future__ import annotations

from typing import Any, Iterator

import pytest
from IPython.core.error import UsageError

from jupyter_toolagent.notebook.sessions import current_session
from jupyter_toolagent.views import PairingCheckView, RawView, ScheduleView, TranscriptView
from jupyter_toolagent.models import text_block, tool_use_block

TOOLS = '''
import threading
from jupyter_toolagent import tool

both_started = threading.Barrier(2, timeout=5)

@tool(read_only=True)
def slow_read(key: str) -> str:
    """Read a key slowly.

    Args:
        key: Which key.
    """
    both_started.wait()  # returns only when the other call is running too
    return key.upper()

@tool
def write_note(text: str) -> str:
    """Write a note (a side effect)."""
    NOTES.append(text)
    return "noted"

NOTES = []
'''

ORPHAN = ("messages.2.content.3: unexpected `tool_use_id` found in `tool_result` blocks: toolu_ghost. Each "
          "`tool_result` block must have a corresponding `tool_use` block in the previous message.")


def run_cell(shell: Any, cell: str) -> None:
    result = shell.run_cell(cell)
    if result.error_before_exec or result.error_in_exec:
        raise result.error_before_exec or result.error_in_exec


@pytest.fixture
def scripted_run(agent_shell: Any) -> Iterator[Any]:
    """A run with two safe calls (they must overlap to finish), then an unsafe one."""
    run_cell(agent_shell, TOOLS)
    agent_shell.user_ns["turns"] = [
        [text_block("Reading, then noting."), tool_use_block("slow_read", {"key": "a"}),
         tool_use_block("slow_read", {"key": "b"}), tool_use_block("write_note", {"text": "A and B"})],
        "Noted.",
    ]
    run_cell(agent_shell, "%%agent --script turns --allow write_note --tools slow_read,write_note\nread a and b, note them")
    yield agent_shell
    for name in ("threading", "tool", "both_started", "slow_read", "write_note", "NOTES", "turns"):
        agent_shell.user_ns.pop(name, None)  # the test shell is shared: later tests must not see these tools


def test_before_any_run_the_views_say_so(agent_shell: Any) -> None:
    schedule = agent_shell.run_line_magic("agent", "schedule")
    raw = agent_shell.run_line_magic("agent", "raw")
    assert isinstance(schedule, ScheduleView) and isinstance(raw, RawView)
    assert schedule.to_text() == "Schedule of the last run in session 'default' — no tool call (no run yet)"
    assert raw.to_text() == "Raw requests of the last run in session 'default' — No run yet: run a %%agent cell first."
    check = agent_shell.run_line_magic("agent", "check")
    assert check.to_text() == ("Pairing check of session 'default' (0 messages): valid — every tool_use has exactly "
                               "one tool_result.")


def test_schedule_groups_the_safe_pair_and_puts_the_unsafe_call_after(scripted_run: Any) -> None:
    session = current_session(scripted_run)
    assert scripted_run.user_ns["NOTES"] == ["A and B"]
    view = scripted_run.run_line_magic("agent", "schedule")
    assert isinstance(view, ScheduleView) and view.source is session.runs[-1]
    groups = [[call.name for call in group.calls] for group in view.schedule.groups]
    assert groups == [["slow_read", "slow_read"], ["write_note"]]
    first, second = view.schedule.groups[0].calls
    (note,) = view.schedule.groups[1].calls
    assert note.started_at >= max(first.finished_at, second.finished_at)
    text = view.to_text()
    assert text.startswith("Schedule of the last run in session 'default' — 3 tool call(s) in 2 group(s)")
    assert "  response 1 · group 0 (2 call(s), concurrent)" in text and "  response 1 · group 1 (1 call(s), alone)" in text
    bundle = view._repr_mimebundle_()
    assert "<svg" in bundle["text/html"] and bundle["text/plain"] == text


def test_transcript_shows_the_session_as_sent_with_each_pair(scripted_run: Any) -> None:
    session = current_session(scripted_run)
    view = scripted_run.run_line_magic("agent", "transcript")
    assert isinstance(view, TranscriptView)
    assert view.messages == session.messages
    assert [(p.name, p.result.is_error) for p in view.pairs] == [
        ("slow_read", False), ("slow_read", False), ("write_note", False)]
    text = view.to_text()
    assert text.startswith("Transcript of session 'default' — 4 message(s), 3 tool call(s): valid")
    uses = [b for b in session.messages[1]["content"] if b["type"] == "tool_use"]
    for k, (use, preview) in enumerate(zip(uses, ["A", "B", "noted"])):
        assert f"tool_use {use['id']} {use['name']}" in text
        assert f"→ result messages.2.content.{k} · is_error: false · {preview}" in text


def test_raw_is_the_last_runs_requests_and_what_the_second_adds(scripted_run: Any) -> None:
    session = current_session(scripted_run)
    view = scripted_run.run_line_magic("agent", "raw")
    assert isinstance(view, RawView) and view.run is session.runs[-1]
    assert view.requests == session.runs[-1].requests and len(view.requests) == 2
    assert [t["name"] for t in view.requests[0]["tools"]] == ["ReadToolOutput", "slow_read", "write_note"]
    text = view.to_text()
    assert "Raw requests of the last run in session 'default' — 2 request(s) in this run" in text
    changes = text[text.index("Changes since request 1:"):]
    assert "+ messages[1] added:" in changes and "+ messages[2] added:" in changes
    assert "removed" not in changes


def test_check_reports_a_broken_transcript_in_the_apis_words(scripted_run: Any) -> None:
    session = current_session(scripted_run)
    assert scripted_run.run_line_magic("agent", "check").valid
    session.messages[2]["content"].append({"type": "tool_result", "tool_use_id": "toolu_ghost", "content": "boo"})  # 4th block
    view = scripted_run.run_line_magic("agent", "check")
    assert isinstance(view, PairingCheckView) and not view.valid
    assert view.to_text().splitlines() == [
        "Pairing check of session 'default' (4 messages): 1 violation(s). The API would reject this transcript "
        "(HTTP 400, invalid_request_error) with the first:",
        f"1. [orphan_result at messages.2.content.3] {ORPHAN}",
    ]
    transcript = scripted_run.run_line_magic("agent", "transcript")
    assert f"✗ {ORPHAN}" in transcript.to_text()


def test_a_transcript_that_cannot_be_read_is_reported_not_raised(agent_shell: Any) -> None:
    session = current_session(agent_shell)
    session.messages[:] = [{"role": "user", "content": "hi"}, "not a message"]
    check = agent_shell.run_line_magic("agent", "check")
    assert not check.valid and "not checked" in check.to_text()
    transcript = agent_shell.run_line_magic("agent", "transcript")
    assert "shown as stored" in transcript.to_text()


def test_help_lists_every_subcommand_and_mistakes_are_one_line(agent_shell: Any) -> None:
    from jupyter_toolagent.notebook.subcommands import SUBCOMMANDS

    text = str(agent_shell.run_line_magic("agent", "help"))
    for name in SUBCOMMANDS:
        assert f"\n  {name} " in text, name
    with pytest.raises(UsageError, match="schedule, "):
        agent_shell.run_line_magic("agent", "")
    for name in ("schedule", "transcript", "check", "help"):
        with pytest.raises(UsageError, match=f"%agent {name} takes no arguments"):
            agent_shell.run_line_magic("agent", f"{name} extra")
    with pytest.raises(UsageError, match="%agent raw takes only --full"):
        agent_shell.run_line_magic("agent", "raw extra")
