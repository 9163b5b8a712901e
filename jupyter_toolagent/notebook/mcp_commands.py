"""``%agent mcp …``: add, list, remove and read the log of the notebook's MCP servers.

    %agent mcp add NAME [--env K=V]… [--trust] [--timeout S] -- COMMAND [ARGS…]
    %agent mcp add NAME --url URL [--header 'K: V']… [--trust] [--timeout S]
    %agent mcp list | remove NAME | log NAME

``add`` is the person's own server, so it starts at once: the command returns after the
handshake (or one clear line within the server's start timeout) and says how many tools the
server offers — the very next request carries them. ``log`` shows the server's stderr, which is
never spilled into cells.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ..mcp import parse_server
from ..errors import McpConfigError
from .mcp_servers import servers_for

if TYPE_CHECKING:
    from .magics import AgentMagics

USAGE = """\
%agent mcp add NAME [--env K=V]... [--trust] [--timeout S] -- COMMAND [ARGS...]
%agent mcp add NAME --url URL [--header 'K: V']... [--trust] [--timeout S]
%agent mcp list | remove NAME | log NAME"""


def mcp_command(magics: "AgentMagics", args: list[str]) -> Any:
    from .subcommands import TextView

    if not args:
        raise UsageError("usage:\n" + USAGE)
    action, rest = args[0], args[1:]
    servers = servers_for(magics.shell)
    if action == "add":
        return TextView(_add(servers, rest))
    if action == "list":
        if rest:
            raise UsageError("%agent mcp list takes no arguments")
        return _list(servers)
    if action in ("remove", "log"):
        if len(rest) != 1:
            raise UsageError(f"usage: %agent mcp {action} NAME")
        name = rest[0]
        if name not in servers.names():
            known = ", ".join(servers.names()) or "none"
            raise UsageError(f"%agent mcp {action}: no MCP server named {name!r} (servers: {known})")
        if action == "remove":
            servers.remove(name)
            return TextView(f"MCP server {name!r} removed and stopped")
        text = servers.log(name) or f"(MCP server {name!r} has written nothing to stderr)"
        return TextView(text)
    raise UsageError(f"%agent mcp: unknown action {action!r}; usage:\n{USAGE}")


def _add(servers: Any, args: list[str]) -> str:
    if not args or args[0].startswith("-"):
        raise UsageError("usage: " + USAGE.splitlines()[0])
    name, rest = args[0], args[1:]
    command: list[str] = []
    if "--" in rest:
        cut = rest.index("--")
        rest, command = rest[:cut], rest[cut + 1:]
    entry: dict[str, Any] = {}
    env: dict[str, str] = {}
    headers: dict[str, str] = {}
    i = 0
    while i < len(rest):
        flag = rest[i]
        if flag == "--trust":
            entry["trust"] = True
            i += 1
            continue
        if flag not in ("--env", "--url", "--header", "--timeout", "--start-timeout") or i + 1 >= len(rest):
            raise UsageError(f"%agent mcp add: unexpected {flag!r}; usage:\n{USAGE}")
        value = rest[i + 1]
        i += 2
        if flag == "--env":
            key, sep, val = value.partition("=")
            if not sep or not key:
                raise UsageError(f"%agent mcp add: --env takes K=V, not {value!r}")
            env[key] = val
        elif flag == "--header":
            key, sep, val = value.partition(":")
            if not sep or not key.strip():
                raise UsageError(f"%agent mcp add: --header takes 'K: V', not {value!r}")
            headers[key.strip()] = val.strip()
        elif flag == "--url":
            entry["url"] = value
            entry["type"] = "http"
        else:
            try:
                entry["timeout" if flag == "--timeout" else "startTimeout"] = float(value)
            except ValueError:
                raise UsageError(f"%agent mcp add: {flag} takes seconds, not {value!r}") from None
    if "url" in entry:
        if command or env:
            raise UsageError("%agent mcp add: a --url server takes no command and no --env")
        if headers:
            entry["headers"] = headers
    else:
        if headers:
            raise UsageError("%agent mcp add: --header is for a --url server")
        if not command:
            raise UsageError("%agent mcp add: give the command after --, or --url URL")
        entry.update(command=command[0], args=command[1:], env=env)
    try:
        config = parse_server(name, entry, "user")
    except McpConfigError as exc:
        raise UsageError(str(exc)) from None
    servers.configure(config)
    from ..errors import McpServerGone

    try:
        connection = servers.start_sync(name)
    except McpServerGone as exc:
        raise UsageError(str(exc)) from None
    count = len(connection.tools)
    extra = f" and {len(connection.resources)} resource(s)" if connection.has_resources else ""
    return (f"MCP server {name!r} connected: {count} tool{'s' if count != 1 else ''}{extra} "
            f"(mcp__{name}__…); MCP tools ask before each call unless allowed (--allow mcp__{name})")


def _list(servers: Any) -> Any:
    from .subcommands import TextView

    rows = servers.status()
    if not rows:
        return TextView("no MCP servers (add one with %agent mcp add, or in .mcp.json)")
    lines, cells = [], []
    for r in rows:
        line = f"{r.name} [{r.source}] {r.status}: {r.tools} tool(s) — {r.target}"
        if r.error:
            line += f"\n    error: {r.error}"
        for tail in r.stderr_tail if r.status == "failed" else []:
            line += f"\n    stderr: {tail}"
        lines.append(line)
        cells.append(f"<tr><td><code>{html.escape(r.name)}</code></td><td>{html.escape(r.source)}</td>"
                     f"<td>{html.escape(r.status)}</td><td>{r.tools}</td><td><code>{html.escape(r.target)}</code></td>"
                     f"<td>{html.escape(r.error or '')}<pre>{html.escape(chr(10).join(r.stderr_tail))}</pre></td></tr>")
    table = ("<table><tr><th>server</th><th>source</th><th>state</th><th>tools</th><th>runs</th><th>last error</th></tr>"
             + "".join(cells) + "</table>")
    return TextView("\n".join(lines), table)
