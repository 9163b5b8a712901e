"""The fake server speaks the Messages API over real HTTP: framing, headers, auth, recording,
script failures, faults, and stopping. The SDK is the client wherever it can be."""

from __future__ import annotations

import asyncio
import http.client
import json
import socket
import threading
import time
from typing import Any
from urllib.parse import urlsplit

import pytest
from server_support import KEY, MODEL, body, dechunk, raw_exchange, user

from jupyter_toolagent.models.stream_events import message_stream_events
from jupyter_toolagent.testing import FakeAnthropicServer, Fault
from jupyter_toolagent.models import ScriptedTurn, text_block, tool_use_block
from jupyter_toolagent.testing.fake_server import NOT_RECORDED


def test_a_stream_is_chunked_sse_one_event_per_chunk(server: FakeAnthropicServer) -> None:
    server.set_turns([[text_block("Hello"), tool_use_block("Read", {"path": "a.csv"})]])
    status, headers, raw = raw_exchange(server.base_url, "/v1/messages", body(stream=True))
    assert status == "HTTP/1.1 200 OK"
    assert headers["transfer-encoding"] == "chunked" and headers["content-type"].startswith("text/event-stream")
    assert headers["request-id"] == server.requests[0].request_id
    sent = []
    for chunk in dechunk(raw):
        event_line, data_line, blank, end = chunk.decode().split("\n")
        assert event_line.startswith("event: ") and data_line.startswith("data: ") and blank == end == ""
        event = json.loads(data_line[6:])
        assert event_line[7:] == event["type"]
        sent.append(event)
    assert sent == message_stream_events(server.responses[0])
    assert [e["type"] for e in sent][:3] == ["message_start", "content_block_start", "ping"]


def test_keep_alive_serves_several_requests_on_one_connection(server: FakeAnthropicServer) -> None:
    server.set_turns(["one", "two", "three"])
    url = urlsplit(server.base_url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    try:
        sockets = []
        for stream in (True, False, True):
            conn.request("POST", "/v1/messages", json.dumps(body(stream=stream)), {"x-api-key": KEY})
            response = conn.getresponse()
            response.read()
            assert response.status == 200
            sockets.append(conn.sock)
        assert sockets[0] is not None and sockets[0] is sockets[1] is sockets[2]
    finally:
        conn.close()
    assert [m["content"][0]["text"] for m in server.responses] == ["one", "two", "three"]


def test_keep_bounds_what_a_long_lived_server_remembers() -> None:
    with FakeAnthropicServer(turns=[f"answer {n}" for n in range(5)], keep=2) as server:
        url = urlsplit(server.base_url)
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
        try:
            for n in range(5):
                conn.request("POST", "/v1/messages", json.dumps(body(stream=n % 2 == 0, max_tokens=10 + n)),
                             {"x-api-key": KEY})
                response = conn.getresponse()
                response.read()
                assert response.status == 200
        finally:
            conn.close()
        assert [r.body["max_tokens"] for r in server.requests] == [13, 14]  # the latest two
        assert [m["content"][0]["text"] for m in server.responses] == ["answer 3", "answer 4"]


def test_accepted_connections_have_tcp_nodelay(server: FakeAnthropicServer) -> None:
    server.set_turns(["slow"])
    server.inject(Fault.stall(5.0, after_events=1))
    worker = threading.Thread(target=lambda: raw_exchange(server.base_url, "/v1/messages", body(stream=True)),
                              daemon=True)
    worker.start()
    deadline = time.monotonic() + 5
    while not server._connections and time.monotonic() < deadline:
        time.sleep(0.01)
    connection = next(iter(server._connections))
    assert connection.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    server.stop()
    worker.join(5)
    assert not worker.is_alive()


def test_every_response_carries_a_request_id(server: FakeAnthropicServer) -> None:
    server.set_turns(["a", "b"])
    server.inject(Fault.rate_limit(retry_after_ms=5))
    cases = [
        ("/v1/messages", body(stream=True), {"x-api-key": KEY}),   # 429 (the fault)
        ("/v1/messages", body(stream=True), {"x-api-key": KEY}),   # 200 stream
        ("/v1/messages", body(), {"x-api-key": KEY}),              # 200 json
        ("/v1/messages", {"model": MODEL}, {"x-api-key": KEY}),    # 400
        ("/v1/messages", body(), {}),                              # 401
        ("/v1/nothing", body(), {"x-api-key": KEY}),               # 404
        ("/v1/messages/count_tokens", {"model": MODEL, "messages": [user("x")]}, {"x-api-key": KEY}),
    ]
    statuses = []
    for (path, payload, headers), recorded_index in zip(cases, range(len(cases))):
        status, response_headers, raw = raw_exchange(server.base_url, path, payload, headers)
        statuses.append(int(status.split()[1]))
        assert response_headers["request-id"] == server.requests[recorded_index].request_id
        if statuses[-1] >= 400:
            envelope = json.loads(raw)
            assert envelope["type"] == "error" and envelope["request_id"] == response_headers["request-id"]
    assert statuses == [429, 200, 200, 400, 401, 404, 200]


def test_auth_is_required_and_credentials_are_never_recorded(server: FakeAnthropicServer, client: Any) -> None:
    import anthropic

    server.set_turns(["hello"])
    status, _, raw = raw_exchange(server.base_url, "/v1/messages", body(), headers={})
    assert status.startswith("HTTP/1.1 401") and json.loads(raw)["error"]["type"] == "authentication_error"
    client.messages.create(**body())
    recorded = server.requests[-1]
    assert recorded.headers["authorization"] == NOT_RECORDED
    assert KEY not in repr(server.requests) and KEY.encode() not in recorded.raw
    locked = FakeAnthropicServer(["x"], api_key="sk-ant-right-0000000000").start()
    try:
        with anthropic.Anthropic(api_key=KEY, base_url=locked.base_url, max_retries=0) as wrong:
            with pytest.raises(anthropic.AuthenticationError):
                wrong.messages.create(**body())
    finally:
        locked.stop()


def test_a_failing_turn_function_is_a_500_the_sdk_does_not_retry(server: FakeAnthropicServer) -> None:
    import anthropic

    def broken(request_body: dict[str, Any]) -> Any:
        return request_body["no such key"]

    server.set_turns(broken)
    with anthropic.Anthropic(api_key=KEY, base_url=server.base_url, max_retries=2) as sdk:
        with pytest.raises(anthropic.InternalServerError) as info:
            sdk.messages.create(**body())
    assert len(server.requests) == 1  # x-should-retry: false was obeyed
    assert info.value.response.headers["x-should-retry"] == "false"
    assert "turn function failed: KeyError" in info.value.api_message


def test_an_exhausted_script_says_so_and_when_exhausted_answers(client: Any) -> None:
    import anthropic

    with FakeAnthropicServer(["only"]) as srv:
        with anthropic.Anthropic(api_key=KEY, base_url=srv.base_url, max_retries=0) as sdk:
            sdk.messages.create(**body())
            with pytest.raises(anthropic.InternalServerError, match="no turn left"):
                sdk.messages.create(**body())
    with FakeAnthropicServer([], when_exhausted="That is all.") as srv:
        with anthropic.Anthropic(api_key=KEY, base_url=srv.base_url, max_retries=0) as sdk:
            assert sdk.messages.create(**body()).content[0].text == "That is all."


def test_async_turn_functions_are_awaited(server: FakeAnthropicServer, client: Any) -> None:
    async def turn(request_body: dict[str, Any]) -> Any:
        await asyncio.sleep(0.01)
        return f"saw {len(request_body['messages'])} message(s)"

    server.set_turns(turn)
    assert client.messages.create(**body()).content[0].text == "saw 1 message(s)"


def test_faults_are_fifo_counted_and_clearable(server: FakeAnthropicServer) -> None:
    server.set_turns(["ok"] * 3)
    server.inject(Fault.rate_limit(retry_after_ms=1), times=2)
    server.inject(Fault.overloaded())
    server.inject(Fault.http_error(418, "teapot_error", "short and stout"))
    assert [(f.status, n) for f, n in server.pending_faults] == [(429, 2), (529, 1), (418, 1)]
    statuses = [int(raw_exchange(server.base_url, "/v1/messages", body())[0].split()[1]) for _ in range(4)]
    assert statuses == [429, 429, 529, 418]
    server.inject(Fault.server_error(), times=5)
    server.clear_faults()
    assert server.pending_faults == []
    assert raw_exchange(server.base_url, "/v1/messages", body())[0].startswith("HTTP/1.1 200")
    with pytest.raises(ValueError):
        server.inject(Fault.overloaded(), times=0)


def test_http_faults_carry_retry_headers(server: FakeAnthropicServer) -> None:
    server.inject(Fault.rate_limit(retry_after_ms=1500))
    server.inject(Fault.http_error(503, "api_error", "down", should_retry=False))
    _, first, raw = raw_exchange(server.base_url, "/v1/messages", body())
    _, second, _ = raw_exchange(server.base_url, "/v1/messages", body())
    assert (first["retry-after-ms"], first["retry-after"]) == ("1500", "2")
    assert json.loads(raw)["error"] == {"type": "rate_limit_error",
                                        "message": "Number of request tokens has exceeded your per-minute rate limit"}
    assert second["x-should-retry"] == "false"


def test_stream_faults_wait_for_a_streaming_request(server: FakeAnthropicServer, client: Any) -> None:
    import anthropic

    server.set_turns(["plain", "streamed", "streamed again"])
    server.inject(Fault.error_event("api_error", after_events=2, message="boom"))
    assert client.messages.create(**body()).content[0].text == "plain"
    with pytest.raises(anthropic.APIStatusError) as info:
        with client.messages.stream(**body()) as stream:
            stream.until_done()
    assert (info.value.status_code, info.value.type) == (200, "api_error")
    with client.messages.stream(**body()) as stream:  # the broken turn is played again
        assert stream.get_final_text() == "streamed"
    assert [m["content"][0]["text"] for m in server.responses] == ["plain", "streamed"]


def test_a_stream_fault_is_not_spent_on_a_rejected_request(server: FakeAnthropicServer) -> None:
    server.set_turns(["streamed"])
    server.inject(Fault.error_event(after_events=1), times=2)
    status, _, _ = raw_exchange(server.base_url, "/v1/messages", {"model": MODEL, "messages": [user("x")], "stream": True})
    assert status.startswith("HTTP/1.1 400")
    assert [(f.kind, n) for f, n in server.pending_faults] == [("error_event", 2)]


def test_missing_message_stop_gives_no_stop_reason(server: FakeAnthropicServer, client: Any) -> None:
    server.set_turns(["cut short", "cut short too"])
    server.inject(Fault.missing_message_stop())
    server.inject(Fault.missing_message_stop(drop_message_delta=False))
    with client.messages.stream(**body()) as stream:
        assert stream.get_final_message().stop_reason is None  # SPEC Appendix B
    _, _, raw = raw_exchange(server.base_url, "/v1/messages", body(stream=True))
    kinds = [json.loads(c.decode().split("\n")[1][6:])["type"] for c in dechunk(raw)]
    assert kinds[-1] == "message_delta" and "message_stop" not in kinds


def test_raw_event_turns_go_out_as_written(server: FakeAnthropicServer, client: Any) -> None:
    events = [
        {"type": "message_start", "message": {"id": "msg_raw", "type": "message", "role": "assistant", "model": MODEL,
                                              "content": [], "stop_reason": None, "stop_sequence": None,
                                              "usage": {"input_tokens": 3, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "tool_use", "id": "toolu_raw", "name": "Write", "input": {}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": '{"path": "x", "te'}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "max_tokens", "stop_sequence": None}, "usage": {"output_tokens": 50}},
        {"type": "message_stop"},
    ]
    server.set_turns([events, ScriptedTurn(events=events)])
    _, _, raw = raw_exchange(server.base_url, "/v1/messages", body(stream=True))
    assert [json.loads(c.decode().split("\n")[1][6:]) for c in dechunk(raw)] == events
    with client.messages.stream(**body()) as stream:
        final = stream.get_final_message()
    assert final.stop_reason == "max_tokens" and final.content[0].id == "toolu_raw"
    assert server.responses[0]["stop_reason"] == "max_tokens"


def test_beta_paths_and_count_tokens(server: FakeAnthropicServer, client: Any) -> None:
    import anthropic

    server.set_turns(["beta ok"])
    message = client.beta.messages.create(**body())
    assert message.content[0].text == "beta ok" and server.requests[0].path.startswith("/v1/messages")
    assert client.messages.count_tokens(model=MODEL, messages=[user("count me")]).input_tokens > 0
    with pytest.raises(anthropic.BadRequestError, match="messages: Field required"):
        client.messages.count_tokens(model=MODEL, messages=anthropic.omit)


def test_results_are_recorded_before_the_last_bytes(server: FakeAnthropicServer) -> None:
    """A client that has read a whole stream finds the message in `responses`, every time."""
    server.set_turns(lambda request_body: "x")
    url = urlsplit(server.base_url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    try:
        for attempt in range(1, 41):
            conn.request("POST", "/v1/messages", json.dumps(body(stream=True)), {"x-api-key": KEY})
            conn.getresponse().read()
            assert len(server.responses) == attempt
    finally:
        conn.close()


def test_concurrent_streams_each_get_their_own_turn(server: FakeAnthropicServer) -> None:
    server.set_turns([ScriptedTurn([text_block(f"turn {n}")], event_delay=0.01) for n in range(8)])
    texts: list[str] = []

    def one() -> None:
        _, _, raw = raw_exchange(server.base_url, "/v1/messages", body(stream=True))
        deltas = [json.loads(c.decode().split("\n")[1][6:]) for c in dechunk(raw)]
        texts.append("".join(e["delta"]["text"] for e in deltas if e["type"] == "content_block_delta"))

    workers = [threading.Thread(target=one) for _ in range(8)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(10)
    assert sorted(texts) == sorted(f"turn {n}" for n in range(8))
    assert len(server.responses) == 8


def test_stop_ends_a_stalled_stream_and_frees_the_port() -> None:
    server = FakeAnthropicServer(["never finished"]).start()
    port = urlsplit(server.base_url).port
    server.inject(Fault.stall(30.0, after_events=2))
    result: dict[str, Any] = {}

    def client() -> None:
        try:
            result["response"] = raw_exchange(server.base_url, "/v1/messages", body(stream=True), timeout=20)
        except OSError as exc:
            result["error"] = exc

    worker = threading.Thread(target=client, daemon=True)
    worker.start()
    while len(server.requests) < 1:
        time.sleep(0.01)
    time.sleep(0.1)
    start = time.monotonic()
    server.stop()
    worker.join(5)
    assert not worker.is_alive() and time.monotonic() - start < 2.0
    assert server.responses == []
    with pytest.raises(RuntimeError, match="not running"):
        _ = server.base_url
    again = FakeAnthropicServer(port=port).start()
    try:
        assert urlsplit(again.base_url).port == port
    finally:
        again.stop()


def test_a_server_side_bug_is_answered_with_a_500_not_a_hang(server: FakeAnthropicServer,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(request_body: dict[str, Any]) -> Any:
        raise RuntimeError("bug in the server")

    monkeypatch.setattr(server, "_next_turn", broken)
    status, headers, raw = raw_exchange(server.base_url, "/v1/messages", body(), timeout=5)
    assert status.startswith("HTTP/1.1 500") and headers["x-should-retry"] == "false"
    assert json.loads(raw)["error"]["message"] == "fake server error: RuntimeError: bug in the server"
    status, _, raw = raw_exchange(server.base_url, "/v1/messages", [1, 2])
    assert status.startswith("HTTP/1.1 400") and "JSON object" in json.loads(raw)["error"]["message"]


def test_validation_can_be_switched_off() -> None:
    broken = [user("a"), {"role": "assistant", "content": [tool_use_block("Read", {}, id="toolu_1")]}, user("b")]
    with FakeAnthropicServer(["accepted anyway"], validate=False) as srv:
        status, _, _ = raw_exchange(srv.base_url, "/v1/messages", body(broken))
    assert status.startswith("HTTP/1.1 200")
    with FakeAnthropicServer(["never"]) as srv:
        status, _, raw = raw_exchange(srv.base_url, "/v1/messages", body(broken))
    assert status.startswith("HTTP/1.1 400") and "toolu_1" in json.loads(raw)["error"]["message"]
