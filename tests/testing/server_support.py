"""Helpers of the fake server tests."""

from __future__ import annotations

from typing import Any

MODEL = "claude-sonnet-5-5"
KEY = "sk-ant-api03-" + "Zx9" * 10

def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def body(messages: list[dict[str, Any]] | None = None, **kw: Any) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 256, "messages": messages or [user("hi")], **kw}


def raw_exchange(base_url: str, path: str, payload: Any, headers: dict[str, str] | None = None,
                 method: str = "POST", timeout: float = 10.0) -> tuple[str, dict[str, str], bytes]:
    """One request over a plain socket with ``Connection: close``; the response unparsed:
    (status line, headers, body bytes exactly as sent — chunk framing included)."""
    import json
    import socket
    from urllib.parse import urlsplit

    url = urlsplit(base_url)
    data = json.dumps(payload).encode() if payload is not None else b""
    lines = [f"{method} {path} HTTP/1.1", f"Host: {url.netloc}", "Connection: close",
             "Content-Type: application/json", f"Content-Length: {len(data)}"]
    lines += [f"{k}: {v}" for k, v in (headers if headers is not None else {"x-api-key": KEY}).items()]
    with socket.create_connection((url.hostname, url.port), timeout=timeout) as sock:
        sock.sendall("\r\n".join(lines).encode() + b"\r\n\r\n" + data)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    status, *header_lines = head.decode().split("\r\n")
    parsed = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        parsed[name.strip().lower()] = value.strip()
    return status, parsed, body


def dechunk(body: bytes) -> list[bytes]:
    """The chunks of a chunked body; asserts the terminating chunk is there."""
    chunks = []
    while True:
        size_line, _, rest = body.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            assert rest == b"\r\n", rest
            return chunks
        chunks.append(rest[:size])
        assert rest[size:size + 2] == b"\r\n"
        body = rest[size + 2:]
