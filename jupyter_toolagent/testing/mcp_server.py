"""A small MCP server for lessons and tests, built with the official SDK's server side.

Run it over stdio (what ``%agent mcp add demo -- python -m jupyter_toolagent.testing.mcp_server``
starts) or streamable HTTP on 127.0.0.1 (``--http PORT``; ``0`` picks a free port and prints
``listening on http://127.0.0.1:PORT/mcp`` on stderr). Its tools cover what an MCP client must
handle:

* ``add`` (read-only hint) and ``echo`` — plain text and structured results;
* ``count_slowly`` — progress notifications, one per step;
* ``sleep`` — a slow call, for timeouts and Stop (it notes a cancellation on stderr);
* ``chart`` — an image result;
* ``fail`` — a result with ``isError``;
* ``crash`` — the server process exits in the middle of the call;
* ``delete_everything`` — a destructive, open-world hint (nothing is deleted);
* resources ``demo://readme`` (text) and ``demo://logo.png`` (binary).

``--tools add,echo`` keeps only some tools; ``--no-resources`` offers none; ``--hang-start``
never answers the handshake; ``--exit-at-start`` exits before it.
"""

import argparse
import asyncio
import base64
import os
import sys
import zlib
from typing import Any

from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.types import ToolAnnotations

PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def _png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A solid-colour PNG (no imaging library needed)."""
    import struct

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    row = b"\x00" + bytes(rgb) * width
    raw = row * height
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def build_server(tools: set[str] | None = None, resources: bool = True) -> MCPServer:
    """The `MCPServer` with the demo tools (all, or only the names in ``tools``)."""
    server = MCPServer("toolagent-demo", instructions="A demo server for jupyter_toolagent lessons and tests.")

    def offer(name: str) -> bool:
        return tools is None or name in tools

    if offer("add"):
        @server.tool(annotations=ToolAnnotations(read_only_hint=True))
        def add(a: int, b: int) -> int:
            """Add two integers."""
            return a + b

    if offer("echo"):
        @server.tool(annotations=ToolAnnotations(read_only_hint=True))
        def echo(text: str, times: int = 1) -> str:
            """Return the text, repeated `times` times."""
            return text * times

    if offer("count_slowly"):
        @server.tool(annotations=ToolAnnotations(read_only_hint=True))
        async def count_slowly(steps: int, ctx: Context, delay: float = 0.05) -> str:
            """Count to `steps`, reporting progress after each step."""
            for i in range(1, steps + 1):
                await asyncio.sleep(delay)
                await ctx.report_progress(i, steps, f"step {i} of {steps}")
            return f"counted to {steps}"

    if offer("sleep"):
        @server.tool(annotations=ToolAnnotations(read_only_hint=True))
        async def sleep(seconds: float) -> str:
            """Wait `seconds` seconds, then answer."""
            try:
                await asyncio.sleep(seconds)
            except asyncio.CancelledError:
                print(f"sleep({seconds}) was cancelled by the client", file=sys.stderr, flush=True)
                raise
            return f"slept {seconds} s"

    if offer("chart"):
        @server.tool(annotations=ToolAnnotations(read_only_hint=True))
        def chart(color: str = "red") -> Image:
            """A small chart, as a PNG image."""
            rgb = {"red": (220, 40, 40), "green": (40, 180, 60), "blue": (40, 80, 220)}.get(color, (120, 120, 120))
            return Image(data=_png(8, 4, rgb), format="png")

    if offer("fail"):
        @server.tool()
        def fail(message: str = "it went wrong") -> str:
            """Always fails, with an error result."""
            raise ValueError(message)

    if offer("crash"):
        @server.tool()
        async def crash(code: int = 3) -> str:
            """Make the server process exit in the middle of the call."""
            print(f"crashing with exit code {code}", file=sys.stderr, flush=True)
            os._exit(code)

    if offer("delete_everything"):
        @server.tool(annotations=ToolAnnotations(destructive_hint=True, open_world_hint=True))
        def delete_everything(target: str) -> str:
            """Pretend to delete everything under `target` (nothing is deleted)."""
            return f"pretended to delete {target}"

    if resources:
        @server.resource("demo://readme", name="readme", description="What this server is.", mime_type="text/plain")
        def readme() -> str:
            return "The jupyter_toolagent demo MCP server: add, echo, count_slowly, sleep, chart, fail, crash."

        @server.resource("demo://logo.png", name="logo", description="A 1x1 PNG.", mime_type="image/png")
        def logo() -> bytes:
            return PNG_1X1

    return server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on 127.0.0.1:PORT")
    parser.add_argument("--tools", help="comma-separated tool names to offer (default: all)")
    parser.add_argument("--no-resources", action="store_true")
    parser.add_argument("--hang-start", action="store_true", help="never answer the handshake")
    parser.add_argument("--exit-at-start", type=int, metavar="CODE", help="exit with CODE before the handshake")
    args = parser.parse_args(argv)
    if args.exit_at_start is not None:
        print(f"demo server refuses to start (exit {args.exit_at_start})", file=sys.stderr, flush=True)
        sys.exit(args.exit_at_start)
    if args.hang_start:
        print("demo server hangs before the handshake", file=sys.stderr, flush=True)
        import time

        while True:
            time.sleep(3600)
    tools = set(args.tools.split(",")) if args.tools else None
    server = build_server(tools, resources=not args.no_resources)
    if args.http is None:
        server.run("stdio")
        return
    _serve_http(server, args.http)


def _serve_http(server: Any, port: int) -> None:
    import socket

    import anyio
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)  # connections queue from now on, before the line below says where to connect
    print(f"listening on http://127.0.0.1:{sock.getsockname()[1]}/mcp", file=sys.stderr, flush=True)
    app = server.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning", lifespan="on")

    async def serve() -> None:
        await uvicorn.Server(config).serve(sockets=[sock])

    anyio.run(serve)


if __name__ == "__main__":
    main()
