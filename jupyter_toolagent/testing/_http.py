"""The HTTP/1.1 plumbing of the fake server: read a request, write JSON, SSE chunks, or a cut.

No decisions are made here — `FakeAnthropicServer._serve` decides what to answer; this module
only knows how to put it on the wire the way the API does (chunked SSE, one event per chunk,
``TCP_NODELAY`` so small writes are not held back by Nagle's algorithm).
"""

from __future__ import annotations

import json
import socket
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .fake_server import FakeAnthropicServer


class _StreamBroken(Exception):
    """The client went away, or the server is stopping, while a response was written."""


class _Handler(BaseHTTPRequestHandler):
    """Reads a request, lets the server answer it, writes what it says (no logic here)."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # TCP_NODELAY on every accepted connection
    server_version = "FakeAnthropic/1.0"
    sys_version = ""
    server: "_HTTPServer"

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read `requests`
        pass

    def setup(self) -> None:
        super().setup()
        self.server.app._connection_opened(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass
        finally:
            self.server.app._connection_closed(self.connection)

    response_started = False

    def do_POST(self) -> None:
        self.response_started = False
        try:
            self.server.app._serve(self)
        except _StreamBroken:
            self.close_connection = True
        except Exception as exc:  # a bug in the server or a script: answer instead of hanging
            self.close_connection = True
            if not self.response_started:
                message = f"fake server error: {type(exc).__name__}: {exc}"
                body = {"type": "error", "error": {"type": "api_error", "message": message}}
                self.send_json(500, body, "req_fake_server_error", (("x-should-retry", "false"),))

    do_GET = do_PUT = do_DELETE = do_PATCH = do_POST

    # --- reading -----------------------------------------------------------------------------
    def read_body(self) -> bytes:
        if "chunked" in (self.headers.get("transfer-encoding") or "").lower():
            parts: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline().strip():
                        pass
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("content-length") or 0))

    # --- writing -----------------------------------------------------------------------------
    def send_json(self, status: int, body: Any, request_id: str, headers: tuple[tuple[str, str], ...] = ()) -> None:
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        self.response_started = True
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", request_id)
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def start_stream(self, request_id: str, *, status: int = 200,
                     content_type: str = "text/event-stream; charset=utf-8") -> None:
        self.response_started = True
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", request_id)
        self.end_headers()

    def send_event(self, name: str, payload: dict[str, Any]) -> None:
        data = f"event: {name}\ndata: {json.dumps(payload, ensure_ascii=False, separators=(',', ':'))}\n\n"
        encoded = data.encode("utf-8")
        try:
            self.wfile.write(b"%X\r\n%s\r\n" % (len(encoded), encoded))
        except OSError as exc:
            raise _StreamBroken(str(exc)) from exc

    def send_chunk(self, data: bytes) -> None:
        """Body bytes as they are (one HTTP chunk)."""
        if not data:
            return
        try:
            self.wfile.write(b"%X\r\n%s\r\n" % (len(data), data))
        except OSError as exc:
            raise _StreamBroken(str(exc)) from exc

    def end_stream(self) -> None:
        try:
            self.wfile.write(b"0\r\n\r\n")
        except OSError as exc:
            raise _StreamBroken(str(exc)) from exc

    def cut(self) -> None:
        """Drop the connection in the middle of the body (no terminating chunk)."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    app: "FakeAnthropicServer"

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hung up mid-response is normal here
