"""The fake server's context window and summarising turn (SPEC §7.3, §14), over plain HTTP
and through the real SDK."""

from __future__ import annotations

import json

import anthropic
import pytest

from jupyter_toolagent.core.compaction import SUMMARY_REQUEST_MARKER, summary_request_messages
from jupyter_toolagent.testing import FakeAnthropicServer, Fault
from jupyter_toolagent.testing.summaries import body_tokens, is_summary_request
from server_support import KEY, body, raw_exchange, user


def test_past_the_window_the_answer_is_the_apis_400() -> None:
    small = body([user("hi")])
    big = body([user("x" * 4000)])
    window = body_tokens(small) + 10
    with FakeAnthropicServer(turns=["fits"], context_window=window) as server:
        status, headers, raw = raw_exchange(server.base_url, "/v1/messages", big)
        assert status.startswith("HTTP/1.1 400")
        error = json.loads(raw)
        assert error["type"] == "error" and error["error"]["type"] == "invalid_request_error"
        assert error["error"]["message"] == f"prompt is too long: {body_tokens(big)} tokens > {window} maximum"
        assert headers.get("request-id", "").startswith("req_")
        status, _, raw = raw_exchange(server.base_url, "/v1/messages", small)
        assert status.startswith("HTTP/1.1 200") and json.loads(raw)["content"][0]["text"] == "fits"
        assert server.too_long_answers == 1


def test_the_count_is_characters_over_four_of_the_body() -> None:
    for text in ("", "a", "abcd" * 100, "é" * 33):
        payload = body([user(text)])
        assert body_tokens(payload) == max(1, (len(json.dumps(payload, ensure_ascii=False)) + 3) // 4)


def test_the_sdk_sees_prompt_too_long_as_a_bad_request_and_does_not_retry() -> None:
    with FakeAnthropicServer(turns=["unused"], context_window=10) as server:
        client = anthropic.Anthropic(api_key=KEY, base_url=server.base_url, max_retries=2)
        with pytest.raises(anthropic.BadRequestError, match="prompt is too long: \\d+ tokens > 10 maximum"):
            client.messages.create(**body([user("hello there")]))
        assert len(server.requests) == 1
        client.close()


def test_an_injected_prompt_too_long_names_its_numbers() -> None:
    with FakeAnthropicServer(turns=["after"]) as server:
        server.inject(Fault.prompt_too_long(123_456, 100_000))
        status, _, raw = raw_exchange(server.base_url, "/v1/messages", body())
        assert status.startswith("HTTP/1.1 400")
        assert json.loads(raw)["error"]["message"] == "prompt is too long: 123456 tokens > 100000 maximum"
        assert raw_exchange(server.base_url, "/v1/messages", body())[0].startswith("HTTP/1.1 200")


def test_the_summary_request_is_answered_without_using_a_scripted_turn() -> None:
    conversation = [user("Load sales.csv and plot revenue."),
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Read",
                                                       "input": {"path": "sales.csv"}}]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a,b"}]}]
    request = body(summary_request_messages(conversation),
                   tools=[{"name": "Read", "input_schema": {"type": "object"}}])
    assert is_summary_request(request) and not is_summary_request(body(conversation[:1]))
    with FakeAnthropicServer(turns=["the scripted turn"]) as server:
        _, _, raw = raw_exchange(server.base_url, "/v1/messages", request)
        text = json.loads(raw)["content"][0]["text"]
        assert text.startswith("Summary (") and "Load sales.csv" in text and "Read ×1" in text
        assert SUMMARY_REQUEST_MARKER not in text
        assert server.summary_requests == 1
        _, _, raw = raw_exchange(server.base_url, "/v1/messages", body())
        assert json.loads(raw)["content"][0]["text"] == "the scripted turn"
