"""MCP server configuration: Claude Code's ``mcpServers`` shape, checked where it enters.

One entry is ``{"command": …, "args": […], "env": {…}}`` (stdio) or ``{"type": "http", "url":
…, "headers": {…}}`` (streamable HTTP), plus this product's own keys: ``trust`` (believe the
server's read-only hints), ``timeout`` (seconds per call, default 120) and ``startTimeout``
(seconds for the process to start and finish the handshake, default 30). A mistake — an unknown
key, a missing command, a URL that is not http(s) — is one `McpConfigError` line naming the
server and the problem; the other servers are unaffected.

Where an entry came from matters: servers from a project file (``.mcp.json``, the project's
``.toolagent/settings.json``) belong to whoever wrote the repository, so they start only once
the person approves them (`McpServers`); ``%agent mcp add`` and ``Agent(mcp_servers=…)`` are the
person's own.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Mapping

from ..errors import McpConfigError

Source = Literal["user", "agent", ".mcp.json", "settings"]
PROJECT_SOURCES: frozenset[str] = frozenset({".mcp.json", "settings"})

DEFAULT_CALL_TIMEOUT = 120.0
DEFAULT_START_TIMEOUT = 30.0

_COMMON_KEYS = {"type", "trust", "timeout", "startTimeout", "defer", "description"}
_STDIO_KEYS = _COMMON_KEYS | {"command", "args", "env", "cwd"}
_HTTP_KEYS = _COMMON_KEYS | {"url", "headers"}
_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


@dataclass(frozen=True)
class McpServerConfig:
    """One server, validated. ``transport`` is ``stdio`` or ``http``."""

    name: str
    transport: Literal["stdio", "http"]
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    trust: bool = False
    timeout: float = DEFAULT_CALL_TIMEOUT
    start_timeout: float = DEFAULT_START_TIMEOUT
    defer: bool | None = None
    """Reserved for deferred tool loading (sent by name only until searched for)."""
    source: Source = "user"

    @property
    def from_project(self) -> bool:
        return self.source in PROJECT_SOURCES

    def describe(self) -> str:
        """The command line or URL, for ``%agent mcp list`` and the approval question."""
        if self.transport == "http":
            return self.url
        import shlex

        return shlex.join([self.command, *self.args])


def parse_server(name: str, raw: Any, source: Source = "user") -> McpServerConfig:
    """Validate one ``mcpServers`` entry. Raises `McpConfigError` (one line, naming ``name``)."""

    def bad(problem: str) -> McpConfigError:
        return McpConfigError(f"MCP server {name!r} ({source}): {problem}")

    if not isinstance(name, str) or not _NAME.match(name):
        raise McpConfigError(f"MCP server name {name!r} ({source}): use 1-64 letters, digits, '_', '-' or '.'")
    if not isinstance(raw, Mapping):
        raise bad(f"the entry must be a JSON object, not {type(raw).__name__}")
    kind = raw.get("type", "http" if "url" in raw else "stdio")
    if kind in ("streamable-http", "streamableHttp"):
        kind = "http"
    if kind not in ("stdio", "http"):
        raise bad(f"unknown type {kind!r} (expected 'stdio' or 'http'; the older 'sse' transport is not supported)")
    allowed = _STDIO_KEYS if kind == "stdio" else _HTTP_KEYS
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise bad(f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} "
                  f"(a {kind} server takes: {', '.join(sorted(allowed))})")
    common = dict(
        trust=_bool(raw, "trust", bad),
        timeout=_seconds(raw, "timeout", DEFAULT_CALL_TIMEOUT, bad),
        start_timeout=_seconds(raw, "startTimeout", DEFAULT_START_TIMEOUT, bad),
        defer=_bool(raw, "defer", bad) if "defer" in raw else None,
        source=source,
    )
    if kind == "stdio":
        command = raw.get("command")
        if not isinstance(command, str) or not command.strip():
            raise bad("missing 'command' (the program that starts the server)")
        args = raw.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise bad("'args' must be a list of strings")
        cwd = raw.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            raise bad("'cwd' must be a string")
        # `common` holds the fields checked above, each of its own type (a dict of mixed values to mypy)
        return McpServerConfig(name, "stdio", command=command, args=tuple(args),
                               env=_str_map(raw, "env", bad), cwd=cwd, **common)  # type: ignore[arg-type]
    url = raw.get("url")
    if not isinstance(url, str) or not re.match(r"^https?://[^\s/]+", url):
        raise bad(f"'url' must be an http:// or https:// URL, not {url!r}")
    # as above: `common`'s values are typed one by one, not as a dict
    return McpServerConfig(name, "http", url=url, headers=_str_map(raw, "headers", bad), **common)  # type: ignore[arg-type]


def parse_servers(raw: Any, source: Source) -> tuple[list[McpServerConfig], list[str]]:
    """Every valid entry of an ``mcpServers`` object, and one problem line per bad one."""
    if not isinstance(raw, Mapping):
        return [], [f"mcpServers ({source}) must be a JSON object of servers, not {type(raw).__name__}"]
    servers: list[McpServerConfig] = []
    problems: list[str] = []
    for name, entry in raw.items():
        try:
            servers.append(parse_server(name, entry, source))
        except McpConfigError as exc:
            problems.append(str(exc))
    return servers, problems


def project_file_servers(cwd: Path) -> tuple[list[McpServerConfig], list[str]]:
    """The servers of ``cwd/.mcp.json`` (Claude Code's project file), with problem lines."""
    path = Path(cwd) / ".mcp.json"
    if not path.is_file():
        return [], []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return [], [f"{path}: not valid JSON ({exc})"]
    if not isinstance(data, Mapping) or set(data) - {"mcpServers"}:
        extra = sorted(set(data) - {"mcpServers"}) if isinstance(data, Mapping) else []
        return [], [f"{path}: expected {{\"mcpServers\": {{…}}}}" + (f"; unknown keys {extra}" if extra else "")]
    return parse_servers(data.get("mcpServers", {}), ".mcp.json")


def _bool(raw: Mapping[str, Any], key: str, bad: Any) -> bool:
    value = raw.get(key, False)
    if not isinstance(value, bool):
        raise bad(f"{key!r} must be true or false, not {value!r}")
    return value


def _seconds(raw: Mapping[str, Any], key: str, default: float, bad: Any) -> float:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise bad(f"{key!r} must be a positive number of seconds, not {value!r}")
    return float(value)


def _str_map(raw: Mapping[str, Any], key: str, bad: Any) -> dict[str, str]:
    value = raw.get(key, {})
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise bad(f"{key!r} must be an object of strings")
    return dict(value)


def project_servers(cwd: Path, settings: Any = None) -> tuple[list[McpServerConfig], list[str], bool]:
    """The project's servers — ``.mcp.json`` in ``cwd`` and the settings file's
    ``"mcpServers"`` (a `permissions.settings.Settings`) — their problem lines, and whether the
    settings say ``"enableProjectMcpServers": true``."""
    servers, problems = project_file_servers(cwd)
    enable = False
    if settings is not None:
        enable = bool(getattr(settings, "enable_project_mcp_servers", False))
        raw = getattr(settings, "mcp_servers", None)
        if raw:
            more, more_problems = parse_servers(raw, "settings")
            names = {s.name for s in more}
            servers = [s for s in servers if s.name not in names] + more
            problems += more_problems
    return servers, problems, enable
