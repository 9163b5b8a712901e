"""`McpServers`: the configured MCP servers of a session, as one `ToolSource`.

It holds every server's configuration and (once started) its connection, and answers
`tools()` — asked by the core before *every* model request — from the servers connected at
that moment: a server added in a later cell, or while a run is between two requests, is in the
next request; one that failed or exited is not (its calls get an error result that names it and
how it ended). ``ListMcpResources`` / ``ReadMcpResource`` are offered while any connected server
has resources.

Who may start what (SPEC §11): servers the person added (``%agent mcp add``, ``Agent(
mcp_servers=…)``) start at once or at the first run; servers from project files start only once
approved — by a click, or headless by an allow rule ``mcp__NAME`` or
``"enableProjectMcpServers": true``. A cloned repository does not start programs by itself.

Every child process is stopped by pid (process group included) at `remove`, `close` and at
interpreter exit (`atexit`), within a few seconds.
"""

from __future__ import annotations

import asyncio
import atexit
import threading
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Literal, Mapping, Sequence

from typing import TYPE_CHECKING

from ..core.tool import Tool
from . import loop
from .config import McpServerConfig, Source, parse_server
from .names import server_prefix, unique_names

if TYPE_CHECKING:  # the SDK and jsonschema load only once a server starts (an Agent without one pays nothing)
    from .connection import McpConnection
    from .tool import McpTool

Status = Literal["not started", "needs approval", "declined", "starting", "connected", "failed", "closed"]
CLOSE_TIMEOUT = 5.0


@dataclass
class ServerStatus:
    """One line of ``%agent mcp list``."""

    name: str
    source: str
    status: Status
    tools: int
    target: str
    error: str | None
    stderr_tail: list[str]
    pid: int | None


class McpServers:
    """The MCP servers of one session (or one `Agent`): configuration, connections, tools."""

    def __init__(self, servers: Iterable[McpServerConfig] = (), *, cwd: Path | None = None) -> None:
        self.cwd = Path(cwd) if cwd is not None else None
        self._configs: dict[str, McpServerConfig] = {}
        self._connections: dict[str, "McpConnection"] = {}
        self._approved: dict[str, bool] = {}
        self._lock = threading.Lock()
        self.problems: list[str] = []
        """Configuration and start problems, one line each, oldest first."""
        for config in servers:
            self._configs[config.name] = config
        _LIVE.add(self)

    # --- configuration ------------------------------------------------------------------------
    @classmethod
    def from_mapping(cls, servers: Mapping[str, Any], *, source: Source = "agent", cwd: Path | None = None) -> "McpServers":
        """``Agent(mcp_servers={NAME: {...}})``; a bad entry raises `McpConfigError`."""
        return cls([parse_server(name, entry, source) for name, entry in servers.items()], cwd=cwd)

    def configure(self, config: McpServerConfig) -> None:
        """Add (or replace, closing the old connection) one server's configuration."""
        if config.name in self._connections:
            self.remove(config.name)
        with self._lock:
            self._configs[config.name] = config

    def add_project_servers(self, configs: Iterable[McpServerConfig], problems: Iterable[str] = ()) -> None:
        """Servers from project files: known, not started (they wait for an approval). A server
        the person already added under the same name stays as it is."""
        for config in configs:
            existing = self._configs.get(config.name)
            if existing is not None and (not existing.from_project or existing == config):
                continue
            self.configure(config)
        for problem in problems:
            if problem not in self.problems:
                self.problems.append(problem)

    def names(self) -> list[str]:
        return list(self._configs)

    def config(self, name: str) -> McpServerConfig:
        return self._configs[name]

    def connection(self, name: str) -> "McpConnection | None":
        return self._connections.get(name)

    # --- approval of project servers --------------------------------------------------------------
    def needs_approval(self) -> list[McpServerConfig]:
        """Project servers not yet approved or declined."""
        return [c for c in self._configs.values()
                if c.from_project and c.name not in self._approved and c.name not in self._connections]

    def approve(self, name: str, allowed: bool = True) -> None:
        self._approved[name] = allowed

    def approve_by_policy(self, allow_rules: Iterable[str], enable_all: bool) -> None:
        """Headless approval (no one can click): a project server may start only when an allow
        rule names it (``mcp__NAME``) or the settings enable every project server."""
        from ..permissions.rules import parse_rule

        allowed = set()
        for text in allow_rules:
            try:
                allowed.add(parse_rule(text).tool)
            except Exception:  # noqa: BLE001 - rule syntax is reported where rules are checked
                continue
        for config in self.needs_approval():
            if enable_all or server_prefix(config.name) in allowed:
                self.approve(config.name)

    def _may_start(self, config: McpServerConfig) -> bool:
        return not config.from_project or self._approved.get(config.name, False)

    def load_project(self, cwd: Path, settings: Any = None) -> bool:
        """Read the project's servers (``.mcp.json``, the settings file); True when the settings
        enable every project server. Bad entries become problem lines, the rest load."""
        from .config import project_servers

        configs, problems, enable_all = project_servers(Path(cwd), settings)
        self.add_project_servers(configs, problems)
        return enable_all

    async def prepare_headless(self, cwd: Path, settings: Any, allow_rules: Iterable[str]) -> list[str]:
        """Before a run where nobody can click: load the project's servers, approve those an
        allow rule or the settings allow, start what may start. Returns new problem lines."""
        seen = len(self.problems)
        enable_all = self.load_project(cwd, settings)
        self.approve_by_policy(allow_rules, enable_all)
        await self.start_pending()
        return self.problems[seen:]

    # --- starting -----------------------------------------------------------------------------
    async def start(self, name: str) -> "McpConnection":
        """Start one server (on the MCP loop) and return once it is connected. Raises
        `McpServerGone` with one line naming the server and the problem."""
        return await loop.call(self._start_on_loop(name))

    def start_sync(self, name: str) -> "McpConnection":
        """`start` for synchronous code (``%agent mcp add``): blocks until connected or failed."""
        config = self._configs[name]
        return loop.wait(self._start_on_loop(name), config.start_timeout + 10.0)

    async def _start_on_loop(self, name: str) -> "McpConnection":
        from .connection import McpConnection, child_environment

        config = self._configs[name]
        existing = self._connections.get(name)
        if existing is not None and existing.state in ("connected", "starting"):
            return existing
        cwd = config.cwd or (str(self.cwd) if self.cwd is not None else None)
        connection = McpConnection(config, child_environment(dict(config.env)), cwd)
        self._connections[name] = connection
        await connection.start()
        return connection

    async def start_pending(self) -> list[str]:
        """Start (concurrently) every server that may start and has not; return one problem line
        per server that failed. Called before a run: servers start lazily, when first needed."""
        pending = [c.name for c in self._configs.values() if c.name not in self._connections and self._may_start(c)]
        problems: list[str] = []
        for config in self.needs_approval():
            text = (f"MCP server {config.name!r} ({config.source}) was not started: a server from a project file "
                    f"needs approval; allow it with --allow mcp__{config.name} or \"enableProjectMcpServers\": true")
            if text not in self.problems:
                problems.append(text)
                self.problems.append(text)
        if not pending:
            return problems
        from ..errors import McpServerGone

        results = await asyncio.gather(*(self.start(name) for name in pending), return_exceptions=True)
        for name, result in zip(pending, results):
            if isinstance(result, BaseException):
                text = str(result) if isinstance(result, McpServerGone) else f"MCP server {name!r}: {result}"
                problems.append(text)
                self.problems.append(text)
        return problems

    # --- the ToolSource -----------------------------------------------------------------------
    def tools(self) -> Sequence[Tool]:
        """The tools of the servers connected now (asked before every model request)."""
        connected = [c for c in list(self._connections.values()) if c.state == "connected"]
        listed: list[tuple["McpConnection", Any]] = [(c, t) for c in connected for t in c.tools]
        names = unique_names([(c.name, t.name) for c, t in listed])
        out: list[Tool] = []
        for (connection, spec), api_name in zip(listed, names):
            tool = self._tool_for(connection, spec, api_name)
            if tool is not None:
                out.append(tool)
        if any(c.has_resources for c in connected):
            from .resource_tools import ListMcpResources, ReadMcpResource

            out.extend([ListMcpResources(self), ReadMcpResource(self)])
        return out

    def _tool_for(self, connection: "McpConnection", spec: Any, api_name: str) -> "McpTool | None":
        """The `McpTool` of one listed tool; built once per listing (a validator compiles once)."""
        from .schema import SchemaError, compile_validator
        from .tool import McpTool

        key = (spec.name, api_name)
        if key in connection.tool_cache:
            return connection.tool_cache[key]
        schema = spec.input_schema if isinstance(spec.input_schema, dict) else {"type": "object"}
        try:
            validator = compile_validator(schema)
        except SchemaError as exc:
            problem = (f"MCP server {connection.name!r}: tool {spec.name!r} skipped, its input schema is invalid "
                       f"({exc.message})")
            if problem not in self.problems:
                self.problems.append(problem)
            connection.tool_cache[key] = None
            return None
        name = connection.name
        tool = McpTool(
            name=api_name, server=name, mcp_name=spec.name,
            description=spec.description or spec.title or f"The {spec.name} tool of the MCP server {name!r}.",
            schema=schema, validator=validator, annotations=spec.annotations, trust=connection.config.trust,
            timeout=connection.config.timeout, rule_group=server_prefix(name),
            connection=lambda: self._connections.get(name),
        )
        connection.tool_cache[key] = tool
        return tool

    # --- status and logs ----------------------------------------------------------------------
    def status(self) -> list[ServerStatus]:
        rows = []
        for name, config in self._configs.items():
            connection = self._connections.get(name)
            if connection is None:
                approved = self._approved.get(name)
                status: Status = ("declined" if approved is False else "needs approval"
                                  if config.from_project and not approved else "not started")
                rows.append(ServerStatus(name, config.source, status, 0, config.describe(), None, [], None))
                continue
            rows.append(ServerStatus(
                name, config.source, connection.state, len(connection.tools) if connection.state == "connected" else 0,
                config.describe(), connection.error, connection.process.last_stderr(5), connection.process.pid,
            ))
        return rows

    def log(self, name: str) -> str:
        connection = self._connections.get(name)
        if connection is None:
            return ""
        return "\n".join(connection.process.stderr)

    def pids(self) -> list[int]:
        return [c.process.pid for c in self._connections.values() if c.process.pid is not None]

    # --- stopping -----------------------------------------------------------------------------
    def remove(self, name: str) -> bool:
        """Forget a server and stop its process (by process group, within a few seconds)."""
        with self._lock:
            config = self._configs.pop(name, None)
            connection = self._connections.pop(name, None)
            self._approved.pop(name, None)
        if connection is not None:
            _close_now([connection])
        return config is not None

    def close(self) -> None:
        """Stop every server (``%unload_ext``, `Agent.close`, interpreter exit)."""
        with self._lock:
            connections = list(self._connections.values())
            self._connections.clear()
        _close_now(connections)

    async def aclose(self) -> None:
        with self._lock:
            connections = list(self._connections.values())
            self._connections.clear()
        await loop.call(_close_all(connections))


def _close_now(connections: list["McpConnection"]) -> None:
    if not connections:
        return
    try:
        if loop.running_on_mcp_loop():
            for c in connections:  # cannot wait for our own loop: stop the groups directly
                _kill(c)
            return
        loop.wait(_close_all(connections), CLOSE_TIMEOUT)
    except BaseException:
        for c in connections:
            _kill(c)
        raise


def _kill(connection: "McpConnection") -> None:
    from .stdio_transport import kill_group_now

    if connection.process.pid is not None:
        kill_group_now(connection.process.pid)


async def _close_all(connections: list["McpConnection"]) -> None:
    await asyncio.gather(*(c.close() for c in connections), return_exceptions=True)


_LIVE: "weakref.WeakSet[McpServers]" = weakref.WeakSet()


@atexit.register
def _stop_everything_at_exit() -> None:
    """Kernel shutdown: no server outlives the kernel (a bounded close, then SIGKILL)."""
    for servers in list(_LIVE):
        try:
            servers.close()
        except BaseException:  # noqa: BLE001 - at exit, kill what is left whatever happened
            for pid in servers.pids():
                from .stdio_transport import kill_group_now

                kill_group_now(pid)


__all__ = ["McpServers", "ServerStatus"]
