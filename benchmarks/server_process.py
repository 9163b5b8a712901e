"""The fake Anthropic server in a child process, for timed comparisons.

In the benchmark's own process the server's threads would take the GIL from the client being
measured, and every runner's time would carry the server's CPU cost. The real API is on
another machine; a child process (its own interpreter, its own core on a two-core machine) is
the nearest stand-in. The scripted conversation is named by `SCENARIOS` key and parameters,
because a closure cannot be sent to another interpreter. The child is stopped by its pid.

The server's connections must have ``TCP_NODELAY``: the fake server writes every SSE event as
its own small send, and with Nagle's algorithm on, each response waits on the client's delayed
ACK (about 40 ms a request on Linux) — a cost of the stand-in, not of any client, which would
hide the clients' differences behind it. The child checks the server's request handlers and
turns it on where they do not (`Served.note` says which).
"""

from __future__ import annotations

import contextlib
import importlib
import multiprocessing
import socketserver
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from . import runners

SCENARIOS: dict[str, Callable[..., Callable[[dict[str, Any]], Any]]] = {
    "fan_out": runners.fan_out,
    "chain": runners.chain,
}

HANDLER_MODULES = ("jupyter_toolagent.testing.fake_server", "jupyter_toolagent.testing._http")


@dataclass(frozen=True)
class Served:
    base_url: str
    nodelay_by: str
    """``server`` (the fake server sets TCP_NODELAY itself) or ``benchmark`` (set here)."""

    @property
    def note(self) -> str:
        who = "as the fake server sets it" if self.nodelay_by == "server" else "set by the benchmark"
        return (f"The fake server ran in a child process, with TCP_NODELAY on its sockets ({who}; without it every "
                "response stalls ~40 ms on Nagle's algorithm + delayed ACK, for every client alike).")


def _ensure_no_delay() -> str:
    """Make the fake server's request handlers set TCP_NODELAY; say who did."""
    handlers: list[type] = []
    for name in HANDLER_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        handlers += [obj for obj in vars(module).values()
                     if isinstance(obj, type) and issubclass(obj, socketserver.StreamRequestHandler)
                     and obj.__module__ == module.__name__]
    if handlers and all(getattr(h, "disable_nagle_algorithm", False) for h in handlers):
        return "server"
    for handler in handlers:
        handler.disable_nagle_algorithm = True  # StreamRequestHandler.setup() then sets TCP_NODELAY
    return "benchmark"


def _serve(scenario: str, params: dict[str, Any], server_options: dict[str, Any], ready: Any) -> None:
    from jupyter_toolagent.testing import FakeAnthropicServer

    try:
        nodelay_by = _ensure_no_delay()
        server = FakeAnthropicServer(turns=SCENARIOS[scenario](**params), **server_options).start()
    except BaseException as exc:  # tell the parent instead of leaving it waiting
        ready.put(("error", f"{type(exc).__name__}: {exc}", ""))
        raise
    ready.put(("ok", server.base_url, nodelay_by))
    threading.Event().wait()  # until the parent terminates this process


@contextlib.contextmanager
def fake_server_process(scenario: str, *, startup_timeout: float = 60.0,
                        server_options: dict[str, Any] | None = None, **params: Any) -> Iterator[Served]:
    """Run ``SCENARIOS[scenario](**params)`` on a fake server in a child; yield where it listens."""
    context = multiprocessing.get_context("spawn")
    ready = context.Queue()
    process = context.Process(target=_serve, args=(scenario, params, server_options or {}, ready),
                              name=f"fake-anthropic-{scenario}", daemon=True)
    process.start()
    try:
        status, value, nodelay_by = ready.get(timeout=startup_timeout)
        if status != "ok":
            raise RuntimeError(f"the fake server process failed to start: {value}")
        yield Served(value, nodelay_by)
    finally:
        process.terminate()
        process.join(5)
        if process.is_alive():
            process.kill()
            process.join(5)
        ready.close()
