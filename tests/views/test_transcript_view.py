"""`TranscriptView` (``%agent transcript``): pairs, positions, violations in the API's words."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from view_support import SleepTool, config, has_html, run, use

from jupyter_toolagent.core.session import Session
from jupyter_toolagent.views import TranscriptView

ORPHAN_TEXT = (
    "messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_X. "
    "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
)
MISSING_TEXT = (
    "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_B. "
    "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use(tool_use_id: str, name: str = "Read", **input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_use_id, "name": name, "input": input or {"path": "data.csv"}}


def result(tool_use_id: str, content: Any = "a,b\n1,2", **extra: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": content, **extra}


VALID = [
    {"role": "user", "content": [text("What is in data.csv?")]},
    {"role": "assistant", "content": [text("Let me look."), tool_use("toolu_A"), tool_use("toolu_B", "Grep", q="x")]},
    {"role": "user", "content": [result("toolu_A"), result("toolu_B", "no match", is_error=True)]},
    {"role": "assistant", "content": [text("It has two columns.")]},
]


def test_a_valid_transcript_shows_each_pair_with_ids_and_positions() -> None:
    view = TranscriptView(VALID)
    assert view.violations == []
    out = view.to_text()
    assert "valid (check_pairing finds no violation)" in out
    assert "[1] tool_use toolu_A Read" in out
    assert "→ result messages.2.content.0 · is_error: false" in out
    assert "[2] tool_use toolu_B Grep" in out
    assert "→ result messages.2.content.1 · is_error: true" in out
    assert "[0] tool_result toolu_A ← tool_use messages.1.content.1 (Read)" in out
    html = view.to_html()
    pair = re.search(r'<div class="tav-pair tav-pair-ok" data-tool-use-id="toolu_A">(.*?)</div></div>', html, re.S)
    assert pair is not None
    assert "messages.1.content.1" in pair.group(1) and "messages.2.content.0" in pair.group(1)
    assert 'class="tav-pair tav-pair-error" data-tool-use-id="toolu_B"' in html


def test_an_orphan_result_is_marked_with_the_api_text_on_its_block() -> None:
    transcript = [VALID[0], {"role": "assistant", "content": [tool_use("toolu_A")]},
                  {"role": "user", "content": [result("toolu_A"), result("toolu_X")]}]
    view = TranscriptView(transcript)
    assert [v.message for v in view.violations] == [ORPHAN_TEXT]
    out = view.to_text()
    lines = out.splitlines()
    block_line = next(i for i, line in enumerate(lines) if "[1] tool_result toolu_X" in line)
    assert "orphan: no tool_use has this id" in lines[block_line]
    assert any(line.strip() == f"✗ {ORPHAN_TEXT}" for line in lines[block_line:])
    assert "1 violation(s); the API would answer HTTP 400" in out
    html = view.to_html()
    assert '<div class="tav-violation" data-kind="orphan_result">' in html
    assert ORPHAN_TEXT in html  # nothing in the text needs escaping: the API's words, verbatim
    assert 'data-message-index="2"' in html and "tav-has-violation" in html


def test_missing_results_are_named_on_the_assistant_message() -> None:
    transcript = [VALID[0], VALID[1], {"role": "user", "content": [result("toolu_A")]}]
    view = TranscriptView(transcript)
    out = view.to_text()
    lines = out.splitlines()
    header = lines.index("messages.1 · assistant")
    assert lines[header + 1] == f"  ✗ {MISSING_TEXT}"
    assert "→ NO RESULT: the API counts no tool_result for this id" in out
    assert 'tav-pair tav-pair-broken" data-tool-use-id="toolu_B"' in view.to_html()


def test_a_result_after_a_text_block_is_flagged_as_not_counted() -> None:
    transcript = [VALID[0], VALID[1],
                  {"role": "user", "content": [result("toolu_A"), text("by the way"), result("toolu_B")]}]
    view = TranscriptView(transcript)
    out = view.to_text()
    assert "not counted: it comes after a text block" in out
    assert "messages.2.content.2 is not counted" in out
    assert [v.kind for v in view.violations] == ["missing_result"]
    assert "not counted: it comes after a text block" in view.to_html()


def test_thinking_is_folded() -> None:
    secret = "step by step " * 50
    transcript = [VALID[0], {"role": "assistant", "content": [
        {"type": "thinking", "thinking": secret, "signature": "c2ln"}, text("answer")]}]
    view = TranscriptView(transcript)
    assert f"[0] thinking ({len(secret)} characters, folded)" in view.to_text()
    assert "step by step" not in view.to_text()
    assert re.search(r'<details class="tav-block"><summary>.*thinking.*folded\)</summary><pre>step by step', view.to_html())


def test_content_is_bounded() -> None:
    huge = "x" * 100_000
    transcript = [VALID[0], {"role": "assistant", "content": [tool_use("toolu_A")]},
                  {"role": "user", "content": [result("toolu_A", huge), text(huge)]}]
    view = TranscriptView(transcript, preview_chars=80, max_chars=500)
    out = view.to_text()
    assert len(out) < 3_000
    assert "characters cut]" in out
    assert len(view.to_html()) < 20_000


def test_markup_is_escaped_and_the_text_form_has_none() -> None:
    hostile = "<script>alert('x')</script><img src=x onerror=alert(1)>"
    transcript = [{"role": "user", "content": [text(hostile)]},
                  {"role": "assistant", "content": [tool_use(hostile, hostile, path=hostile)]},
                  {"role": "user", "content": [result(hostile, hostile)]}]
    view = TranscriptView(transcript)
    html = view.to_html()
    assert "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;" in html
    assert not has_html(TranscriptView(VALID).to_text())
    assert hostile in view.to_text()  # text shows the data as it is


def test_a_malformed_transcript_is_shown_as_stored_without_raising() -> None:
    class SdkBlock:
        def model_dump(self) -> dict[str, Any]:
            return text("x")

    transcript: list[Any] = [VALID[0], {"role": "assistant", "content": [SdkBlock()]}, "not a message"]
    view = TranscriptView(transcript)
    out = view.to_text()
    assert "cannot be fully checked" in out
    assert "check_pairing cannot read this transcript" in out
    assert "messages.1 cannot be read" in out and "(shown as stored)" in out
    assert "messages.2 cannot be read" in out
    assert view.to_html()


def test_for_session_numbers_messages_as_check_pairing_does() -> None:
    class Stored:
        messages = [
            {"role": "user", "content": [text("go")]},
            {"role": "user", "content": [text("(shown only to you)")], "ui_only": True},
            {"role": "assistant", "content": [tool_use("toolu_A")]},
            {"role": "user", "content": [text("late"), result("toolu_A"), result("toolu_X")]},
        ]

    view = TranscriptView.for_session(Stored())
    # as stored, the orphan would be messages.3; as sent, it is messages.2
    assert [v.message_index for v in view.violations] == [1, 2]
    assert "Shown as sent to the API (normalized" in view.to_text()
    assert "messages.2.content.2: unexpected `tool_use_id`" in view.to_text()


def test_for_session_shows_a_malformed_transcript_as_stored() -> None:
    class Stored:
        messages = [{"role": "user", "content": 42}]

    view = TranscriptView.for_session(Stored())
    assert "The stored transcript is malformed" in view.to_text()
    assert "messages.0 cannot be read" in view.to_text()


@pytest.mark.asyncio
async def test_a_real_session_shows_valid_pairs() -> None:
    session = Session()
    tools = [SleepTool("Read", safe=True, delay=0.01), SleepTool("Edit", safe=False, delay=0.01)]
    turns = [[text("Reading."), use("Read", "a", "toolu_R1"), use("Edit", "b", "toolu_E1")], "Done."]
    await run(session, "please", config(turns, tools))
    view = TranscriptView.for_session(session)
    assert view.violations == [] and session.check_pairing() == []
    out = view.to_text()
    assert "[1] tool_use toolu_R1 Read" in out and "→ result messages.2.content.0 · is_error: false · Read a done" in out
    assert "[2] tool_use toolu_E1 Edit" in out and "→ result messages.2.content.1 · is_error: false · Edit b done" in out
    bundle = view._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"} and bundle["text/plain"] == str(view) == out


JUNK = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=8,
)
BLOCK = st.one_of(
    JUNK,
    st.fixed_dictionaries({"type": st.sampled_from(["text", "tool_use", "tool_result", "thinking", "image"]),
                           "id": JUNK, "tool_use_id": JUNK, "text": JUNK, "content": JUNK, "input": JUNK,
                           "is_error": JUNK}),
)
MESSAGE = st.one_of(JUNK, st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "system"]),
                                                 "content": st.one_of(JUNK, st.lists(BLOCK, max_size=4))}))


@settings(max_examples=100, derandomize=True, deadline=None)
@given(st.lists(MESSAGE, max_size=5))
def test_any_list_renders_without_raising(messages: list[Any]) -> None:
    view = TranscriptView(messages)
    assert view.to_text() and view.to_html()
