"""`RecordedStream` turns: the fake server writes the recorded body byte for byte (HTTP chunking
is transport, not body), and a cut variant closes the connection after exactly its prefix."""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from jupyter_toolagent.testing import FakeAnthropicServer, RecordedStream
from jupyter_toolagent.testing.recorded import encode_sse, parse_sse

# Bytes a re-encoder would not reproduce: a spaced ping, padding after the JSON, no final blank line.
ODD = (b'event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message",'
       b'"role":"assistant","content":[],"model":"x"}}   \n\nevent: ping\ndata: {"type": "ping"}\n\n'
       b'event: message_stop\ndata: {"type":"message_stop" }')


def post(server: FakeAnthropicServer) -> http.client.HTTPResponse:
    url = urlsplit(server.base_url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    body = json.dumps({"model": "x", "max_tokens": 5, "stream": True, "messages": [{"role": "user", "content": "hi"}]})
    connection.request("POST", "/v1/messages", body=body, headers={"x-api-key": "k", "content-type": "application/json"})
    return connection.getresponse()


def test_a_recorded_body_is_served_byte_for_byte() -> None:
    with FakeAnthropicServer(turns=[RecordedStream(ODD, name="odd")]) as server:
        response = post(server)
        assert response.status == 200 and response.getheader("content-type").startswith("text/event-stream")
        assert response.read() == ODD
        assert server.responses == [{"recorded": "odd", "bytes": len(ODD)}]


@pytest.mark.parametrize("at", [1, 40, len(ODD) // 2, len(ODD) - 1])
def test_a_cut_closes_the_connection_after_exactly_that_prefix(at: int) -> None:
    with FakeAnthropicServer(turns=[RecordedStream(ODD).cut(at)]) as server:
        response = post(server)
        with pytest.raises(http.client.IncompleteRead) as raised:
            response.read()
    assert raised.value.partial == ODD[:at]


def test_parse_sse_finds_each_event_and_its_bytes() -> None:
    events = parse_sse(ODD)
    assert [e.name for e in events] == ["message_start", "ping", "message_stop"]
    assert events[1].data == {"type": "ping"} and ODD[events[1].start:events[1].end].startswith(b"event: ping")
    assert parse_sse(encode_sse([{"type": "ping"}]))[0].data == {"type": "ping"}


def test_a_non_streaming_recording_is_served_as_the_stream_of_its_message(tmp_path: Path) -> None:
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "x", "stop_reason": "end_turn",
               "content": [{"type": "text", "text": "hello"}], "usage": {"input_tokens": 1, "output_tokens": 1}}
    path = tmp_path / "m.json"
    path.write_text(json.dumps(message))
    recorded = RecordedStream.from_file(path)
    assert recorded.derived
    names = [e.name for e in recorded.events()]
    assert names[0] == "message_start" and names[-1] == "message_stop" and "content_block_delta" in names
