"""The stdio transport: a server child process, its pid, its stderr, and a bounded stop.

The SDK's own ``stdio_client`` hides the child process, but the product must own it: it is a
child of the kernel that has to be stopped *by pid* (process group included) at ``%agent mcp
remove``, ``%unload_ext`` and kernel shutdown — also from an ``atexit`` handler when no event
loop runs any more — and its stderr must be kept (``%agent mcp log``, the last lines of a
failure) instead of being spilled into the cell. So this module spawns the child itself and
hands the SDK's `ClientSession` the same pair of message streams ``stdio_client`` would
(newline-delimited JSON-RPC, parsed by the SDK's own message adapter).

Stopping follows the MCP lifecycle: close stdin, give the server a moment, then SIGTERM and
finally SIGKILL to its whole process group — at most `STOP_BUDGET` seconds in all.
"""

from __future__ import annotations

import collections
import contextlib
import os
import signal
import time
from dataclasses import dataclass, field
from typing import Any, AsyncIterator

import anyio
import mcp_types
from mcp.shared.message import SessionMessage

STDIN_GRACE = 1.0
"""Seconds a server gets to exit by itself once its stdin is closed."""
TERM_GRACE = 1.5
"""Seconds between SIGTERM and SIGKILL to the process group."""
STOP_BUDGET = STDIN_GRACE + TERM_GRACE + 1.0
STDERR_LINES = 2000
"""How many stderr lines of a server are kept (``%agent mcp log``)."""


SPAWNED: collections.deque[int] = collections.deque(maxlen=10_000)
"""The pid of every server child this process started (a check that none outlives its stop)."""


@dataclass
class ServerProcess:
    """What the product knows about one child server process."""

    pid: int | None = None
    returncode: int | None = None
    stderr: collections.deque[str] = field(default_factory=lambda: collections.deque(maxlen=STDERR_LINES))

    def last_stderr(self, n: int = 5) -> list[str]:
        return [line for line in list(self.stderr)[-n:] if line.strip()]

    def exit_text(self) -> str:
        """How the process ended, in words: ``exited with code 3`` / ``was killed by SIGKILL``."""
        code = self.returncode
        if code is None:
            return "is still running"
        if code < 0:
            try:
                return f"was killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"was killed by signal {-code}"
        return f"exited with code {code}"


def kill_group_now(pid: int) -> None:
    """SIGKILL a server's process group at once (the last resort at interpreter exit)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def group_alive(pid: int) -> bool:
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.asynccontextmanager
async def stdio_transport(command: str, args: list[str], env: dict[str, str], cwd: str | None,
                          proc: ServerProcess) -> AsyncIterator[tuple[Any, Any]]:
    """Spawn ``command args`` in its own session (so its group can be signalled as one) and
    yield ``(read_stream, write_stream)`` for `ClientSession`. ``proc`` is filled in as the
    child runs (pid, stderr lines, exit code); leaving the context stops the child."""
    process = await anyio.open_process([command, *args], env=env, cwd=cwd, start_new_session=True)
    proc.pid = process.pid
    SPAWNED.append(process.pid)
    read_send, read_recv = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_send, write_recv = anyio.create_memory_object_stream[SessionMessage](0)

    async def read_stdout() -> None:
        assert process.stdout is not None
        buffer = b""
        async with read_send:
            try:
                async for chunk in process.stdout:
                    buffer += chunk
                    *lines, buffer = buffer.split(b"\n")
                    for line in lines:
                        if not line.strip():
                            continue
                        try:
                            message: SessionMessage | Exception = SessionMessage(
                                mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
                        except ValueError as exc:  # a malformed line reaches the session as an error
                            message = exc
                        await read_send.send(message)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError):
                pass

    async def read_stderr() -> None:
        assert process.stderr is not None
        buffer = b""
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError):
            async for chunk in process.stderr:
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                proc.stderr.extend(line.decode("utf-8", "replace") for line in lines)
        if buffer:
            proc.stderr.append(buffer.decode("utf-8", "replace"))

    async def write_stdin() -> None:
        assert process.stdin is not None
        async with write_recv:
            try:
                async for message in write_recv:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await process.stdin.send(data.encode())
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                await read_send.aclose()

    async def watch_exit() -> None:
        proc.returncode = await process.wait()

    async with anyio.create_task_group() as tg:
        tg.start_soon(read_stdout)
        tg.start_soon(read_stderr)
        tg.start_soon(write_stdin)
        tg.start_soon(watch_exit)
        try:
            yield read_recv, write_send
        finally:
            with anyio.CancelScope(shield=True):
                await _stop(process, proc)
            tg.cancel_scope.cancel()


async def _stop(process: Any, proc: ServerProcess) -> None:
    """Close stdin, wait, SIGTERM the group, wait, SIGKILL the group: bounded by `STOP_BUDGET`."""
    with contextlib.suppress(Exception):
        await process.stdin.aclose()
    deadline = time.monotonic() + STDIN_GRACE
    while process.returncode is None and time.monotonic() < deadline:
        await anyio.sleep(0.02)
    for sig, grace in ((signal.SIGTERM, TERM_GRACE), (signal.SIGKILL, 1.0)):
        if process.returncode is not None and not group_alive(process.pid):
            break
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)
        deadline = time.monotonic() + grace
        while (process.returncode is None or group_alive(process.pid)) and time.monotonic() < deadline:
            await anyio.sleep(0.02)
    proc.returncode = process.returncode
    with contextlib.suppress(Exception):
        await process.aclose()
