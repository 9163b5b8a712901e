"""``%agent mcp`` and ``%%agent`` with MCP servers in a real kernel, executed by nbclient.

The model is a `FakeAnthropicServer` in this process (reached through ``ANTHROPIC_BASE_URL``);
the MCP servers are the product's demo server, started by the kernel as its own children. nbclient
sends ``allow_stdin=False``, so the runs are headless: asks are denied by policy, and project
servers start only when an allow rule names them.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp_support import alive

from jupyter_toolagent.testing import FakeAnthropicServer
from jupyter_toolagent.models import text_block, tool_use_block

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "kernel"))
from kernel_harness import cell_text, kernel_env, run_notebook  # noqa: E402

pytestmark = pytest.mark.kernel

CALL = re.compile(r"call (\S+) (\{.*\})")
DEMO = f"{sys.executable} -m jupyter_toolagent.testing.mcp_server"


def answer(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The fake model: "call NAME {json}" → that tool_use; tool results → quote them."""
    last = body["messages"][-1]
    content = last["content"] if isinstance(last["content"], list) else [{"type": "text", "text": last["content"]}]
    results = [b for b in content if b.get("type") == "tool_result"]
    if results:
        return [text_block("got: " + " | ".join(_text(r) for r in results))]
    prompt = " ".join(b.get("text", "") for b in content if b.get("type") == "text")
    match = CALL.search(prompt)
    if match:
        return [tool_use_block(match.group(1), json.loads(match.group(2)))]
    return [text_block("nothing to call")]


def _text(block: dict[str, Any]) -> str:
    content = block.get("content", "")
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if b.get("type") == "text")
    return str(content)


def _tool_names(body: dict[str, Any]) -> list[str]:
    return [t["name"] for t in body.get("tools", [])]


PIDS = ("from jupyter_toolagent.notebook.mcp_servers import servers_for\n"
        "print('PIDS', servers_for(get_ipython()).pids())")
CHECK = "from jupyter_toolagent import current_session\nprint('PAIRING', current_session().check_pairing())"


def test_a_server_added_in_a_later_cell_is_in_the_next_request_and_stops_with_the_kernel(tmp_path: Path) -> None:
    with FakeAnthropicServer(turns=answer) as server:
        nb = run_notebook([
            "%load_ext jupyter_toolagent",
            "%%agent\ncall mcp__demo__add {\"a\": 1, \"b\": 2}",
            f"%agent mcp add demo --env DEMO_FLAG=1 -- {DEMO}",
            "%%agent --allow mcp__demo__add\ncall mcp__demo__add {\"a\": 20, \"b\": 22}",
            "%%agent --allow mcp__demo__count_slowly\ncall mcp__demo__count_slowly {\"steps\": 3, \"delay\": 0.01}",
            "%%agent --allow mcp__demo\ncall mcp__demo__crash {\"code\": 9}",
            "%agent mcp list",
            "%agent mcp log demo",
            "%agent transcript",
            CHECK,
            f"%agent mcp add second -- {DEMO} --tools echo",
            PIDS,
            "%agent mcp remove second",
            PIDS,
            f"%agent mcp add broken -- {DEMO} --exit-at-start 6",
            "%agent mcp add nothing -- /nonexistent/server",
        ], sys.executable, kernel_env(server.base_url), tmp_path, timeout=90)
        bodies = server.bodies
    texts = [cell_text(c) for c in nb.cells]
    # before the server existed, the model was not offered its tools (and the call was unknown)
    assert not [n for n in _tool_names(bodies[0]) if n.startswith("mcp__")]
    assert "no tool named 'mcp__demo__add'" in texts[1]
    # `add` returned after the handshake and said how many tools there are
    assert "MCP server 'demo' connected: 8 tools" in texts[2]
    # the very next request carried them, and the call went through the real server
    assert "mcp__demo__add" in _tool_names(bodies[2])
    assert "got: 42" in texts[3]
    assert "got: counted to 3" in texts[4]
    # the crash: an error result naming the server and its exit, and the list shows it failed
    assert "exited with code 9" in texts[5] and "'demo'" in texts[5]
    assert "demo [user] failed" in texts[6] and "crashing with exit code 9" in texts[6]
    assert "crashing with exit code 9" in texts[7]  # %agent mcp log: the server's stderr
    assert "mcp__demo__add" in texts[8]  # the transcript shows MCP tools like any other
    assert "PAIRING []" in texts[9]
    assert "MCP server 'second' connected: 1 tool" in texts[10]
    pids_before = json.loads(texts[11].split("PIDS", 1)[1].strip())
    pids_after = json.loads(texts[13].split("PIDS", 1)[1].strip())
    assert len(pids_before) == 2 and len(pids_after) == 1
    removed = (set(pids_before) - set(pids_after)).pop()
    assert not alive(removed)  # `remove` stopped the process by pid
    # a server that cannot start: one UsageError line naming it and the problem
    assert "UsageError: MCP server 'broken': the server exited with code 6 before the handshake" in texts[14]
    assert "UsageError: MCP server 'nothing': cannot start: command not found: '/nonexistent/server'" in texts[15]
    # the kernel has shut down: none of its MCP children outlived it
    assert not [p for p in pids_before if alive(p)]


def test_project_servers_start_only_with_an_allow_rule(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "proj": {"command": sys.executable, "args": ["-m", "jupyter_toolagent.testing.mcp_server", "--tools", "echo"]},
        "typo": {"command": "x", "argz": []},
    }}))
    with FakeAnthropicServer(turns=answer) as server:
        nb = run_notebook([
            "%load_ext jupyter_toolagent",
            "%%agent\ncall mcp__proj__echo {\"text\": \"hi\"}",
            "%agent mcp list",
            "%%agent --allow mcp__proj\ncall mcp__proj__echo {\"text\": \"hi\"}",
            "%agent mcp list",
        ], sys.executable, kernel_env(server.base_url), tmp_path, timeout=90)
        bodies = server.bodies
    texts = [cell_text(c) for c in nb.cells]
    assert not [n for n in _tool_names(bodies[0]) if n.startswith("mcp__")]
    assert "'proj' (.mcp.json) was not started" in texts[1] and "--allow mcp__proj" in texts[1]
    assert "unknown key 'argz'" in texts[1] and "'typo'" in texts[1]
    assert "proj [.mcp.json] needs approval" in texts[2]
    assert "mcp__proj__echo" in _tool_names(bodies[-2])
    assert "got: hi" in texts[3]
    assert "proj [.mcp.json] connected" in texts[4]
