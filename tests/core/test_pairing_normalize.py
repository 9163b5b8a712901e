"""`normalize_messages_for_api`: the session's transcript → what the API is sent (SPEC §6).

One test per rule: UI-only items dropped (also inside tool_result content), private keys
removed only at block top level, consecutive messages merged (results first only when user
messages are merged), aliases mapped, non-text content stripped from error results, and
thinking blocks exempt from every rule.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from jupyter_toolagent.core.pairing import check_pairing, normalize_messages_for_api
from jupyter_toolagent.core.pairing.normalize import ERROR_RESULT_STRIPPED_NOTE

IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}


def text(value: str, **extra: Any) -> dict[str, Any]:
    return {"type": "text", "text": value, **extra}


def use(tool_use_id: str, name: str = "Read", **input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_use_id, "name": name, "input": input}


def result(tool_use_id: str, content: Any = "ok", **extra: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": content, **extra}


def test_ui_only_messages_and_blocks_are_dropped() -> None:
    transcript = [
        {"role": "user", "content": [text("go")]},
        {"role": "assistant", "content": [text("working"), {"type": "progress", "message": "50%"}, use("t1")]},
        {"role": "user", "content": [result("t1"), {"type": "system_note", "text": "approved by you"}]},
        {"role": "user", "content": [text("shown to the person only")], "ui_only": True},
        {"role": "assistant", "content": [text("done"), text("(cost: $0.01)", ui_only=True)]},
    ]
    assert normalize_messages_for_api(transcript) == [
        {"role": "user", "content": [text("go")]},
        {"role": "assistant", "content": [text("working"), use("t1")]},
        {"role": "user", "content": [result("t1")]},
        {"role": "assistant", "content": [text("done")]},
    ]


def test_ui_only_items_inside_tool_result_content_are_dropped() -> None:
    content = [text("line 1"), {"type": "progress", "message": "half"}, text("note", ui_only=True), text("line 2")]
    transcript = [
        {"role": "user", "content": [text("go")]},
        {"role": "assistant", "content": [use("t1")]},
        {"role": "user", "content": [result("t1", content)]},
    ]
    sent = normalize_messages_for_api(transcript)
    assert sent[2]["content"][0]["content"] == [text("line 1"), text("line 2")]


def test_a_message_left_empty_is_dropped_and_its_neighbours_merge() -> None:
    transcript = [
        {"role": "user", "content": [text("first")]},
        {"role": "assistant", "content": [{"type": "progress", "message": "thinking…"}]},
        {"role": "user", "content": [text("second")]},
        {"role": "assistant", "content": ""},
    ]
    assert normalize_messages_for_api(transcript) == [{"role": "user", "content": [text("first"), text("second")]}]


def test_private_keys_are_removed_from_messages_blocks_and_result_content_only_at_top_level() -> None:
    transcript = [
        {"role": "user", "content": [text("go", _shown_at=1.5)], "_cell": 3},
        {"role": "assistant", "content": [use("t1", path="a", _keep_me={"_nested": 1}) | {"_started_at": 2.0}]},
        {"role": "user", "content": [result("t1", [text("out", _card="x")], _duration=0.2)]},
    ]
    sent = normalize_messages_for_api(transcript)
    assert sent[0] == {"role": "user", "content": [text("go")]}
    # nested values are data: a leading underscore there is legitimate and kept
    assert sent[1]["content"][0] == use("t1", path="a", _keep_me={"_nested": 1})
    assert sent[2]["content"][0] == result("t1", [text("out")])


def test_results_go_first_when_user_messages_are_merged() -> None:
    transcript = [
        {"role": "user", "content": [text("go")]},
        {"role": "assistant", "content": [use("t1"), use("t2")]},
        {"role": "user", "content": [result("t1")]},
        {"role": "user", "content": [text("[interrupted]"), result("t2")]},
    ]
    sent = normalize_messages_for_api(transcript)
    assert sent[2] == {"role": "user", "content": [result("t1"), result("t2"), text("[interrupted]")]}
    assert check_pairing(sent) == []


def test_a_single_message_is_not_reordered() -> None:
    transcript = [
        {"role": "user", "content": [text("go")]},
        {"role": "assistant", "content": [use("t1")]},
        {"role": "user", "content": [text("a word first"), result("t1")]},
    ]
    sent = normalize_messages_for_api(transcript)
    assert sent[2]["content"] == [text("a word first"), result("t1")]
    assert [v.kind for v in check_pairing(sent)] == ["missing_result"]


def test_string_content_is_kept_and_merges_as_a_text_block() -> None:
    transcript = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}]
    assert normalize_messages_for_api(transcript) == transcript
    merged = normalize_messages_for_api([{"role": "user", "content": "a"}, {"role": "user", "content": [text("b")]}])
    assert merged == [{"role": "user", "content": [text("a"), text("b")]}]


def test_consecutive_assistant_messages_merge_in_order() -> None:
    transcript = [
        {"role": "user", "content": [text("go")]},
        {"role": "assistant", "content": [text("one")]},
        {"role": "assistant", "content": [use("t1")]},
        {"role": "user", "content": [result("t1")]},
    ]
    sent = normalize_messages_for_api(transcript)
    assert sent[1] == {"role": "assistant", "content": [text("one"), use("t1")]}
    assert len(sent) == 3


def test_aliases_map_tool_use_names_to_canonical_names() -> None:
    transcript = [
        {"role": "user", "content": [text("go")]},
        {"role": "assistant", "content": [use("t1", "cat"), use("t2", "Read")]},
        {"role": "user", "content": [result("t1"), result("t2")]},
    ]
    sent = normalize_messages_for_api(transcript, aliases={"cat": "Read", "ls": "Glob"})
    assert [b["name"] for b in sent[1]["content"]] == ["Read", "Read"]
    assert transcript[1]["content"][0]["name"] == "cat"


def test_error_results_keep_only_text() -> None:
    transcript = [
        {"role": "user", "content": [text("go")]},
        {"role": "assistant", "content": [use("t1"), use("t2"), use("t3")]},
        {"role": "user", "content": [
            result("t1", [IMAGE, text("plot failed")], is_error=True),
            result("t2", [IMAGE], is_error=True),
            result("t3", [IMAGE, text("plot")]),
        ]},
    ]
    t1, t2, t3 = normalize_messages_for_api(transcript)[2]["content"]
    assert t1["content"] == [text("plot failed")]
    assert t2["content"] == [text(ERROR_RESULT_STRIPPED_NOTE)]
    assert t3["content"] == [IMAGE, text("plot")]  # a successful result keeps its image


def test_thinking_is_exempt_from_every_rule() -> None:
    odd_thinking = {"type": "thinking", "thinking": "step 1", "signature": "c2ln", "_private": 1, "ui_only": True}
    redacted = {"signature_like": "x", "type": "redacted_thinking", "data": "b3BhcXVl"}
    transcript = [
        {"role": "user", "content": [text("go")]},
        {"role": "assistant", "content": [odd_thinking, redacted, text("answer")]},
    ]
    sent = normalize_messages_for_api(transcript)
    first, second = sent[1]["content"][:2]
    assert first == odd_thinking and second == redacted
    # byte for byte: same keys in the same order
    assert json.dumps(first).encode() == json.dumps(odd_thinking).encode()
    assert json.dumps(second).encode() == json.dumps(redacted).encode()


def test_the_input_is_never_modified_and_only_what_changes_is_copied() -> None:
    transcript = [
        {"role": "user", "content": [text("go", _x=1)]},
        {"role": "assistant", "content": [use("t1", "cat", path="p")]},
        {"role": "user", "content": [text("note")]},
        {"role": "user", "content": [result("t1", [IMAGE], is_error=True)]},
        {"role": "assistant", "content": [text("done")]},
    ]
    before = copy.deepcopy(transcript)
    sent = normalize_messages_for_api(transcript, aliases={"cat": "Read"})
    assert transcript == before
    # changed: new dicts (the originals keep their private key and alias) ...
    assert sent[0] is not transcript[0] and sent[0]["content"][0] is not transcript[0]["content"][0]
    assert sent[1]["content"][0] is not transcript[1]["content"][0]
    assert sent[1]["content"][0]["name"] == "Read" and transcript[1]["content"][0]["name"] == "cat"
    # ... whose untouched values are shared; an unchanged message is the transcript's own
    assert sent[1]["content"][0]["input"] is transcript[1]["content"][0]["input"]
    assert sent[3] is transcript[4]
    sent[0]["content"].append(text("extra"))
    sent[2]["content"][0]["content"] = "replaced"
    assert transcript == before


def test_normalizing_twice_changes_nothing_more() -> None:
    transcript = [
        {"role": "user", "content": "go", "_t": 0},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "s"}, use("t1")]},
        {"role": "user", "content": [text("x")]},
        {"role": "user", "content": [result("t1", [IMAGE, {"type": "progress"}], is_error=True)]},
    ]
    once = normalize_messages_for_api(transcript)
    assert normalize_messages_for_api(once) == once
