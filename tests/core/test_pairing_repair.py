"""`repair_pairing`: each repair action, what it leaves behind, and the report (SPEC §6)."""

from __future__ import annotations

import copy
from typing import Any

from jupyter_toolagent.core.pairing import MISSING_RESULT_TEXT, RepairReport, check_pairing, repair_pairing
from jupyter_toolagent.core.pairing.repair import EMPTIED_MESSAGE_TEXT


def user(*blocks: Any) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def assistant(*blocks: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def use(tool_use_id: str, name: str = "Read") -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_use_id, "name": name, "input": {"path": f"{tool_use_id}.txt"}}


def result(tool_use_id: str, content: Any = "ok", **extra: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": content, **extra}


def thinking(value: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": value, "signature": "c2lnbmF0dXJl"}


def missing(tool_use_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_use_id, "is_error": True, "content": MISSING_RESULT_TEXT}


def kinds(report: RepairReport) -> list[tuple[str, int, Any]]:
    return [(a.kind, a.message_index, a.tool_use_id) for a in report.actions]


def repaired(transcript: list[dict[str, Any]]) -> RepairReport:
    report = repair_pairing(transcript)
    assert check_pairing(report.messages) == [], report.summary()
    return report


def test_a_valid_transcript_is_returned_equal_and_unchanged() -> None:
    transcript = [user(text("go")), assistant(use("A")), user(result("A")), assistant(text("done"))]
    report = repair_pairing(transcript)
    assert report.messages == transcript
    assert report.changed is False
    assert report.actions == []
    assert report.summary() == "No repair needed: every tool_use already has exactly one tool_result."


def test_missing_result_gets_a_synthetic_error_result_ahead_of_other_blocks() -> None:
    report = repaired([user(text("go")), assistant(use("A"), use("B")), user(result("A"), text("what now?"))])
    assert report.messages[2]["content"] == [result("A"), missing("B"), text("what now?")]
    assert kinds(report) == [("added_missing_result", 2, "B")]
    assert "repair_pairing" in MISSING_RESULT_TEXT and "unknown" in MISSING_RESULT_TEXT


def test_orphan_result_is_removed() -> None:
    report = repaired([user(text("go")), assistant(use("A")), user(result("A"), result("X"), text("hi"))])
    assert report.messages[2]["content"] == [result("A"), text("hi")]
    assert kinds(report) == [("removed_orphan_result", 2, "X")]


def test_duplicate_result_is_removed_and_the_first_one_kept() -> None:
    report = repaired([user(text("go")), assistant(use("A")), user(result("A", "first"), result("A", "second"))])
    assert report.messages[2]["content"] == [result("A", "first")]
    assert kinds(report) == [("removed_duplicate_result", 2, "A")]


def test_duplicate_tool_use_id_is_renamed_with_the_result_that_answers_it() -> None:
    transcript = [
        user(text("go")),
        assistant(use("A")),
        user(result("A", "one")),
        assistant(use("A")),
        user(result("A", "two")),
    ]
    report = repaired(transcript)
    assert report.messages[1]["content"][0]["id"] == "A"
    assert report.messages[2]["content"] == [result("A", "one")]
    assert report.messages[3]["content"][0]["id"] == "A_dup1"
    assert report.messages[4]["content"] == [result("A_dup1", "two")]
    assert kinds(report) == [("renamed_duplicate_tool_use", 3, "A")]


def test_renamed_ids_never_collide_with_existing_ones() -> None:
    transcript = [
        user(text("go")),
        assistant(use("A"), use("A_dup1")),
        user(result("A"), result("A_dup1")),
        assistant(use("A"), use("A")),
        user(result("A", "x"), result("A", "y")),
    ]
    report = repaired(transcript)
    assert [b["id"] for b in report.messages[3]["content"]] == ["A_dup2", "A_dup3"]
    # matched by position: the k-th result for an id answers the k-th tool_use with that id
    assert report.messages[4]["content"] == [result("A_dup2", "x"), result("A_dup3", "y")]


def test_a_result_after_text_is_moved_to_the_front_and_the_text_follows() -> None:
    report = repaired([user(text("go")), assistant(use("A")), user(text("before"), result("A"), text("after"))])
    assert report.messages[2]["content"] == [result("A"), text("before"), text("after")]
    assert kinds(report) == [("moved_results_to_front", 2, "A")]


def test_a_result_in_a_later_user_message_moves_to_the_message_after_the_tool_use() -> None:
    transcript = [user(text("go")), assistant(use("A"), use("B")), user(result("A"), text("note")), user(result("B"))]
    report = repaired(transcript)
    assert report.messages[2]["content"] == [result("A"), result("B"), text("note")]
    assert report.messages[3]["content"] == [text(EMPTIED_MESSAGE_TEXT)]
    assert kinds(report) == [("moved_results_to_front", 2, "B"), ("replaced_emptied_message", 3, None)]
    assert len(report.messages) == len(transcript)  # indices stay stable


def test_a_message_whose_only_blocks_were_removed_gets_a_note() -> None:
    transcript = [user(text("go")), assistant(text("no tools")), user(result("X"))]
    report = repaired(transcript)
    assert report.messages[2]["content"] == [text(EMPTIED_MESSAGE_TEXT)]
    assert kinds(report) == [("removed_orphan_result", 2, "X"), ("replaced_emptied_message", 2, None)]


def test_thinking_is_moved_unchanged_to_the_front() -> None:
    first, second = thinking("one"), thinking("two")
    transcript = [user(text("go")), assistant(text("answer"), first, use("A"), second), user(result("A"))]
    report = repaired(transcript)
    blocks = report.messages[1]["content"]
    assert blocks == [first, second, text("answer"), use("A")]
    assert blocks[0] is not first  # a copy, equal key for key
    assert list(blocks[0].items()) == list(first.items())
    assert kinds(report) == [("moved_thinking_to_front", 1, None)]


def test_a_tool_use_in_the_last_message_gets_an_inserted_user_message() -> None:
    report = repaired([user(text("go")), assistant(text("calling"), use("A"), use("B"))])
    assert report.messages[2] == {"role": "user", "content": [missing("A"), missing("B")]}
    assert kinds(report) == [
        ("added_user_message", 2, None),
        ("added_missing_result", 2, "A"),
        ("added_missing_result", 2, "B"),
    ]
    assert all(a.original_index is None for a in report.actions)


def test_a_tool_use_followed_by_an_assistant_message_gets_an_inserted_user_message() -> None:
    transcript = [user(text("go")), assistant(use("A")), assistant(text("carry on")), user(text("ok"))]
    report = repaired(transcript)
    assert [m["role"] for m in report.messages] == ["user", "assistant", "user", "assistant", "user"]
    assert report.messages[2]["content"] == [missing("A")]
    # actions name indices of the repaired list, and the input index where one exists
    later = [a for a in report.actions if a.original_index is not None]
    assert later == []
    assert report.messages[3] == transcript[2]


def test_action_indices_point_into_the_repaired_list_and_the_input() -> None:
    transcript = [
        user(text("go")),
        assistant(use("A")),  # no user message follows: one is inserted at 2
        assistant(use("B")),
        user(result("X")),  # input index 3, repaired index 4
    ]
    report = repaired(transcript)
    orphan = next(a for a in report.actions if a.kind == "removed_orphan_result")
    assert (orphan.message_index, orphan.original_index) == (4, 3)
    assert report.messages[4]["content"][0] == missing("B")
    assert "messages.4 (input messages.3) [removed_orphan_result]" in report.summary()
    assert "messages.2 (inserted) [added_user_message]" in report.summary()


def test_summary_has_one_line_per_change() -> None:
    report = repaired([user(text("go")), assistant(use("A")), user(text("x"), result("X"))])
    lines = report.summary().splitlines()
    assert lines[0] == f"repair_pairing made {len(report.actions)} change(s):"
    assert len(lines) == 1 + len(report.actions)
    assert lines[1].startswith("- messages.2 [")
    assert any("[added_missing_result]" in line and "A" in line for line in lines)
    assert any("[removed_orphan_result]" in line and "X" in line for line in lines)


def test_text_is_never_lost_and_the_input_is_never_modified() -> None:
    transcript = [
        user(text("go")),
        assistant(text("a"), thinking("t"), use("A"), use("A")),
        user(text("b"), result("A"), result("Z"), text("c")),
        user(text("d")),
    ]
    before = copy.deepcopy(transcript)
    report = repaired(transcript)
    assert transcript == before
    texts = [b["text"] for m in report.messages for b in m["content"] if b.get("type") == "text"]
    assert [t for t in texts if t in {"go", "a", "b", "c", "d"}] == ["go", "a", "b", "c", "d"]


def test_repair_is_idempotent() -> None:
    transcript = [user(result("Q")), assistant(use("A"), text("x"), use("A")), user(text("y"), result("A"))]
    once = repaired(transcript)
    twice = repair_pairing(once.messages)
    assert twice.changed is False
    assert twice.messages == once.messages


def test_string_content_user_message_after_tool_use() -> None:
    report = repaired([user(text("go")), assistant(use("A")), {"role": "user", "content": "plain words"}])
    assert report.messages[2]["content"] == [missing("A"), text("plain words")]
