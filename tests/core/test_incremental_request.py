"""Incremental request building: reusing the checked prefix never changes what is sent.

For random transcripts and random sequences of edits — the runtime's own (a turn appended, a
repair written back, a refused exchange withheld, a reset, a resumed session, a compaction)
and a user's (any list operation on ``session.messages``, a message edited in place) — the
body built from `IncrementalNormalizer`'s messages is byte for byte the body built from a
from-scratch `normalize_messages_for_api`, and its violations are `check_pairing`'s.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jupyter_toolagent.core.compaction import Compaction, api_view, cut_points
from jupyter_toolagent.core.pairing import (
    IncrementalNormalizer,
    check_pairing,
    normalize_messages_for_api,
    repair_pairing,
)
from jupyter_toolagent.core.refusal import withhold_refused_exchange
from jupyter_toolagent.core.request_body import build_request_body

SETTINGS = settings(max_examples=200, derandomize=True, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

Message = dict[str, Any]
TOOLS = [{"name": "Read", "description": "r", "input_schema": {"type": "object"}}]
ALIAS_MAPS: list[dict[str, str]] = [{}, {"read": "Read"}, {"read": "Read", "grep": "Grep"}]

# --- strategies -------------------------------------------------------------------------------
IDS = st.sampled_from(["toolu_a", "toolu_b", "toolu_c", "toolu_d"])
WORDS = st.text(alphabet="abxy ", min_size=0, max_size=5)

text_block = st.builds(lambda t, p: {"type": "text", "text": t, **({"_shown_at": 1.0} if p else {})},
                       WORDS, st.booleans())
ui_block = st.sampled_from([{"type": "progress", "text": "50%"}, {"type": "system_note", "text": "note"},
                            {"type": "text", "text": "for the person", "ui_only": True}])
tool_use_block = st.builds(lambda i, n: {"type": "tool_use", "id": i, "name": n, "input": {"q": 1}},
                           IDS, st.sampled_from(["Read", "read", "grep"]))
image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}}
tool_result_block = st.builds(
    lambda i, c, e: {"type": "tool_result", "tool_use_id": i, "content": c, **({"is_error": True} if e else {})},
    IDS, st.one_of(WORDS, st.lists(st.one_of(text_block, ui_block, st.just(image)), max_size=3)), st.booleans())
thinking_block = st.builds(lambda t: {"signature": "c2ln", "thinking": t, "type": "thinking"}, WORDS)


def message_of(role: str, blocks: st.SearchStrategy[Any]) -> st.SearchStrategy[Message]:
    return st.builds(
        lambda c, ui, private: {"role": role, "content": c, **({"ui_only": True} if ui else {}),
                                **({"_started_at": 2.0} if private else {})},
        st.one_of(WORDS, st.lists(blocks, max_size=4)), st.sampled_from([False, False, False, True]), st.booleans())


any_message = st.one_of(
    message_of("user", st.one_of(text_block, tool_result_block, ui_block)),
    message_of("assistant", st.one_of(text_block, tool_use_block, thinking_block, ui_block)),
)


@st.composite
def turn(draw: st.DrawFn) -> list[Message]:
    """One request's worth, as the loop appends it: an assistant message and its results."""
    ids = draw(st.lists(IDS, min_size=0, max_size=3, unique=True))
    blocks: list[dict[str, Any]] = [{"type": "text", "text": draw(WORDS)}]
    blocks += [{"type": "tool_use", "id": i, "name": draw(st.sampled_from(["Read", "read"])), "input": {}}
               for i in ids]
    added: list[Message] = [{"role": "assistant", "content": blocks}]
    if ids:
        added.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": i, "content": "ok"}
                                                  for i in draw(st.permutations(ids))]})
    else:
        added.append({"role": "user", "content": draw(WORDS) or "next"})
    return added


Edit = Callable[[list[Message]], None]


@st.composite
def edit(draw: st.DrawFn) -> tuple[str, Edit]:
    """One edit of the transcript list, named for the failure message."""
    kind = draw(st.sampled_from([
        "turn", "turn", "turn", "append", "extend", "pop", "del", "insert", "setitem", "slice", "clear",
        "resume", "repair", "refusal", "content_replaced", "block_appended", "block_removed",
        "marked_ui_only", "key_removed",
    ]))
    index = draw(st.integers(0, 30))
    message = draw(any_message)
    added = draw(turn())

    def at(messages: list[Message]) -> int:
        return index % len(messages)

    def apply(messages: list[Message]) -> None:
        if kind == "turn":
            messages.extend(copy.deepcopy(added))
        elif kind == "append":
            messages.append(copy.deepcopy(message))
        elif kind == "extend":
            messages.extend([copy.deepcopy(message), copy.deepcopy(added[0])])
        elif kind == "clear":
            messages.clear()  # %agent reset
        elif kind == "resume":  # a saved session loaded again: equal messages, new objects
            messages[:] = copy.deepcopy(messages)
        elif kind == "repair":  # what the loop writes back after an invalid check
            try:
                messages[:] = repair_pairing(normalize_messages_for_api(messages)).messages
            except TypeError:  # a message made malformed by an earlier edit: the loop would stop there
                messages.clear()
        elif not messages:
            messages.append(copy.deepcopy(message))
        elif kind == "pop":
            messages.pop()
        elif kind == "del":
            del messages[at(messages)]
        elif kind == "insert":
            messages.insert(at(messages), copy.deepcopy(message))
        elif kind == "setitem":
            messages[at(messages)] = copy.deepcopy(message)
        elif kind == "slice":
            messages[at(messages):] = copy.deepcopy(added)
        elif kind == "refusal":
            withhold_refused_exchange(messages, at(messages))
        else:  # a message edited in place
            target = messages[at(messages)]
            content = target.get("content")
            if kind == "content_replaced":
                target["content"] = copy.deepcopy(message["content"])
            elif kind == "block_appended" and isinstance(content, list):
                content.append({"type": "text", "text": "added in place"})
            elif kind == "block_removed" and isinstance(content, list) and content:
                content.pop(0)
            elif kind == "marked_ui_only":
                target["ui_only"] = True
            elif kind == "key_removed":
                target.pop("_started_at", None) if "_started_at" in target else target.pop("content", None)

    return kind, apply


def body_bytes(messages: list[Message]) -> bytes:
    body = build_request_body(model="m", system="s", tools=TOOLS, messages=messages, max_tokens=10)
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


def from_scratch(messages: list[Message], aliases: dict[str, str]) -> tuple[Any, Any]:
    try:
        normalized = normalize_messages_for_api(messages, aliases=aliases)
    except TypeError as exc:
        return "TypeError", str(exc)
    return body_bytes(normalized), check_pairing(normalized)


def incremental(normalizer: IncrementalNormalizer, messages: list[Message], aliases: dict[str, str]) -> tuple[Any, Any]:
    try:
        normalized, violations = normalizer.normalize_and_check(messages, aliases=aliases)
    except TypeError as exc:
        return "TypeError", str(exc)
    return body_bytes(normalized), violations


# --- properties -------------------------------------------------------------------------------
@SETTINGS
@given(start=st.lists(any_message, max_size=6), edits=st.lists(st.tuples(edit(), st.integers(0, 2)), max_size=14))
def test_incremental_body_equals_the_from_scratch_body_after_any_edits(
    start: list[Message], edits: list[tuple[tuple[str, Edit], int]]
) -> None:
    messages = copy.deepcopy(start)
    normalizer = IncrementalNormalizer()
    done: list[str] = []
    for (name, apply), alias_choice in edits:
        apply(messages)
        done.append(name)
        aliases = ALIAS_MAPS[alias_choice]
        assert incremental(normalizer, messages, aliases) == from_scratch(messages, aliases), done
        # a second request on the unchanged transcript reuses everything and still agrees
        assert incremental(normalizer, messages, aliases) == from_scratch(messages, aliases), done


@SETTINGS
@given(turns=st.lists(turn(), min_size=1, max_size=10), aliases=st.sampled_from(ALIAS_MAPS))
def test_a_growing_valid_transcript_is_valid_at_every_request(turns: list[list[Message]], aliases: dict[str, str]) -> None:
    """The loop's own case: each request appends a turn; nothing is ever reported invalid and
    the body matches the from-scratch one (a tool_use at the end of the checked prefix is
    answered by what is appended)."""
    messages: list[Message] = [{"role": "user", "content": "go"}]
    normalizer = IncrementalNormalizer()
    for number, added in enumerate(turns):
        added = json.loads(json.dumps(added).replace('"toolu_', f'"toolu_{number}_'))  # ids unique per turn
        messages.append(added[0])
        body, violations = incremental(normalizer, messages, aliases)
        assert (body, violations) == from_scratch(messages, aliases)
        assert [v.kind for v in violations] == (["missing_result"] if len(added) > 1 and
                                                 any(b["type"] == "tool_use" for b in added[0]["content"]) else [])
        messages.extend(added[1:])
        assert incremental(normalizer, messages, aliases) == from_scratch(messages, aliases)


@SETTINGS
@given(turns=st.lists(turn(), min_size=3, max_size=10), summary=st.booleans(), more=st.lists(turn(), max_size=4),
       edits=st.lists(edit(), max_size=4))
def test_a_compacted_view_is_normalised_incrementally_and_exactly(
    turns: list[list[Message]], summary: bool, more: list[list[Message]], edits: list[tuple[str, Edit]]
) -> None:
    messages: list[Message] = [{"role": "user", "content": "go"}]
    for added in turns:
        messages.extend(added)
    cuts = cut_points(messages)
    boundary = cuts[len(cuts) // 2] if summary and cuts else 0
    cleared = frozenset(b["tool_use_id"] for m in messages[:len(messages) // 2] if isinstance(m["content"], list)
                        for b in m["content"] if b.get("type") == "tool_result")
    compaction = Compaction(boundary=boundary, summary="what happened" if boundary else None, cleared=cleared)
    normalizer = IncrementalNormalizer()
    for step in [*more, *[None] * len(edits)]:
        if step is not None:
            messages.extend(step)
        else:
            edits.pop()[1](messages)
        view = api_view(messages, compaction)
        assert incremental(normalizer, view, {}) == from_scratch(view, {})
        again = api_view(messages, compaction)
        assert all(a is b for a, b in zip(view, again))  # the same objects request after request
        assert incremental(normalizer, again, {}) == from_scratch(again, {})


# --- the prefix really is reused ----------------------------------------------------------------
def test_appending_a_turn_normalises_only_the_new_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    from jupyter_toolagent.core.pairing import incremental as incremental_module
    from jupyter_toolagent.core.pairing import normalize as normalize_module

    seen: list[int] = []
    real = normalize_module._normalize_message

    def counting(message: Any, index: int, aliases: Any) -> Any:
        seen.append(index)
        return real(message, index, aliases)

    monkeypatch.setattr(normalize_module, "_normalize_message", counting)
    messages: list[Message] = [{"role": "user", "content": "go"}]
    for n in range(30):
        messages.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"t{n}", "name": "R", "input": {}}]})
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{n}", "content": "x"}]})
    normalizer = incremental_module.IncrementalNormalizer()
    assert normalizer.normalize_and_check(messages)[1] == []
    assert len(seen) == len(messages)
    seen.clear()
    messages.append({"role": "assistant", "content": [{"type": "text", "text": "done"}]})
    messages.append({"role": "user", "content": "thanks"})
    normalized, violations = normalizer.normalize_and_check(messages)
    assert violations == [] and len(normalized) == len(messages)
    assert seen == [len(messages) - 3, len(messages) - 2, len(messages) - 1]  # the last kept one is redone
    seen.clear()
    messages[5] = dict(messages[5])  # an equal message, but a new object: no longer the prefix it checked
    normalizer.normalize_and_check(messages)
    assert seen == list(range(len(messages)))


def test_an_invalid_transcript_is_never_kept_as_checked() -> None:
    normalizer = IncrementalNormalizer()
    messages: list[Message] = [{"role": "user", "content": "go"},
                               {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "R", "input": {}}]},
                               {"role": "user", "content": "no result"}]
    first = normalizer.normalize_and_check(messages)[1]
    assert [v.kind for v in first] == ["missing_result"]
    messages.append({"role": "assistant", "content": "ok"})
    assert normalizer.normalize_and_check(messages)[1] == check_pairing(normalize_messages_for_api(messages))
    assert [v.kind for v in normalizer.normalize_and_check(messages)[1]] == ["missing_result"]


@pytest.mark.parametrize("edit_in_place", ["block appended", "block removed", "content replaced", "key added"])
def test_a_message_edited_in_place_is_noticed_even_when_its_sent_form_is_a_copy(edit_in_place: str) -> None:
    """Messages 2 and 3 are merged into one new message in the request: editing message 3 in
    place leaves every object the normaliser kept untouched, so only the message's own shape
    (content object, its length, the number of keys) can tell."""
    messages: list[Message] = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "R", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]},
        {"role": "user", "content": [{"type": "text", "text": "and also"}, {"type": "text", "text": "this"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
    ]
    normalizer = IncrementalNormalizer()
    normalizer.normalize_and_check(messages)
    target = messages[3]
    if edit_in_place == "block appended":
        target["content"].append({"type": "text", "text": "an afterthought"})
    elif edit_in_place == "block removed":
        target["content"].pop()
    elif edit_in_place == "content replaced":
        target["content"] = "instead"
    else:
        target["ui_only"] = True
    assert incremental(normalizer, messages, {}) == from_scratch(messages, {})
