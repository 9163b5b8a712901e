"""Compaction keeps pairing valid (SPEC §14, §6): properties over generated transcripts.

A transcript is generated as the query loop writes it — prompts, assistant turns (sometimes
opening with a thinking block, with zero to three tool_use blocks), each followed by its
results message, runs that end after tool results (max turns) so two user messages meet — and
then compacted repeatedly as it grows, with random ``keep`` values, clearing and summaries.
After every compaction the view that would be sent must pass `check_pairing`, start with a
user message, and pass every assistant message unchanged (thinking intact) or not at all.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_toolagent.core.compaction import (
    SUMMARY_REQUEST_MARKER,
    Compaction,
    api_view,
    clear_candidates,
    cleared_result,
    cut_for_keep,
    cut_points,
    summary_request_messages,
)
from jupyter_toolagent.core.context_window import (
    ContextMeter,
    context_breakdown,
    format_window,
    parse_prompt_too_long,
)
from jupyter_toolagent.core.pairing import check_pairing, normalize_messages_for_api
from jupyter_toolagent.core.usage import Usage


class Writer:
    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.next_id = 0

    def prompt(self, text: str) -> None:
        self.messages.append({"role": "user", "content": [{"type": "text", "text": text}]})

    def turn(self, calls: int, thinking: bool, error: bool) -> None:
        blocks: list[dict[str, Any]] = []
        if thinking:
            blocks.append({"type": "thinking", "thinking": f"think {self.next_id}", "signature": f"sig{self.next_id}"})
        blocks.append({"type": "text", "text": f"step {self.next_id}"})
        ids = []
        for _ in range(calls):
            self.next_id += 1
            ids.append(f"toolu_{self.next_id:04d}")
            blocks.append({"type": "tool_use", "id": ids[-1], "name": "Look", "input": {"n": self.next_id}})
        self.messages.append({"role": "assistant", "content": blocks})
        if ids:
            self.messages.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": i, "content": [{"type": "text", "text": "r" * 50}],
                 **({"is_error": True} if error else {})} for i in ids]})


unit = st.tuples(
    st.lists(st.tuples(st.integers(1, 3), st.booleans(), st.booleans()), min_size=0, max_size=5),
    st.booleans(),  # the run ends on a final text turn
)


def sent(messages: list[dict[str, Any]], compaction: Compaction | None) -> list[dict[str, Any]]:
    return normalize_messages_for_api(api_view(messages, compaction))


def compact(messages: list[dict[str, Any]], current: Compaction | None, keep: int, summarise: bool) -> Compaction:
    base = current or Compaction()
    cleared = clear_candidates(messages, keep, start=base.boundary, already=base.cleared)
    cut = cut_for_keep(messages, keep, start=base.boundary) if summarise else None
    if cut is None:
        return Compaction(boundary=base.boundary, summary=base.summary, cleared=cleared, kept_turns=keep)
    return Compaction(boundary=cut, summary=f"summary up to {cut}", cleared=cleared, kept_turns=keep)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(unit, st.integers(1, 5), st.booleans()), min_size=1, max_size=8))
def test_pairing_is_valid_after_every_compaction(plan: list[Any]) -> None:
    writer = Writer()
    compaction: Compaction | None = None
    for (turns, final_text), keep, summarise in plan:
        writer.prompt(f"prompt {writer.next_id}")
        for calls, thinking, error in turns:
            writer.turn(calls, thinking, error)
        if final_text:
            writer.turn(0, False, False)
        before = compaction.boundary if compaction is not None else 0
        compaction = compact(writer.messages, compaction, keep, summarise)
        view = sent(writer.messages, compaction)
        assert check_pairing(view) == [], (view, compaction)
        assert view[0]["role"] == "user"
        originals = [m for m in writer.messages if m["role"] == "assistant"]
        for message in view:
            if message["role"] == "assistant":
                assert message in originals, "an assistant turn was changed (thinking must pass unchanged)"
        if compaction.boundary != before:
            tail_assistants = sum(1 for m in writer.messages[compaction.boundary:] if m["role"] == "assistant")
            assert tail_assistants == keep, "the last `keep` assistant turns are sent as they are"
        # the summary request itself is a valid request too
        if compaction.boundary:
            request = normalize_messages_for_api(summary_request_messages(sent(writer.messages[:compaction.boundary],
                                                                               compaction)))
            assert check_pairing(request) == []
            assert SUMMARY_REQUEST_MARKER in request[-1]["content"][-1]["text"]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 3), st.booleans(), st.booleans()), min_size=2, max_size=30), st.integers(1, 4))
def test_cut_points_never_separate_a_call_from_its_result(turns: list[Any], keep: int) -> None:
    writer = Writer()
    writer.prompt("start")
    for calls, thinking, error in turns:
        writer.turn(calls, thinking, error)
    for cut in cut_points(writer.messages):
        head, tail = writer.messages[:cut], writer.messages[cut:]
        assert check_pairing(normalize_messages_for_api([{"role": "user", "content": [{"type": "text", "text": "s"}]},
                                                          *tail])) == []
        assert check_pairing(normalize_messages_for_api(head)) == [] or head[-1]["role"] == "assistant"


def test_the_view_is_stable_between_compactions() -> None:
    """The prompt-cache prefix restarts once: after a compaction every request repeats the
    previous request's messages (same objects, so same bytes) and appends."""
    writer = Writer()
    writer.prompt("go")
    for _ in range(10):
        writer.turn(1, False, False)
    compaction = compact(writer.messages, None, 3, True)
    first = api_view(writer.messages, compaction)
    writer.turn(1, False, False)
    second = api_view(writer.messages, compaction)
    assert second[: len(first)] == first
    assert all(a is b for a, b in zip(first[1:], second[1:])), "cleared messages are memoised, not rebuilt"


def test_a_cleared_result_says_how_to_read_it_again() -> None:
    block = {"type": "tool_result", "tool_use_id": "toolu_9", "content": "x" * 1234, "is_error": True}
    out = cleared_result(block)
    assert out["tool_use_id"] == "toolu_9" and out["is_error"] is True
    text = out["content"][0]["text"]
    assert "ReadToolOutput" in text and 'tool_use_id="toolu_9"' in text and "1,234 characters" in text


def test_prompt_too_long_is_parsed_and_other_messages_are_not() -> None:
    found = parse_prompt_too_long("prompt is too long: 215,340 tokens > 200000 maximum")
    assert found is not None and (found.tokens, found.maximum) == (215_340, 200_000)
    for other in ("Overloaded", "messages.3: `tool_use` ids were found without `tool_result` blocks", "", None,
                  "prompt is too long"):
        assert parse_prompt_too_long(other) is None


def test_the_window_prefers_the_api_then_the_override_then_the_table() -> None:
    meter = ContextMeter()
    assert meter.window(None, None) == 200_000
    assert meter.window(None, 1_000_000) == 1_000_000
    assert meter.window(50_000, 1_000_000) == 50_000
    meter.learn(parse_prompt_too_long("prompt is too long: 9 tokens > 8000 maximum"))  # type: ignore[arg-type]
    assert meter.window(50_000, 1_000_000) == 8000
    meter.observe(1000, Usage(input_tokens=100, cache_read_input_tokens=1000, cache_creation_input_tokens=100))
    assert meter.last_tokens == 1200 and meter.predict(1000) == 1201
    assert [format_window(w) for w in (200_000, 1_000_000, 8000, 4096)] == ["200k", "1M", "8,000", "4,096"]


def test_the_breakdown_names_the_largest_results() -> None:
    body = {"system": [{"type": "text", "text": "s" * 400}], "tools": [{"name": "Look"}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]},
                         {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "Look", "input": {}},
                                                           {"type": "tool_use", "id": "b", "name": "Read", "input": {}}]},
                         {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "x" * 40},
                                                      {"type": "tool_result", "tool_use_id": "b", "content": "y" * 4000}]}]}
    b = context_breakdown(body)
    assert b.largest_results[0][:2] == ("b", "Read") and b.largest_results[1][:2] == ("a", "Look")
    assert b.system > 100 and b.tool_results > 1000 and b.total == b.system + b.tools + b.messages
