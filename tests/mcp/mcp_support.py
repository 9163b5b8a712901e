"""Helpers of the MCP tests: server configurations, an `Agent` on the fake server, process checks."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

from jupyter_toolagent import Agent
from jupyter_toolagent.testing import FakeAnthropicServer

REPO = Path(__file__).resolve().parents[2]
KEY = "sk-ant-api03-" + "Mc9" * 10


def demo(*args: str, **config: Any) -> dict[str, Any]:
    """The product's demo MCP server over stdio, with extra command-line ``args``."""
    return {"command": sys.executable, "args": ["-m", "jupyter_toolagent.testing.mcp_server", *args],
            "env": {"PYTHONPATH": str(REPO)}, **config}


def make_agent(server: FakeAnthropicServer, mcp_servers: dict[str, Any] | None = None, **kw: Any) -> Agent:
    from jupyter_toolagent.models.anthropic import AnthropicModel

    return Agent(AnthropicModel("claude-sonnet-5-5", base_url=server.base_url, api_key=KEY),
                 mcp_servers=mcp_servers, **kw)


@contextlib.contextmanager
def agent_on(server: FakeAnthropicServer, mcp_servers: dict[str, Any] | None = None, **kw: Any) -> Iterator[Agent]:
    """An agent whose MCP servers are stopped when the block ends — and checked to be gone."""
    agent = make_agent(server, mcp_servers, **kw)
    try:
        yield agent
    finally:
        pids = agent.mcp.pids() if agent.mcp is not None else []
        agent.close()
        assert not [p for p in pids if alive(p)], "a server survived Agent.close()"


def alive(pid: int) -> bool:
    """Is the process, or anything in its process group, still running (zombies count as gone)?"""
    if any(not _zombie(p) for p in _group_members(pid)):
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not _zombie(pid)


def _group_members(pgid: int) -> list[int]:
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[2]) == pgid:
            members.append(int(entry))
    return members


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["name"] for t in body.get("tools", [])]


@contextlib.contextmanager
def http_demo(*args: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """The demo server over streamable HTTP on 127.0.0.1 (a free port), stopped by pid."""
    proc = subprocess.Popen([sys.executable, "-m", "jupyter_toolagent.testing.mcp_server", "--http", "0", *args],
                            stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(REPO)},
                            start_new_session=True)
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + 30
        url = None
        while time.monotonic() < deadline:
            line = proc.stderr.readline().decode()
            match = re.search(r"listening on (http://\S+)", line)
            if match:
                url = match.group(1)
                break
            if not line and proc.poll() is not None:
                break
        assert url, "the HTTP demo server did not start"
        yield url, proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 9)
        proc.wait(timeout=10)
