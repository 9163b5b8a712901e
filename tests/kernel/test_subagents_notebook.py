"""Sub-agents in a ``%%agent`` cell executed by nbclient in a real kernel: the ``Agent`` tool is
offered, an explore sub-agent runs the user's read-only tool, its card appears in the cell
labelled with the sub-agent, and ``%agent agents`` / ``%agent transcript --agent`` show it."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from jupyter_toolagent.testing import FakeAnthropicServer
from jupyter_toolagent.models import tool_use_block
from kernel_harness import cell_errors, cell_text, kernel_env, run_notebook

pytestmark = pytest.mark.kernel


def scripted() -> Any:
    """The main conversation starts one explore agent; the sub-agent (its first user message is
    the prompt it was given) calls ``lookup`` and reports."""
    turns = {
        "find the answer": [[tool_use_block("Agent", {"description": "find a", "prompt": "SUB look up a",
                                                      "subagent_type": "explore"}, id="toolu_agent1")],
                            "The sub-agent reported back."],
        "SUB look up a": [[tool_use_block("lookup", {"key": "a"}, id="toolu_inner1")], "a is 42"],
    }
    lock = threading.Lock()

    def answer(body: dict[str, Any]) -> Any:
        first = body["messages"][0]["content"]
        key = first if isinstance(first, str) else "".join(b.get("text", "") for b in first if b.get("type") == "text")
        with lock:
            return turns[key].pop(0)

    return answer


def test_explore_sub_agent_in_a_cell(kernel_python: str, workdir) -> None:
    with FakeAnthropicServer(turns=scripted()) as server:
        nb = run_notebook([
            "%load_ext jupyter_toolagent",
            "from jupyter_toolagent import tool\n"
            "@tool(read_only=True)\n"
            "def lookup(key: str) -> str:\n"
            "    \"\"\"Look a key up.\"\"\"\n"
            "    return f'{key} is 42'",
            "%%agent\nfind the answer",
            "from jupyter_toolagent import current_session\n"
            "run = current_session().runs[-1]\n"
            "print('PAIRING', current_session().check_pairing())\n"
            "print('SUBRUNS', [(s.tool_use_id, s.agent) for s in run.subruns])\n"
            "print('SUBPAIRING', run.subruns[0].session.check_pairing())\n"
            "print('REQUESTS', run.usage.requests)",
            "%agent agents",
            "%agent transcript --agent toolu_agent1",
        ], kernel_python, kernel_env(server.base_url), workdir)
        bodies = [r.body for r in server.requests if r.path == "/v1/messages"]
    for cell in nb.cells:
        assert not cell_errors(cell), cell_text(cell)
    assert "Agent" in {t["name"] for t in bodies[0]["tools"]}
    sub_bodies = [b for b in bodies if "SUB look up a" in str(b["messages"][0])]
    assert len(sub_bodies) == 2
    inner_tools = {t["name"] for t in sub_bodies[0]["tools"]}
    assert {"lookup", "Read", "Grep", "ReadToolOutput"} <= inner_tools  # read-only, the user's included
    assert not inner_tools & {"Agent", "Bash", "Write", "Edit", "RunPython"}
    assert inner_tools < {t["name"] for t in bodies[0]["tools"]}
    assert "explore: find a" in cell_text(nb.cells[2])  # the inner card, labelled
    checks = cell_text(nb.cells[3])
    assert "PAIRING []" in checks and "SUBPAIRING []" in checks
    assert "SUBRUNS [('toolu_agent1', 'explore')]" in checks
    assert "REQUESTS 4" in checks
    listing = cell_text(nb.cells[4])
    assert "general-purpose" in listing and "explore" in listing and "toolu_agent1" in listing
    transcript = cell_text(nb.cells[5])
    assert "SUB look up a" in transcript and "a is 42" in transcript
