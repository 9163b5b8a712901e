"""Every recorded stream, served byte for byte by `FakeAnthropicServer`, through `Agent` and the
real SDK (``AnthropicModel``) — and derived variants of each: the connection cut inside a block,
before a block's stop, after a ``server_tool_use``; a stop reason rewritten to ``pause_turn`` /
``stop_sequence``. What must happen is read from the recording itself (`replay_support.expect`).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from jupyter_toolagent import Agent
from jupyter_toolagent.tools.function_tool import as_tool
from jupyter_toolagent.core.events import NoticeEvent, RequestFinishedEvent
from jupyter_toolagent.core.pairing import check_pairing
from jupyter_toolagent.models.anthropic import AnthropicModel
from jupyter_toolagent.testing import FakeAnthropicServer, RecordedStream
from jupyter_toolagent.testing.validation import request_error

from replay_support import FIXTURES, ROOT, Expected, blocks_of, cut_variants, expect, fixture_id, replay_turns
from replay_tools import CALLS, REPLAY_TOOLS

KEY = "sk-test-replay-0123456789"


async def replay(recorded: RecordedStream) -> tuple[Any, Any, FakeAnthropicServer, list[Any]]:
    """``replay it`` then ``next`` in one session; returns both runs, the server, the warnings."""
    CALLS.clear()
    with FakeAnthropicServer(turns=replay_turns({"it": recorded})) as server:
        model = AnthropicModel("claude-replay", api_key=KEY, base_url=server.base_url)
        agent = Agent(model, tools=REPLAY_TOOLS, allow=[as_tool(t).name for t in REPLAY_TOOLS], continuation_delay=0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            first = await agent.run("replay it")
            second = await agent.run("next")
        await model.aclose()
    return first, second, server, list(caught)


def results_of(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {b["tool_use_id"]: b for b in blocks_of(body) if b.get("type") == "tool_result"}


def notices(run: Any) -> list[str]:
    return [e.text for e in run.events if isinstance(e, NoticeEvent)]


def check_requests(server: FakeAnthropicServer) -> list[dict[str, Any]]:
    bodies = server.bodies
    for body in bodies:
        assert request_error(body) is None, request_error(body)
        assert check_pairing(body["messages"]) == []
    return bodies


def check_tools(exp: Expected, bodies: list[dict[str, Any]]) -> None:
    assert sorted(CALLS, key=repr) == sorted(((name, value) for _, name, value in exp.runs), key=repr)
    if exp.stop_reason == "refusal":
        return  # the refused exchange (calls and results) is withheld from later requests
    answered = {k: v for body in bodies[1:] for k, v in results_of(body).items()}
    for tool_use_id in exp.refused_calls:
        result = answered[tool_use_id]
        assert result.get("is_error") is True and "truncated" in json.dumps(result["content"]), result
    for tool_use_id, _, _ in exp.runs:
        assert not answered[tool_use_id].get("is_error"), answered[tool_use_id]


@pytest.mark.asyncio
@pytest.mark.parametrize("path", FIXTURES, ids=fixture_id)
async def test_recorded_stream_through_agent(path: Path) -> None:
    recorded = RecordedStream.from_file(path)
    exp = expect(recorded)
    first, second, server, caught = await replay(recorded)
    assert not [w for w in caught if "Pydantic" in str(w.message) or "serializ" in str(w.message)], caught
    bodies = check_requests(server)
    assert len(bodies) >= 2
    check_tools(exp, bodies)

    sent_back = blocks_of(bodies[1])
    refused = exp.stop_reason == "refusal"
    for block in exp.unknown:  # unknown blocks come back as they were, deltas accumulated
        assert (block in sent_back) is not refused, (block, sent_back)
    for server_use, paired in exp.server_uses:
        assert any(b.get("id") == server_use for b in sent_back) is (paired and not refused)

    [usage] = [e.usage for e in first.events if isinstance(e, RequestFinishedEvent)][:1]
    assert (usage.input_tokens, usage.output_tokens) == (exp.input_tokens, exp.output_tokens)

    if refused:
        assert first.finish_reason == "refusal"
        explanation = (exp.stop_details or {}).get("explanation")
        assert any("refused" in t and (explanation or "") in t for t in notices(first)), notices(first)
        assert "replay it" not in json.dumps(bodies[-1]["messages"])  # the refused exchange is not sent again
    elif exp.runs or exp.refused_calls:
        assert first.finish_reason == "end_turn"
    elif exp.stop_reason is None:
        assert first.finish_reason == "truncated"
        assert any("without a stop reason" in t for t in notices(first)), notices(first)
    else:
        assert first.finish_reason == exp.stop_reason
    assert second.finish_reason == "end_turn"


CUT_CASES = [(path, variant) for path in FIXTURES for variant in cut_variants(RecordedStream.from_file(path))]


@pytest.mark.asyncio
@pytest.mark.parametrize("path,recorded", CUT_CASES, ids=[f"{fixture_id(p)}[{v.name.split('[')[-1]}" for p, v in CUT_CASES])
async def test_cut_variant_continues_by_itself(path: Path, recorded: RecordedStream) -> None:
    exp = expect(recorded)
    first, second, server, _ = await replay(recorded)
    bodies = check_requests(server)
    check_tools(exp, bodies)
    assert first.finish_reason == "end_turn", (first.finish_reason, first.error, notices(first))
    assert any("Continuing automatically" in t for t in notices(first)), notices(first)
    assert second.finish_reason == "end_turn"
    for server_use, paired in exp.server_uses:
        if not paired:  # a use cut off from its result is never sent back
            assert all(b.get("id") != server_use for body in bodies[1:] for b in blocks_of(body))


def test_every_recording_has_cut_variants_of_each_kind() -> None:
    kinds = {v.name.split("[")[-1].split(" block")[0].split(" server")[0] for _, v in CUT_CASES}
    assert {"inside", "before the stop of", "after"} <= {k.rstrip("]") for k in kinds}, kinds
    assert any("after server_tool_use" in v.name for _, v in CUT_CASES)
    assert len(FIXTURES) >= 45 and len(CUT_CASES) > 2 * len(FIXTURES)


BASIC = ROOT / "sdk_streaming" / "basic_response.txt"
END_TURN = b'"stop_reason":"end_turn","stop_sequence":null'


@pytest.mark.asyncio
async def test_stop_sequence_is_the_finish_reason() -> None:
    data = BASIC.read_bytes()
    assert END_TURN in data
    first, _, server, _ = await replay(RecordedStream(data.replace(END_TURN, b'"stop_reason":"stop_sequence","stop_sequence":"###"')))
    assert first.finish_reason == "stop_sequence"
    check_requests(server)


@pytest.mark.asyncio
async def test_pause_turn_is_sent_back_so_the_model_goes_on() -> None:
    data = BASIC.read_bytes().replace(END_TURN, b'"stop_reason":"pause_turn","stop_sequence":null')
    first, _, server, _ = await replay(RecordedStream(data))
    bodies = check_requests(server)
    assert first.finish_reason == "end_turn"
    assert bodies[1]["messages"][-1]["role"] == "assistant"  # the paused turn, as it was
