"""One MCP server connection: start, handshake, list, call, notice an exit, stop.

Everything here runs on the MCP loop (`loop.mcp_loop`). The SDK's transport and session are
async context managers bound to the task that enters them, so one *owner task* per connection
enters them, publishes the session, and then waits until it is told to stop or the server goes
away; calls from other tasks use the published session (the SDK correlates responses by id).

States: ``starting`` → ``connected`` → ``closed``, or ``failed`` with `error` (one line naming
what happened: the program is missing, it exited at start, the handshake timed out, it exited
later …) and, for a child process, its last stderr lines.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import Any, Callable, Literal, Mapping

from ..errors import McpServerGone
from ..core.secrets import is_secret_name
from .config import McpServerConfig
from .stdio_transport import STOP_BUDGET, ServerProcess, stdio_transport

State = Literal["starting", "connected", "failed", "closed"]
ProgressCallback = Callable[[float, "float | None", "str | None"], None]


class McpConnection:
    """A live connection to one server, owned by one task on the MCP loop."""

    def __init__(self, config: McpServerConfig, env: dict[str, str], cwd: str | None) -> None:
        self.config = config
        self.name = config.name
        self.state: State = "starting"
        self.error: str | None = None
        self.process = ServerProcess()
        self.tools: list[Any] = []
        """The server's `mcp.types.Tool` listing, as of the handshake."""
        self.resources: list[Any] = []
        self.tool_cache: dict[tuple[str, str], Any] = {}
        """The `McpTool` built for each listed tool (by `McpServers`), so schemas compile once."""
        self.has_resources = False
        self.server_info: Any = None
        self._env, self._cwd = env, cwd
        self._session: Any = None
        self._ready: asyncio.Future[None] | None = None
        self._stop: asyncio.Event | None = None
        self._owner: asyncio.Task[None] | None = None
        self.on_change: Callable[[], None] = lambda: None
        """Called (on the MCP loop) whenever the state changes: the tool list is rebuilt."""

    # --- lifecycle --------------------------------------------------------------------------
    async def start(self) -> None:
        """Connect and list; return once connected. Raises `McpServerGone` with one line."""
        loop = asyncio.get_running_loop()
        self._ready, self._stop = loop.create_future(), asyncio.Event()
        self._owner = asyncio.create_task(self._own(), name=f"mcp-{self.name}")
        try:
            await asyncio.wait_for(asyncio.shield(self._ready), self.config.start_timeout)
        except asyncio.TimeoutError:
            self._fail(f"the handshake did not complete within its start timeout "
                       f"({self.config.start_timeout:g} s)")
            await self.close()
            raise McpServerGone(self.describe_failure()) from None
        except McpServerGone:
            raise
        except asyncio.CancelledError:
            self._fail("its start was interrupted")
            await self.close()
            raise

    async def _own(self) -> None:
        from mcp import ClientSession

        assert self._ready is not None and self._stop is not None
        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport())
                session = await stack.enter_async_context(ClientSession(read, write, message_handler=self._on_message))
                init = await session.initialize()
                self.server_info = init.server_info
                self.tools = await _all_tools(session)
                caps = init.capabilities
                if caps is not None and caps.resources is not None:
                    self.resources = await _all_resources(session)
                    self.has_resources = bool(self.resources)
                self._session = session
                self.state = "connected"
                self.on_change()
                if not self._ready.done():
                    self._ready.set_result(None)
                await self._until_stopped_or_gone()
        except asyncio.CancelledError:
            if self.state != "failed":
                self.state = "closed"
        except BaseException as exc:  # noqa: BLE001 - every failure becomes the server's state
            if self.state not in ("failed", "closed"):
                self._fail(await self._start_problem(exc))
        finally:
            self._session = None
            if self.state == "connected":
                self.state = "closed"
            if not self._ready.done():
                self._ready.set_exception(McpServerGone(self.describe_failure()))
            self.on_change()

    def _transport(self) -> Any:
        if self.config.transport == "stdio":
            return stdio_transport(self.config.command, list(self.config.args), self._env, self._cwd, self.process)
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        client = httpx2.AsyncClient(headers=dict(self.config.headers), timeout=httpx2.Timeout(30.0, read=300.0))
        return _closing(client, streamable_http_client(self.config.url, http_client=client))

    async def _until_stopped_or_gone(self) -> None:
        assert self._stop is not None
        while not self._stop.is_set():
            if self.config.transport == "stdio" and self.process.returncode is not None:
                self._fail(f"the server {self.process.exit_text()}")
                return
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stop.wait(), 0.05)

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            self.process.stderr.append(f"[client] malformed message from the server: {message}")

    async def close(self) -> None:
        """Stop the connection (and the child process, by its process group)."""
        if self._stop is not None:
            self._stop.set()
        owner = self._owner
        if owner is not None and not owner.done():
            try:
                await asyncio.wait_for(asyncio.shield(owner), STOP_BUDGET + 0.5)
            except (asyncio.TimeoutError, Exception):
                owner.cancel()
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(owner, 1.0)
        if self.state in ("starting", "connected"):
            self.state = "closed"
        if self.process.pid is not None:
            from .stdio_transport import kill_group_now

            kill_group_now(self.process.pid)  # no-op when the group is already gone

    # --- calls --------------------------------------------------------------------------------
    async def call_tool(self, tool: str, arguments: dict[str, Any], progress: ProgressCallback | None,
                        timeout: float) -> Any:
        """``tools/call``; raises `McpServerGone` when the server is (or goes) away."""
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        session = self._require()

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            if progress is not None:
                progress(value, total, message)

        try:
            return await session.call_tool(tool, arguments, read_timeout_seconds=timeout,
                                           progress_callback=on_progress if progress is not None else None)
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:
                raise TimeoutError(f"MCP server {self.name!r} did not answer {tool} within its timeout "
                                   f"({timeout:g} s); the call was cancelled") from None
            if exc.code == CONNECTION_CLOSED:
                raise McpServerGone(await self._gone_text(f"during the call to {tool}")) from None
            raise

    async def read_resource(self, uri: str) -> Any:
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED

        session = self._require()
        try:
            return await asyncio.wait_for(session.read_resource(uri), self.config.timeout)
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                raise McpServerGone(await self._gone_text(f"while reading {uri}")) from None
            raise

    def _require(self) -> Any:
        if self._session is None or self.state != "connected":
            raise McpServerGone(self.describe_failure())
        return self._session

    # --- failure texts --------------------------------------------------------------------------
    def _fail(self, problem: str) -> None:
        self.state = "failed"
        self.error = problem

    async def _gone_text(self, when: str) -> str:
        """Why the connection closed under a call: wait a moment for the exit code to arrive."""
        if self.config.transport == "stdio":
            for _ in range(50):
                if self.process.returncode is not None:
                    break
                await asyncio.sleep(0.01)
            if self.process.returncode is not None:
                self._fail(f"the server {self.process.exit_text()} {when}")
            else:
                self._fail(f"the server closed the connection {when}")
        else:
            self._fail(f"the server closed the connection {when}")
        return self.describe_failure()

    async def _start_problem(self, exc: BaseException) -> str:
        if isinstance(exc, FileNotFoundError):
            return f"cannot start: command not found: {self.config.command!r}"
        if isinstance(exc, PermissionError):
            return f"cannot start: permission denied running {self.config.command!r}"
        for _ in range(50):  # a child that exited at start: its exit code explains it
            if self.config.transport != "stdio" or self.process.returncode is not None:
                break
            await asyncio.sleep(0.01)
        if self.config.transport == "stdio" and self.process.returncode not in (None, 0):
            return f"the server {self.process.exit_text()} before the handshake completed"
        text = _exception_text(exc)
        if self.config.transport == "http":
            return f"cannot connect to {self.config.url}: {text}"
        return f"the handshake failed: {text}"

    def describe_failure(self) -> str:
        """``MCP server 'x' exited with code 3 … Last stderr: …`` (one line)."""
        problem = self.error or ("was removed" if self.state == "closed" else "is not connected")
        text = f"MCP server {self.name!r}: {problem}"
        tail = self.process.last_stderr(3)
        if tail:
            text += ". Last stderr: " + " | ".join(line.strip()[:200] for line in tail)
        return text


def _exception_text(exc: BaseException) -> str:
    """The innermost meaningful message of an exception (task groups wrap them in groups)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]  # one line (pydantic's run on)
    return f"{type(exc).__name__}: {text}" if type(exc).__name__ not in text else text


@contextlib.asynccontextmanager
async def _closing(client: Any, transport: Any) -> Any:
    async with client:
        async with transport as streams:
            yield streams


async def _all_tools(session: Any) -> list[Any]:
    return await _all_pages(session.list_tools, "tools")


async def _all_resources(session: Any) -> list[Any]:
    return await _all_pages(session.list_resources, "resources")


async def _all_pages(list_page: Callable[..., Any], field: str) -> list[Any]:
    """Every item of a paginated MCP listing (``tools/list``, ``resources/list``), following
    ``next_cursor`` — at most 100 pages, so a server that paginates forever cannot hang the start."""
    from mcp.types import PaginatedRequestParams

    items: list[Any] = []
    cursor = None
    for _ in range(100):
        result = await list_page(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        items.extend(getattr(result, field))
        cursor = result.next_cursor
        if not cursor:
            break
    return items


def child_environment(extra: Mapping[str, str]) -> dict[str, str]:
    """The environment a server child gets: the kernel's variables minus every secret-looking
    one (API keys, tokens, passwords: SPEC §5.6), plus the server's own ``env`` — a server that
    needs a token is given it by name in its configuration, nothing more."""
    base = {k: v for k, v in os.environ.items() if not is_secret_name(k)}
    return {**base, **extra}
