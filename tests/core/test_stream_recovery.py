"""SPEC §4.2, §6, §7.1 on streams the API really sends: a tool_use that never got its
``content_block_stop``, blocks and deltas the product does not know, omitted usage fields,
a refusal with stop details, a server tool use cut off from its result."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_toolagent.core.accumulator import MessageAccumulator, json_problem
from jupyter_toolagent.core.pairing import check_pairing, normalize_messages_for_api, repair_pairing
from jupyter_toolagent.core.session import Session
from jupyter_toolagent.models import text_block, tool_use_block

from runtime_support import (
    STREAMING,
    Probe,
    RawModel,
    assert_valid_transcript,
    finished,
    message_events,
    result_text,
    run,
    run_config,
    tool_results,
)

def without_stop_of(events: list[dict[str, Any]], index: int) -> list[dict[str, Any]]:
    return [e for e in events if not (e["type"] == "content_block_stop" and e.get("index") == index)]


@STREAMING
@pytest.mark.asyncio
async def test_a_tool_use_without_its_block_stop_in_a_normal_stream_gets_an_error_result(streaming: bool) -> None:
    write = Probe("Write", safe=False)
    events = message_events([text_block("Writing both."), tool_use_block("Write", {"tag": "one"}, id="toolu_one"),
                             tool_use_block("Write", {"tag": "two"}, id="toolu_two")])
    model = RawModel([without_stop_of(events, 2), message_events([text_block("ok")], "end_turn")])
    session = Session()
    result = await run(session, "write", run_config(model, write, streaming=streaming))
    assert finished(result).reason == "end_turn"
    assert write.calls == ["one"]  # the complete call ran; the cut one never did
    assistant = session.messages[1]
    assert [b.get("id") for b in assistant["content"]] == [None, "toolu_one", "toolu_two"]
    assert assistant["content"][2]["input"] == {}
    cut = tool_results(session.messages)["toolu_two"]
    assert cut["is_error"] is True and "truncated" in result_text(cut) and "content_block_stop" in result_text(cut)
    assert len(model.requests) == 2  # the model is told and answers
    assert_valid_transcript(session.messages)


def fold(events: list[dict[str, Any]]) -> MessageAccumulator:
    acc = MessageAccumulator()
    for event in events:
        acc.feed(event)
    return acc


START = {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
                                              "content": [], "stop_reason": None, "stop_sequence": None}}
END = [{"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": {}},
       {"type": "message_stop"}]

texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)


@settings(max_examples=60, deadline=None)
@given(kind=st.from_regex(r"[a-z]{3,10}", fullmatch=True), pieces=st.lists(texts, min_size=1, max_size=5),
       token=st.lists(st.from_regex(r"[A-Za-z0-9]{4,10}", fullmatch=True), min_size=1, max_size=3))
def test_unknown_blocks_round_trip_with_their_deltas_accumulated(kind: str, pieces: list[str], token: list[str]) -> None:
    block_type = f"x_{kind}"
    events = [START, {"type": "content_block_start", "index": 0,
                      "content_block": {"type": block_type, "content": None, "encrypted_content": None, "extra": 1}}]
    for piece, enc in zip(pieces, token * len(pieces)):
        events.append({"type": "content_block_delta", "index": 0,
                       "delta": {"type": f"{block_type}_delta", "content": piece, "encrypted_content": enc}})
    events += [{"type": "content_block_stop", "index": 0}, *END]
    [block] = fold(events).assistant_message()["content"]
    assert block["type"] == block_type and block["extra"] == 1
    assert block["content"] == "".join(pieces)  # readable text: nothing of it is lost
    assert block["encrypted_content"] == (token * len(pieces))[len(pieces) - 1]  # an opaque token: the latest


def test_compaction_summary_is_accumulated_not_sent_back_empty() -> None:
    events = [START,
              {"type": "content_block_start", "index": 0,
               "content_block": {"type": "compaction", "content": None, "encrypted_content": None}},
              {"type": "content_block_delta", "index": 0, "delta": {"type": "compaction_delta",
                                                                    "content": "Earlier conversation summarized.",
                                                                    "encrypted_content": "Epw_opaque"}},
              {"type": "content_block_stop", "index": 0}, *END]
    assert fold(events).assistant_message()["content"] == [
        {"type": "compaction", "content": "Earlier conversation summarized.", "encrypted_content": "Epw_opaque"}]


@pytest.mark.parametrize("usage_at_start", [None, {}, {"input_tokens": 3}])
def test_usage_is_read_whatever_fields_are_omitted(usage_at_start: Any) -> None:
    start = copy.deepcopy(START)
    if usage_at_start is not None:
        start["message"]["usage"] = usage_at_start
    delta = {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
             "usage": {"output_tokens": 6, "cache_read_input_tokens": None}}
    acc = fold([start, delta, {"type": "message_stop"}])
    assert acc.usage.get("output_tokens") == 6 and "cache_read_input_tokens" not in acc.usage
    assert acc.stop_reason == "end_turn" and acc.stopped


@settings(max_examples=80, deadline=None)
@given(value=st.dictionaries(st.text(max_size=5), st.text(max_size=8), min_size=1, max_size=3),
       cut=st.integers(min_value=1))
def test_the_truncation_reason_reads_as_one_clause(value: dict[str, str], cut: int) -> None:
    raw = json.dumps(value)
    raw = raw[: 1 + cut % (len(raw) - 1)]
    problem = json_problem(raw)
    assert problem is not None
    assert " at at " not in problem and problem.count("(") == problem.count(")") <= 1


def test_unterminated_string_position_has_no_doubled_word() -> None:
    problem = json_problem('{"path": "/tmp/abc')
    assert problem is not None and "starting at character 9" in problem and "at at" not in problem


def test_out_of_order_events_are_refused_with_a_sentence() -> None:
    from jupyter_toolagent.errors import StreamProtocolError

    acc = MessageAccumulator()
    acc.feed(START)
    with pytest.raises(StreamProtocolError, match="content block 3, which never started"):
        acc.feed({"type": "content_block_delta", "index": 3, "delta": {"type": "text_delta", "text": "x"}})


@pytest.mark.asyncio
async def test_a_refusal_shows_its_explanation_and_is_not_sent_again() -> None:
    refused = message_events([text_block("I can't help with that.")], "refusal")
    for event in refused:
        if event["type"] == "message_delta":
            event["delta"]["stop_details"] = {"type": "refusal", "category": "cyber",
                                              "explanation": "This request was refused due to policy."}
    model = RawModel([message_events([text_block("Hello.")], "end_turn"), refused,
                      message_events([text_block("Sure.")], "end_turn")])
    session = Session()
    await run(session, "hi", run_config(model))
    result = await run(session, "do the forbidden thing", run_config(model))
    assert finished(result).reason == "refusal"
    notices = [e.text for e in result if e.kind == "notice"]
    assert any("This request was refused due to policy." in t and "cyber" in t for t in notices), notices
    await run(session, "something else", run_config(model))
    sent = json.dumps(model.requests[2]["messages"])
    assert "forbidden thing" not in sent and "can't help" not in sent
    assert [m["role"] for m in model.requests[2]["messages"]] == ["user", "assistant", "user"]
    assert "do the forbidden thing" in json.dumps(session.messages)  # still in the session history
    assert_valid_transcript(session.messages)


SERVER_USE = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"}}
SEARCH_RESULT = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}


def test_check_pairing_knows_a_server_tool_use_needs_its_result_block() -> None:
    messages = [{"role": "user", "content": "search"},
                {"role": "assistant", "content": [text_block("Searching."), SERVER_USE]},
                {"role": "user", "content": "and?"}]
    [violation] = check_pairing(messages)
    assert violation.message == ("messages.1: web_search tool use was found without a corresponding "
                                 "web_search_tool_result block")
    paired = [messages[0], {"role": "assistant", "content": [SERVER_USE, SEARCH_RESULT, text_block("Found.")]},
              messages[2]]
    assert check_pairing(paired) == []
    assert check_pairing(messages[:2]) == []  # a paused turn is sent back last, as it is


@pytest.mark.parametrize("result_type", ["web_search_tool_result", "code_execution_tool_result",
                                         "web_fetch_tool_result", "bash_code_execution_tool_result"])
def test_any_server_tool_result_type_pairs_its_use(result_type: str) -> None:
    use = {**SERVER_USE, "name": result_type.removesuffix("_tool_result")}
    messages = [{"role": "user", "content": "go"},
                {"role": "assistant", "content": [use, {"type": result_type, "tool_use_id": "srvtoolu_1", "content": {}}]},
                {"role": "user", "content": "next"}]
    assert check_pairing(messages) == []


def test_a_server_tool_use_suspended_by_the_client_tools_it_called_is_valid() -> None:
    caller = {"type": "code_execution_20260120", "tool_id": "srvtoolu_1"}
    messages = [{"role": "user", "content": "go"},
                {"role": "assistant", "content": [{**SERVER_USE, "name": "code_execution"},
                                                  {**tool_use_block("get_weather", {}, id="toolu_1"), "caller": caller}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "20C"}]}]
    assert check_pairing(messages) == []


def test_repair_drops_the_unpaired_server_tool_use() -> None:
    messages = [{"role": "user", "content": "search"},
                {"role": "assistant", "content": [text_block("Searching."), SERVER_USE]},
                {"role": "user", "content": "and?"}]
    report = repair_pairing(messages)
    assert check_pairing(report.messages) == []
    assert report.messages[1]["content"] == [text_block("Searching.")]
    assert [a.kind for a in report.actions] == ["removed_unpaired_server_tool_use"]
    only = repair_pairing([messages[0], {"role": "assistant", "content": [SERVER_USE]}, messages[2]])
    assert check_pairing(only.messages) == [] and only.messages[1]["content"][0]["type"] == "text"


@pytest.mark.asyncio
async def test_a_stream_cut_after_a_server_tool_use_does_not_poison_later_requests() -> None:
    from jupyter_toolagent.core.events import NoticeEvent

    events = message_events([text_block("Searching."), SERVER_USE, SEARCH_RESULT, text_block("Found it.")],
                            "end_turn")
    cut_at = next(i for i, e in enumerate(events) if e["type"] == "content_block_start" and e["index"] == 2)
    model = RawModel([[*events[:cut_at], {"type": "message_stop"}], message_events([text_block("Next.")], "end_turn")])
    session = Session()
    first = await run(session, "search", run_config(model))
    assert session.messages[1]["content"] == [text_block("Searching.")]  # the unpaired use is not kept
    second = await run(session, "go on", run_config(model))
    assert finished(second).reason == "end_turn"
    assert check_pairing(normalize_messages_for_api(model.requests[1]["messages"])) == []
    assert not [e for e in [*first, *second] if isinstance(e, NoticeEvent) and "repaired" in e.text]
