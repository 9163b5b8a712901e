"""``notebooks/long_sessions.ipynb``: the context share in the footer and in ``%agent context``,
an automatic compaction on the fake server's 8,000-token window (summary sent, original kept,
pairing valid), the API's "prompt is too long" answered by a compaction and one retry, the
session saved under ``.toolagent/sessions/``; the lesson stops its server."""

from __future__ import annotations

import json

import pytest

from lesson_support import ExecutedLesson, execute_lesson, probe

pytestmark = pytest.mark.kernel

PROBES = [
    probe("[len(s.context.compactions), s.check_pairing() == [], server.too_long_answers, server.summary_requests, "
          "s.context.meter.learned_window, [c.reason for c in s.context.compactions]]",
          setup="s = current_session()"),
    probe("sorted(p.name for p in (lesson_dir / '.toolagent' / 'sessions').glob('*.jsonl'))",
          setup="from pathlib import Path\nlesson_dir = Path.cwd()"),
    probe("(Path.cwd() / '.toolagent' / 'sessions' / 'default.jsonl').read_text().count('sk-fake-key-for-the-lesson')",
          setup="from pathlib import Path"),
]


@pytest.fixture(scope="module")
def lesson(tmp_path_factory: pytest.TempPathFactory) -> ExecutedLesson:
    return execute_lesson("long_sessions", tmp_path_factory.mktemp("long_sessions"), probes=PROBES)


def test_runs_offline_without_errors_in_time(lesson: ExecutedLesson) -> None:
    assert lesson.errors() == []
    assert lesson.seconds < 30, lesson.seconds


def test_the_window_is_in_view(lesson: ExecutedLesson) -> None:
    assert "% of 8,000" in lesson.text("first-cell")
    context = lesson.text("context")
    assert "session 'default': context" in context and "largest tool results sent:" in context
    assert "describe_part" in context


def test_a_compaction_happens_and_keeps_pairing(lesson: ExecutedLesson) -> None:
    assert "Context compacted (auto)" in lesson.text("second-cell")
    sent = lesson.text("what-was-sent")
    assert "first message sent: [Summary of the earlier part" in sent
    assert "pairing of what was sent: []" in sent
    assert "compaction 1 (auto" in lesson.text("transcript")
    compactions, valid, too_long, summaries, learned, reasons = lesson.probes[0]
    assert compactions >= 2 and valid and summaries >= 1
    # both kinds happened; with the Agent and ToolSearch schemas in every request a later cell
    # may compact automatically again after the "prompt too long" one
    assert "prompt too long" in reasons and "auto" in reasons
    assert reasons.index("auto") < reasons.index("prompt too long")


def test_prompt_too_long_is_learned_compacted_and_retried(lesson: ExecutedLesson) -> None:
    text = lesson.text("too-long")
    assert "this session's context window is 8,000 from now on" in text
    assert "Context compacted (prompt too long)" in text
    assert "Described 18 parts so far." in text, "the retried request was answered"
    # the 400 was the injected one: the server's own window was never passed
    assert lesson.probes[0][2] == 0 and lesson.probes[0][4] == 8000


def test_the_session_is_saved_without_the_key(lesson: ExecutedLesson) -> None:
    assert "default (live)" in lesson.text("sessions")
    assert lesson.probes[1] == ["default.jsonl"]
    assert lesson.probes[2] == 0
