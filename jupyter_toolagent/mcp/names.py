"""Tool names for MCP tools: ``mcp__<server>__<tool>``, safe for the API and unique.

The API accepts tool names of 1-64 characters from ``[A-Za-z0-9_-]``. Servers are free to name
their tools otherwise (dots, spaces, long names), so other characters become ``_`` and a name
too long is cut, keeping a short hash of the full name so that two long names that share a
beginning stay different. Collisions after sanitising get ``_2``, ``_3`` … in listing order.
"""

from __future__ import annotations

import hashlib
import re

MAX_NAME = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def sanitize(part: str) -> str:
    return _UNSAFE.sub("_", part) or "_"


def server_prefix(server: str) -> str:
    """``mcp__<server>``: the name a rule uses for every tool of the server."""
    return f"mcp__{sanitize(server)}"


def tool_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>``, sanitised and at most 64 characters."""
    full = f"{server_prefix(server)}__{sanitize(tool)}"
    if len(full) <= MAX_NAME:
        return full
    digest = hashlib.sha1(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{full[:MAX_NAME - 9]}_{digest}"


def unique_names(pairs: list[tuple[str, str]]) -> list[str]:
    """The API names of ``(server, tool)`` pairs, in order, with no two alike (two servers
    whose names sanitise alike, or two tools whose names do, still get distinct names)."""
    seen: set[str] = set()
    out: list[str] = []
    for server, raw in pairs:
        base = name = tool_name(server, raw)
        n = 2
        while name in seen:
            suffix = f"_{n}"
            name = base[:MAX_NAME - len(suffix)] + suffix
            n += 1
        seen.add(name)
        out.append(name)
    return out
