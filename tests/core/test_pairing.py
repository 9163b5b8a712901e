"""`check_pairing` reproduces the Messages API's pairing errors word for word (SPEC §6, Appendix A).

Every expected error text below is written out by hand from Appendix A (not built with the
module's own formatting helpers), so a change in wording is caught.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

import jupyter_toolagent
from jupyter_toolagent.core.pairing import PairingViolation, check_pairing


def user(*blocks: Any) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def assistant(*blocks: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def use(tool_use_id: str, name: str = "Read") -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_use_id, "name": name, "input": {"path": "a.txt"}}


def result(tool_use_id: str, content: Any = "ok", **extra: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": content, **extra}


def thinking(value: str = "let me think") -> dict[str, Any]:
    return {"type": "thinking", "thinking": value, "signature": "sig"}


def messages_of(violations: list[PairingViolation]) -> list[str]:
    return [v.message for v in violations]


def test_a_valid_transcript_has_no_violation() -> None:
    transcript = [
        user(text("read a.txt and b.txt")),
        assistant(text("Reading."), use("toolu_A"), use("toolu_B")),
        user(result("toolu_A"), result("toolu_B", is_error=True), text("and then?")),
        assistant(text("Both read.")),
    ]
    assert check_pairing(transcript) == []


def test_missing_results_text_names_the_message_and_every_id() -> None:
    transcript = [user(text("go")), assistant(use("toolu_A"), use("toolu_B")), user(text("nothing here"))]
    violations = check_pairing(transcript)
    assert messages_of(violations) == [
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
        "toolu_A, toolu_B. Each `tool_use` block must have a corresponding `tool_result` block "
        "in the next message."
    ]
    assert violations[0].message_index == 1
    assert violations[0].content_index is None
    assert violations[0].kind == "missing_result"
    assert violations[0].tool_use_ids == ("toolu_A", "toolu_B")


def test_only_the_unanswered_ids_are_named_missing() -> None:
    transcript = [user(text("go")), assistant(use("toolu_A"), use("toolu_B")), user(result("toolu_A"))]
    assert messages_of(check_pairing(transcript)) == [
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
        "toolu_B. Each `tool_use` block must have a corresponding `tool_result` block in the next message."
    ]


def test_orphan_result_text_names_the_block_index() -> None:
    transcript = [
        user(text("go")),
        assistant(use("toolu_A")),
        user(result("toolu_A"), result("toolu_X")),
    ]
    violations = check_pairing(transcript)
    assert messages_of(violations) == [
        "messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_X. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
    ]
    assert (violations[0].message_index, violations[0].content_index) == (2, 1)
    assert violations[0].kind == "orphan_result"


def test_several_orphans_in_one_message_are_one_violation_at_the_first() -> None:
    transcript = [user(text("go")), assistant(text("no tools")), user(text("x"), result("toolu_X"), result("toolu_Y"))]
    assert messages_of(check_pairing(transcript)) == [
        "messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_X, toolu_Y. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
    ]


def test_a_result_answering_an_older_assistant_message_is_an_orphan() -> None:
    transcript = [
        user(text("go")),
        assistant(use("toolu_A")),
        user(result("toolu_A")),
        assistant(text("done")),
        user(result("toolu_A")),
    ]
    assert messages_of(check_pairing(transcript)) == [
        "messages.4.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_A. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
    ]


def test_a_result_in_the_first_message_is_an_orphan() -> None:
    assert messages_of(check_pairing([user(result("toolu_Q"))])) == [
        "messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_Q. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
    ]


def test_thinking_dropped_from_the_front_names_the_first_block_type() -> None:
    transcript = [user(text("go")), assistant(text("answer"), thinking()), user(text("ok"))]
    violations = check_pairing(transcript)
    assert messages_of(violations) == [
        "messages.1.content.0: If an assistant message contains any thinking blocks, the first block "
        "must be thinking or redacted_thinking. Found text."
    ]
    assert violations[0].kind == "thinking_not_first"


def test_thinking_after_a_tool_use_reports_the_tool_use_type() -> None:
    transcript = [user(text("go")), assistant(use("toolu_A"), thinking()), user(result("toolu_A"))]
    assert messages_of(check_pairing(transcript)) == [
        "messages.1.content.0: If an assistant message contains any thinking blocks, the first block "
        "must be thinking or redacted_thinking. Found tool_use."
    ]


def test_thinking_or_redacted_thinking_first_is_valid() -> None:
    redacted = {"type": "redacted_thinking", "data": "opaque"}
    transcript = [
        user(text("go")),
        assistant(redacted, thinking(), text("hm"), use("toolu_A")),
        user(result("toolu_A")),
        assistant(thinking(), text("done")),
    ]
    assert check_pairing(transcript) == []


def test_text_before_the_results_leaves_every_id_missing() -> None:
    transcript = [user(text("go")), assistant(use("toolu_A")), user(text("first a word"), result("toolu_A"))]
    assert messages_of(check_pairing(transcript)) == [
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
        "toolu_A. Each `tool_use` block must have a corresponding `tool_result` block in the next message."
    ]


def test_a_result_after_a_text_block_does_not_count_even_if_others_lead() -> None:
    transcript = [
        user(text("go")),
        assistant(use("toolu_A"), use("toolu_B")),
        user(result("toolu_A"), text("between"), result("toolu_B")),
    ]
    assert messages_of(check_pairing(transcript)) == [
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
        "toolu_B. Each `tool_use` block must have a corresponding `tool_result` block in the next message."
    ]


def test_a_tool_use_in_the_last_message_is_missing_its_result() -> None:
    transcript = [user(text("go")), assistant(text("calling"), use("toolu_A"))]
    assert messages_of(check_pairing(transcript)) == [
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
        "toolu_A. Each `tool_use` block must have a corresponding `tool_result` block in the next message."
    ]


def test_a_tool_use_followed_by_another_assistant_message_is_missing_its_result() -> None:
    transcript = [user(text("go")), assistant(use("toolu_A")), assistant(text("more"))]
    assert [v.kind for v in check_pairing(transcript)] == ["missing_result"]


def test_string_content_reads_as_one_text_block() -> None:
    valid = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}]
    assert check_pairing(valid) == []
    broken = [{"role": "user", "content": "go"}, assistant(use("toolu_A")), {"role": "user", "content": "no result"}]
    assert messages_of(check_pairing(broken)) == [
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
        "toolu_A. Each `tool_use` block must have a corresponding `tool_result` block in the next message."
    ]


def test_duplicate_tool_use_id_text_points_at_the_second_block() -> None:
    transcript = [
        user(text("go")),
        assistant(use("toolu_A")),
        user(result("toolu_A")),
        assistant(text("again"), use("toolu_A")),
        user(result("toolu_A")),
    ]
    violations = check_pairing(transcript)
    assert messages_of(violations) == ["messages.3.content.1: `tool_use` ids must be unique"]
    assert violations[0].kind == "duplicate_tool_use_id"


def test_duplicate_tool_use_id_within_one_message() -> None:
    transcript = [user(text("go")), assistant(use("toolu_A"), text("and"), use("toolu_A")), user(result("toolu_A"))]
    assert messages_of(check_pairing(transcript)) == ["messages.1.content.2: `tool_use` ids must be unique"]


def test_duplicate_result_text_has_no_trailing_period_and_points_at_the_second() -> None:
    transcript = [
        user(text("go")),
        assistant(use("toolu_A"), use("toolu_B")),
        user(result("toolu_A"), result("toolu_B"), result("toolu_A")),
    ]
    violations = check_pairing(transcript)
    assert messages_of(violations) == [
        "messages.2.content.2: each tool_use must have a single result. "
        "Found multiple `tool_result` blocks with id: toolu_A"
    ]
    assert not violations[0].message.endswith(".")
    assert violations[0].kind == "duplicate_tool_result"


def test_a_third_result_for_the_same_id_is_reported_once() -> None:
    transcript = [
        user(text("go")),
        assistant(use("toolu_A")),
        user(result("toolu_A"), result("toolu_A"), result("toolu_A")),
    ]
    assert [(v.kind, v.content_index) for v in check_pairing(transcript)] == [("duplicate_tool_result", 1)]


def test_multiple_violations_come_in_message_order_first_is_the_api_answer() -> None:
    transcript = [
        user(result("toolu_Z")),  # orphan at messages.0
        assistant(text("answer"), thinking(), use("toolu_A")),  # thinking not first + missing
        user(text("no results")),
        assistant(use("toolu_B")),
        user(result("toolu_B"), result("toolu_B")),  # duplicate
    ]
    violations = check_pairing(transcript)
    assert [(v.message_index, v.content_index, v.kind) for v in violations] == [
        (0, 0, "orphan_result"),
        (1, 0, "thinking_not_first"),
        (1, None, "missing_result"),
        (4, 1, "duplicate_tool_result"),
    ]
    assert violations[0].message == (
        "messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_Z. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
    )


def test_within_a_user_message_violations_follow_block_order() -> None:
    transcript = [
        user(text("go")),
        assistant(use("toolu_A")),
        user(result("toolu_X"), result("toolu_A"), result("toolu_A")),
    ]
    assert [(v.kind, v.content_index) for v in check_pairing(transcript)] == [
        ("orphan_result", 0),
        ("duplicate_tool_result", 2),
    ]


def test_server_tool_blocks_are_not_paired_here() -> None:
    server_use = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"}}
    server_result = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}
    transcript = [user(text("go")), assistant(server_use, server_result, text("found")), user(text("thanks"))]
    assert check_pairing(transcript) == []


def test_the_input_is_not_modified() -> None:
    transcript = [user(text("go")), assistant(thinking(), text("x"), use("toolu_A")), user(text("y"), result("toolu_A"))]
    before = copy.deepcopy(transcript)
    check_pairing(transcript)
    assert transcript == before


def test_malformed_input_raises_type_error_with_a_hint_for_sdk_objects() -> None:
    class SdkBlock:
        def model_dump(self) -> dict[str, Any]:
            return {"type": "text", "text": "x"}

    with pytest.raises(TypeError, match=r"messages\[1\]\.content\[0\] is a SdkBlock.*model_dump"):
        check_pairing([user(text("go")), {"role": "assistant", "content": [SdkBlock()]}])
    with pytest.raises(TypeError, match=r"messages\[0\] is a str"):
        check_pairing(["hello"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"messages\[0\]\.content is a NoneType"):
        check_pairing([{"role": "user", "content": None}])


def test_the_public_names_are_the_pairing_functions() -> None:
    from jupyter_toolagent.core import pairing

    assert jupyter_toolagent.check_pairing is pairing.check_pairing
    assert jupyter_toolagent.repair_pairing is pairing.repair_pairing
    assert jupyter_toolagent.normalize_messages_for_api is pairing.normalize_messages_for_api
