"""``notebooks/debugging_pairing.ipynb``: hand-broken transcripts give the API's exact 400 texts
(from `check_pairing` and from the fake server through the SDK), every repair yields a valid
transcript, and a conversation started from a broken transcript is repaired before it is sent."""

from __future__ import annotations

import pytest

from jupyter_toolagent.core.pairing import MISSING_RESULT_TEXT
from lesson_support import ExecutedLesson, execute_lesson, probe

pytestmark = pytest.mark.kernel

PROBES = [
    probe("[check_pairing(current_session().messages), current_session().runs[-1].requests[0]['messages'][2]]"),
]
# SPEC Appendix A, written out for these transcripts
ORPHAN = ("messages.2.content.2: unexpected `tool_use_id` found in `tool_result` blocks: toolu_plum. Each "
          "`tool_result` block must have a corresponding `tool_use` block in the previous message.")
MISSING_PEAR = ("messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_pear. "
                "Each `tool_use` block must have a corresponding `tool_result` block in the next message.")
MISSING_BOTH = ("messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_apple, "
                "toolu_pear. Each `tool_use` block must have a corresponding `tool_result` block in the next message.")
DUPLICATE_USE = "messages.1.content.2: `tool_use` ids must be unique"
DUPLICATE_RESULT = ("messages.2.content.1: each tool_use must have a single result. Found multiple `tool_result` "
                    "blocks with id: toolu_apple")


@pytest.fixture(scope="module")
def lesson(tmp_path_factory: pytest.TempPathFactory) -> ExecutedLesson:
    return execute_lesson("debugging_pairing", tmp_path_factory.mktemp("debugging_pairing"), probes=PROBES)


def test_runs_offline_without_errors_in_time(lesson: ExecutedLesson) -> None:
    assert lesson.errors() == []
    assert lesson.seconds < 30, lesson.seconds


def test_each_broken_transcript_gets_the_apis_text(lesson: ExecutedLesson) -> None:
    assert lesson.text("valid").startswith("[]")
    assert lesson.text("violations").strip().splitlines() == [
        "--- missing result", f"[missing_result] {MISSING_PEAR}",
        "--- orphan result", f"[orphan_result] {ORPHAN}",
        "--- text before results", f"[missing_result] {MISSING_BOTH}",
        "--- duplicate id", f"[duplicate_tool_use_id] {DUPLICATE_USE}", f"[duplicate_tool_result] {DUPLICATE_RESULT}",
    ]
    assert f"1. [orphan_result at messages.2.content.2] {ORPHAN}" in lesson.text("orphan-check")
    missing = lesson.text("missing-transcript")
    assert f"✗ {MISSING_PEAR}" in missing and "→ NO RESULT: the API counts no tool_result for this id" in missing


def test_the_fake_server_answers_the_orphan_with_the_same_400(lesson: ExecutedLesson) -> None:
    assert lesson.text("api-400").strip().splitlines() == ["HTTP 400 invalid_request_error", ORPHAN]


def test_every_repair_is_reported_and_valid(lesson: ExecutedLesson) -> None:
    text = lesson.text("repair-all")
    for name, changes in (("missing result", 1), ("orphan result", 1), ("text before results", 2), ("duplicate id", 1)):
        assert f"--- {name}: {changes} change(s), valid after: True" in text
    for kind in ("added_missing_result", "removed_orphan_result", "moved_results_to_front", "renamed_duplicate_tool_use"):
        assert f"[{kind}]" in text
    repair = lesson.text("repair-missing")
    assert "messages.2 [added_missing_result]: tool_use toolu_pear" in repair
    assert repair.endswith("After repair: check_pairing finds no violation; the transcript can be sent.")


def test_a_session_started_from_a_broken_transcript_is_repaired_before_sending(lesson: ExecutedLesson) -> None:
    before = lesson.text("check-before")
    assert before.startswith("Pairing check of session 'default' (4 messages): 1 violation(s).")
    assert MISSING_PEAR in before
    run = lesson.text("repaired-run")
    assert "The transcript was invalid and was repaired before sending:" in run
    assert "messages.2 [added_missing_result]: tool_use toolu_pear (messages.1) had no tool_result" in run
    assert "The request I received has 0 pairing violation(s)." in run  # the scripted model checked what it got
    assert lesson.text("check-after").startswith("Pairing check of session 'default' (6 messages): valid")
    assert (f"tool_result toolu_pear ← tool_use messages.1.content.2 (lookup_price) · is_error: true\n"
            f"      {MISSING_RESULT_TEXT}") in lesson.text("transcript-after")
    violations, sent_results = lesson.probes[0]
    assert violations == []
    assert sent_results["role"] == "user"
    assert [(b["tool_use_id"], bool(b.get("is_error"))) for b in sent_results["content"][:2]] == [
        ("toolu_apple", False), ("toolu_pear", True)]
