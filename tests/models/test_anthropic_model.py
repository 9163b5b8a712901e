"""`AnthropicModel` through the official SDK against the fake server on loopback.

Every failure the cell must explain is produced for real — the server sends it over HTTP and
the SDK handles it as it would the API's — and checked for status, type, request id, hint,
and for the key not appearing anywhere."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from model_support import KEY, MODEL, collect, collect_until_error, make_model, request_body, user

from jupyter_toolagent.core.abort import AbortSignal
from jupyter_toolagent.core.accumulator import MessageAccumulator
from jupyter_toolagent.core.pairing import check_pairing
from jupyter_toolagent.errors import ModelAPIError
from jupyter_toolagent.models.stream_events import message_stream_events
from jupyter_toolagent.testing import FakeAnthropicServer, Fault
from jupyter_toolagent.models import ScriptedTurn, text_block, tool_use_block

TURN = [text_block("I will read both files."),
        tool_use_block("Read", {"path": 'data/"raw" \\ 2024.csv', "limit": 50}),
        tool_use_block("Grep", {"pattern": "^total", "paths": ["a", "b"]})]


def fold(events: list[dict[str, Any]]) -> MessageAccumulator:
    acc = MessageAccumulator()
    for event in events:
        acc.feed(event)
    return acc


@pytest.mark.asyncio
async def test_yields_exactly_the_raw_events_the_server_sent(server: FakeAnthropicServer) -> None:
    server.set_turns([TURN])
    events = await collect(make_model(server).stream(request_body(), abort=AbortSignal()))
    assert events[0] == {"type": "_request", "request_id": server.requests[0].request_id}
    assert events[1:] == message_stream_events(server.responses[0], pings=False)


@pytest.mark.asyncio
async def test_reassembled_message_equals_the_sdks_own_final_message(server: FakeAnthropicServer) -> None:
    import anthropic

    server.set_turns([TURN, TURN])
    acc = fold(await collect(make_model(server).stream(request_body(), abort=AbortSignal())))
    async with anthropic.AsyncAnthropic(api_key=KEY, base_url=server.base_url) as client:
        async with client.messages.stream(**request_body()) as stream:
            final = (await stream.get_final_message()).to_dict(mode="json")
    ours = acc.assistant_message()["content"]
    theirs = final["content"]
    assert [b["type"] for b in ours] == ["text", "tool_use", "tool_use"]
    strip_ids = lambda blocks: [{k: v for k, v in b.items() if k != "id"} for b in blocks]  # noqa: E731
    assert strip_ids(ours) == strip_ids(theirs)
    assert ours[1]["input"] == {"path": 'data/"raw" \\ 2024.csv', "limit": 50}
    assert acc.stop_reason == final["stop_reason"] == "tool_use"
    assert acc.usage["output_tokens"] == final["usage"]["output_tokens"]


@pytest.mark.asyncio
async def test_scripted_model_and_sdk_path_yield_the_same_events(server: FakeAnthropicServer) -> None:
    from jupyter_toolagent.models import ScriptedModel

    turn = {"content": TURN, "usage": {"input_tokens": 40, "output_tokens": 60}}
    server.set_turns([turn])
    over_http = await collect(make_model(server).stream(request_body(), abort=AbortSignal()))
    scripted = await collect(ScriptedModel([turn], model=MODEL).stream(request_body(), abort=AbortSignal()))

    def without_ids(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: "<id>" if k in ("id", "request_id") else without_ids(v) for k, v in value.items()}
        if isinstance(value, list):
            return [without_ids(v) for v in value]
        return value

    assert without_ids(over_http) == without_ids(scripted)
    assert len(over_http) == len(scripted) > 10


def test_non_streaming_and_count_tokens(server: FakeAnthropicServer) -> None:
    import anthropic

    server.set_turns(["Plain answer."])
    with anthropic.Anthropic(api_key=KEY, base_url=server.base_url) as client:
        message = client.messages.create(**request_body())
        counted = client.messages.count_tokens(model=MODEL, messages=[user("how many tokens is this?")])
    assert message.to_dict(mode="json") == server.responses[0]
    assert message.content[0].text == "Plain answer."
    assert counted.input_tokens > 0
    assert [r.path for r in server.requests] == ["/v1/messages", "/v1/messages/count_tokens"]


@pytest.mark.asyncio
async def test_unknown_body_keys_travel_through_extra_body(server: FakeAnthropicServer) -> None:
    server.set_turns(["ok"])
    body = request_body(metadata={"user_id": "u1"}, brand_new_parameter={"level": 3})
    await collect(make_model(server).stream(body, abort=AbortSignal()))
    sent = server.requests[0].body
    assert sent["brand_new_parameter"] == {"level": 3} and sent["metadata"] == {"user_id": "u1"}
    assert sent["stream"] is True


@pytest.mark.asyncio
async def test_429_is_retried_honouring_a_short_retry_after(server: FakeAnthropicServer) -> None:
    server.set_turns(["after the retry"])
    server.inject(Fault.rate_limit(retry_after_ms=50))
    acc = fold(await collect(make_model(server).stream(request_body(), abort=AbortSignal())))
    assert acc.assistant_message()["content"] == [text_block("after the retry")]
    first, second = server.requests
    gap = second.received_at - first.received_at
    # The SDK's own backoff would wait at least 0.375 s; honouring retry-after-ms waits ~50 ms.
    assert 0.045 <= gap < 0.35, gap
    assert second.headers["x-stainless-retry-count"] == "1"


@pytest.mark.asyncio
async def test_529_beyond_the_retries_is_a_model_api_error(server: FakeAnthropicServer) -> None:
    server.set_turns(["never sent"])
    server.inject(Fault.overloaded(retry_after_ms=10), times=3)
    events, error = await collect_until_error(make_model(server, max_retries=2), request_body())
    assert events == [] and isinstance(error, ModelAPIError)
    assert (error.status, error.error_type) == (529, "overloaded_error")
    assert error.request_id == server.requests[-1].request_id and len(server.requests) == 3
    assert "overloaded" in error.hint and "2 retries" in error.hint
    assert error.request_id in str(error) and "HTTP 529" in str(error)


@pytest.mark.asyncio
async def test_500_after_retries(server: FakeAnthropicServer) -> None:
    server.inject(Fault.server_error(retry_after_ms=10), times=2)
    _, error = await collect_until_error(make_model(server, max_retries=1), request_body())
    assert isinstance(error, ModelAPIError) and (error.status, error.error_type) == (500, "api_error")
    assert "1 retry " in error.hint and len(server.requests) == 2


@pytest.mark.asyncio
async def test_error_event_mid_stream_is_not_retried_and_the_turn_is_replayed(server: FakeAnthropicServer) -> None:
    server.set_turns([TURN])
    server.inject(Fault.error_event("overloaded_error", after_events=5))
    model = make_model(server)
    events, error = await collect_until_error(model, request_body())
    assert isinstance(error, ModelAPIError)
    assert (error.status, error.error_type) == (200, "overloaded_error")
    assert error.request_id == server.requests[0].request_id
    assert "goes on by itself" in error.hint and "does not retry" in error.hint
    assert len(server.requests) == 1 and events[0]["type"] == "_request"
    assert "message_stop" not in [e["type"] for e in events]
    again = fold(await collect(model.stream(request_body(), abort=AbortSignal())))
    assert [b.get("name") for b in again.assistant_message()["content"]] == [None, "Read", "Grep"]


@pytest.mark.asyncio
async def test_connection_cut_inside_a_tool_input(server: FakeAnthropicServer) -> None:
    server.set_turns([TURN])
    server.inject(Fault.cut_in_tool_use(after_json_deltas=2))
    events, error = await collect_until_error(make_model(server), request_body())
    assert isinstance(error, ModelAPIError) and error.error_type == "connection_error"
    assert error.request_id == server.requests[0].request_id and "dropped" in str(error)
    stops = [e["index"] for e in events if e["type"] == "content_block_stop"]
    starts = [e["index"] for e in events if e["type"] == "content_block_start"]
    assert starts == [0, 1] and stops == [0]  # the cut block never stopped
    assert fold(events).assistant_message()["content"] == [text_block("I will read both files.")]
    assert server.responses == []  # not delivered: played again next time
    await collect(make_model(server).stream(request_body(), abort=AbortSignal()))
    assert len(server.responses) == 1 and server.responses[0]["content"][1]["name"] == "Read"


@pytest.mark.asyncio
async def test_a_stall_with_a_short_client_timeout_is_a_timeout(server: FakeAnthropicServer) -> None:
    server.set_turns(["slow"])
    server.inject(Fault.stall(3.0, after_events=2))
    start = time.monotonic()
    events, error = await collect_until_error(make_model(server, timeout=0.3, max_retries=0), request_body())
    assert time.monotonic() - start < 2.0
    assert isinstance(error, ModelAPIError) and error.error_type == "timeout"
    assert "timed out" in str(error) and error.request_id == server.requests[0].request_id
    assert [e["type"] for e in events] == ["_request", "message_start", "content_block_start"]


@pytest.mark.asyncio
async def test_a_broken_transcript_gets_the_apis_400_text(server: FakeAnthropicServer) -> None:
    messages = [user("read it"),
                {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_A", "name": "Read", "input": {}}]},
                user("I never sent the result")]
    _, error = await collect_until_error(make_model(server), request_body(messages))
    expected = ("messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_A. "
                "Each `tool_use` block must have a corresponding `tool_result` block in the next message.")
    assert isinstance(error, ModelAPIError)
    assert (error.status, error.error_type, error.message) == (400, "invalid_request_error", expected)
    assert check_pairing(messages)[0].message == expected
    assert len(server.requests) == 1  # a 400 is not retried


@pytest.mark.asyncio
async def test_the_key_never_appears_in_errors_or_recordings(server: FakeAnthropicServer) -> None:
    server.inject(Fault.http_error(400, "invalid_request_error", f"bad header: Bearer {KEY} (key {KEY})"))
    _, echoed = await collect_until_error(make_model(server), request_body())
    locked = FakeAnthropicServer(api_key="sk-ant-the-right-key-000000").start()
    try:
        _, rejected = await collect_until_error(make_model(locked), request_body())
    finally:
        locked.stop()
    assert isinstance(echoed, ModelAPIError) and isinstance(rejected, ModelAPIError)
    assert rejected.status == 401 and "ANTHROPIC_API_KEY" in rejected.hint
    for error in (echoed, rejected):
        text = f"{error} {error!r} {error.message} {error.hint}"
        assert KEY not in text and KEY[-12:] not in text
        assert error.__cause__ is None and error.__suppress_context__
    assert "[secret]" in echoed.message
    for recorded in server.requests + locked.requests:
        assert KEY not in repr(recorded) and KEY.encode() not in recorded.raw
        assert recorded.headers["authorization"] == "<present, not recorded>"
    assert KEY not in repr(make_model(server))


@pytest.mark.asyncio
async def test_very_long_error_bodies_are_shortened(server: FakeAnthropicServer) -> None:
    server.inject(Fault.http_error(418, "teapot_error", "steam " * 2000))
    _, error = await collect_until_error(make_model(server), request_body())
    assert isinstance(error, ModelAPIError) and error.status == 418
    assert len(error.message) < 700 and "more characters" in error.message


@pytest.mark.asyncio
async def test_missing_key_fails_before_sending(server: FakeAnthropicServer) -> None:
    from jupyter_toolagent.models.anthropic import AnthropicModel

    model = AnthropicModel(MODEL, base_url=server.base_url)
    _, error = await collect_until_error(model, request_body())
    assert isinstance(error, ModelAPIError) and error.error_type == "authentication_error"
    assert "ANTHROPIC_API_KEY" in str(error) and server.requests == []


@pytest.mark.asyncio
async def test_a_credentials_profile_that_cannot_be_loaded_is_a_model_api_error(
    server: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jupyter_toolagent.models.anthropic import AnthropicModel

    monkeypatch.setenv("ANTHROPIC_PROFILE", "no-such-profile")
    _, error = await collect_until_error(AnthropicModel(MODEL, base_url=server.base_url), request_body())
    assert isinstance(error, ModelAPIError) and error.error_type == "authentication_error"
    assert "could not be loaded" in error.message and server.requests == []


@pytest.mark.asyncio
async def test_environment_key_and_base_url_are_honoured(server: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch) -> None:
    from jupyter_toolagent.models.anthropic import AnthropicModel

    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    server.set_turns(["from the environment"])
    acc = fold(await collect(AnthropicModel(MODEL).stream(request_body(), abort=AbortSignal())))
    assert acc.assistant_message()["content"] == [text_block("from the environment")]


@pytest.mark.asyncio
async def test_abort_during_a_long_retry_wait_ends_the_stream_at_once(server: FakeAnthropicServer) -> None:
    server.set_turns(["never"])
    server.inject(Fault.rate_limit(retry_after=20))
    abort = AbortSignal()
    asyncio.get_running_loop().call_later(0.3, abort.abort)
    start = time.monotonic()
    events, error = await collect_until_error(make_model(server), request_body(), abort)
    assert error is None and events == []
    assert time.monotonic() - start < 0.3 + 0.5
    assert len(server.requests) == 1


@pytest.mark.asyncio
async def test_abort_mid_stream_ends_it_within_half_a_second(server: FakeAnthropicServer) -> None:
    server.set_turns([ScriptedTurn([text_block("a"), text_block("b")], block_delay=5.0)])
    abort = AbortSignal()
    seen: list[str] = []
    start = time.monotonic()
    async for event in make_model(server).stream(request_body(), abort=abort):
        seen.append(event["type"])
        if event["type"] == "content_block_stop":
            asyncio.get_running_loop().call_later(0.1, abort.abort)
    assert time.monotonic() - start < 0.1 + 0.5 + 0.5
    assert seen.count("content_block_start") == 1 and "message_stop" not in seen


def test_one_client_per_event_loop(server: FakeAnthropicServer) -> None:
    server.set_turns(["one", "two"])
    model = make_model(server)

    async def once() -> tuple[Any, str]:
        acc = fold(await collect(model.stream(request_body(), abort=AbortSignal())))
        return model.client(), acc.assistant_message()["content"][0]["text"]

    first_client, first = asyncio.run(once())
    second_client, second = asyncio.run(once())
    assert (first, second) == ("one", "two") and first_client is not second_client
    assert model.model_name == MODEL


@pytest.mark.asyncio
async def test_aclose_closes_the_client_and_the_model_stays_usable(server: FakeAnthropicServer) -> None:
    server.set_turns(["before", "after"])
    model = make_model(server)
    await collect(model.stream(request_body(), abort=AbortSignal()))
    first = model.client()
    await model.aclose()
    assert first.is_closed()
    acc = fold(await collect(model.stream(request_body(), abort=AbortSignal())))
    assert acc.assistant_message()["content"] == [text_block("after")] and model.client() is not first
    await model.aclose()


@pytest.mark.asyncio
async def test_a_body_the_sdk_cannot_send_is_a_model_api_error(server: FakeAnthropicServer) -> None:
    body = request_body()
    del body["max_tokens"]
    _, error = await collect_until_error(make_model(server), body)
    assert isinstance(error, ModelAPIError) and error.error_type == "invalid_request"
    assert "max_tokens" in error.message and server.requests == []


@pytest.mark.asyncio
@pytest.mark.parametrize("body_kind", ["plain", "unicode and escapes", "not plain JSON"])
async def test_the_body_goes_out_as_the_same_bytes_the_sdk_sends_for_it(server: FakeAnthropicServer,
                                                                        body_kind: str) -> None:
    """The model encodes a plain-JSON body itself (the SDK's preparation walks the whole
    conversation per request): the bytes and the content type on the wire are the SDK's own."""
    import anthropic

    messages = [user("hi")]
    if body_kind == "unicode and escapes":
        messages = [user('données "brutes" \\ 2024 — ✓ \u2028 \x07'), {"role": "assistant", "content": "ok"},
                    {"role": "user", "content": [{"type": "text", "text": "🙂"}]}]
    body = request_body(messages, metadata={"user_id": "u-1"})
    if body_kind == "not plain JSON":  # left to the SDK's own preparation, which knows dates
        import datetime

        body["stop_sequences"] = ("STOP",)
        body["metadata"] = {"user_id": "u-1", "since": datetime.date(2026, 1, 2)}
    server.set_turns(["one", "two"])
    await collect(make_model(server).stream(body, abort=AbortSignal()))
    client = anthropic.AsyncAnthropic(api_key=KEY, base_url=server.base_url, max_retries=0)
    try:
        stream = await client.post("/v1/messages", body={**body, "stream": True}, cast_to=object, stream=True,
                                   stream_cls=anthropic.AsyncStream[object])
        async with stream:
            async for _ in stream:
                pass
    finally:
        await client.close()
    ours, sdks = server.requests[0], server.requests[1]
    assert ours.raw == sdks.raw
    assert (b'"2026-01-02"' in ours.raw) == (body_kind == "not plain JSON")
    assert ours.headers.get("content-type") == sdks.headers.get("content-type") == "application/json"
