"""Sub-agents and deferred tools in ``%%agent`` cells executed by nbclient in a real kernel,
against the fake API over real HTTP+SSE (SPEC §12, §13).

What a cell shows is read from the saved output (the static HTML + text a headless run keeps):
each sub-agent's text and tool cards are drawn inside the card of the ``Agent`` call that
started it. The rest is read from the kernel itself (sub-runs, pairing) and from what the fake
server was sent."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup

from jupyter_toolagent.models import tool_use_block
from jupyter_toolagent.testing import FakeAnthropicServer
from kernel_harness import (cell_errors, cell_text, collect_output, execute_and_wait, kernel_env, run_notebook,
                            running_kernel, wait_reply)

pytestmark = pytest.mark.kernel

LOAD = "%load_ext jupyter_toolagent"


def by_conversation(turns: dict[str, list[Any]]) -> Any:
    """The fake model: each request gets the next turn of its conversation, recognised by the
    script key its first user message contains (a sub-agent's first message is its prompt)."""
    lock = threading.Lock()

    def answer(body: dict[str, Any]) -> Any:
        first = body["messages"][0]["content"]
        text = first if isinstance(first, str) else "".join(b.get("text", "") for b in first if b.get("type") == "text")
        with lock:
            key = next(k for k in turns if k in text)
            return turns[key].pop(0)

    return answer


def agent_call(prompt: str, kind: str, id: str, description: str) -> dict[str, Any]:
    return tool_use_block("Agent", {"description": description, "prompt": prompt, "subagent_type": kind}, id=id)


def cell_html(cell: Any) -> BeautifulSoup:
    html = "".join(o.get("data", {}).get("text/html", "") for o in cell.get("outputs", [])
                   if o.output_type in ("display_data", "execute_result"))
    return BeautifulSoup(html, "html.parser")


def nested_in(soup: BeautifulSoup, outer: str, inner: str) -> bool:
    """Card ``inner`` is drawn inside card ``outer``."""
    return soup.select_one(f'[data-tool-use-id="{outer}"] [data-tool-use-id="{inner}"]') is not None


def message_bodies(server: FakeAnthropicServer) -> list[dict[str, Any]]:
    return [r.body for r in server.requests if r.path == "/v1/messages"]


def test_explore_sub_agent_in_a_cell(kernel_python: str, workdir) -> None:
    turns = {
        "find the answer": [[agent_call("SUB look up a", "explore", "toolu_agent1", "find a")],
                            "The sub-agent reported back."],
        "SUB look up a": [[tool_use_block("lookup", {"key": "a"}, id="toolu_inner1")], "a is 42"],
    }
    with FakeAnthropicServer(turns=by_conversation(turns)) as server:
        nb = run_notebook([
            LOAD,
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
        bodies = message_bodies(server)
    for cell in nb.cells:
        assert not cell_errors(cell), cell_text(cell)
    assert "Agent" in {t["name"] for t in bodies[0]["tools"]}
    sub_bodies = [b for b in bodies if "SUB look up a" in str(b["messages"][0])]
    assert len(sub_bodies) == 2
    inner_tools = {t["name"] for t in sub_bodies[0]["tools"]}
    assert {"lookup", "Read", "Grep", "ReadToolOutput"} <= inner_tools  # read-only, the user's included
    assert not inner_tools & {"Agent", "Bash", "Write", "Edit", "RunPython"}
    assert inner_tools < {t["name"] for t in bodies[0]["tools"]}
    # the inner card and the sub-agent's text are drawn inside the Agent card
    soup = cell_html(nb.cells[2])
    assert nested_in(soup, "toolu_agent1", "toolu_inner1")
    nested = soup.select_one('[data-tool-use-id="toolu_agent1"] .jp-toolagent-nested')
    assert nested is not None and nested["data-agent"] == "explore: find a" and "a is 42" in nested.get_text()
    text = cell_text(nb.cells[2])
    assert "  | [explore: find a › lookup] done" in text and "  | a is 42" in text
    checks = cell_text(nb.cells[3])
    assert "PAIRING []" in checks and "SUBPAIRING []" in checks
    assert "SUBRUNS [('toolu_agent1', 'explore')]" in checks
    assert "REQUESTS 4" in checks
    listing = cell_text(nb.cells[4])
    assert "general-purpose" in listing and "explore" in listing and "toolu_agent1" in listing
    transcript = cell_text(nb.cells[5])
    assert "SUB look up a" in transcript and "a is 42" in transcript


SETUP = '''import asyncio, time
from jupyter_toolagent import tool, subagent, current_session
TIMES = {}

@tool(read_only=True)
async def lookup(key: str) -> str:
    """Look a key up (half a second)."""
    started = time.monotonic()
    await asyncio.sleep(0.5)
    TIMES[key] = (started, time.monotonic())
    return f"value of {key}"

@tool
def write_note(text: str) -> str:
    """Write a note (changes things)."""
    return "written"

subagent("noter", "Writes notes", system="You write notes.", tools=["write_note"], max_turns=3)
'''


def test_sub_agents_in_cells_parallel_denied_unknown_depth_and_off_switch(kernel_python: str, workdir) -> None:
    """Two explore agents overlap and each is nested in its own card; a user-defined sub-agent's
    ask is denied headless naming it; an unknown type lists the names; the third level is refused;
    ``%config AgentMagics.subagents = False`` stops offering ``Agent``."""
    turns = {
        "PAIR both": [[agent_call("SUB left", "explore", "toolu_pa", "left"),
                       agent_call("SUB right", "explore", "toolu_pb", "right")], "both reported"],
        "SUB left": [[tool_use_block("lookup", {"key": "left"}, id="toolu_l")], "left is done"],
        "SUB right": [[tool_use_block("lookup", {"key": "right"}, id="toolu_r")], "right is done"],
        "DENY notes": [[agent_call("SUB note it", "noter", "toolu_noter", "note it"),
                        agent_call("SUB never", "nosuch", "toolu_nosuch", "never")], "noted"],
        "SUB note it": [[tool_use_block("write_note", {"text": "x"}, id="toolu_w")], "could not write"],
        "DEPTH go": [[agent_call("LEVEL one", "general-purpose", "toolu_d1", "one")], "top done"],
        "LEVEL one": [[agent_call("LEVEL two", "general-purpose", "toolu_d2", "two")], "one done"],
        "LEVEL two": [[agent_call("LEVEL three", "general-purpose", "toolu_d3", "three")], "two done"],
        "NOAGENT hi": ["no agents here"],
    }
    with FakeAnthropicServer(turns=by_conversation(turns)) as server:
        nb = run_notebook([
            LOAD, SETUP,
            "%%agent\nPAIR both",
            "run = current_session().runs[-1]\n"
            "(ls, le), (rs, re) = TIMES['left'], TIMES['right']\n"
            "print('OVERLAP', max(ls, rs) < min(le, re))\n"
            "print('SUBS', sorted((s.tool_use_id, s.session.check_pairing() == []) for s in run.subruns))",
            "%%agent --new\nDENY notes",
            "%%agent --new\nDEPTH go",
            "run = current_session().runs[-1]\n"
            "[one] = run.subruns\n[two] = one.record.subruns\n"
            "print('DEPTHS', one.depth, two.depth, two.record.subruns)\n"
            "print('DEEP PAIRING', two.session.check_pairing(), current_session().check_pairing())",
            "%config AgentMagics.subagents = False",
            "%%agent --new\nNOAGENT hi",
        ], kernel_python, kernel_env(server.base_url), workdir)
        bodies = message_bodies(server)
    for cell in nb.cells:
        assert not cell_errors(cell), cell_text(cell)

    def bodies_of(key: str) -> list[dict[str, Any]]:
        return [b for b in bodies if key in str(b["messages"][0]["content"])]

    def result_of(body: dict[str, Any], tool_use_id: str) -> dict[str, Any]:
        return next(b for m in body["messages"] if m["role"] == "user" and isinstance(m["content"], list)
                    for b in m["content"] if b.get("type") == "tool_result" and b["tool_use_id"] == tool_use_id)

    # two explore agents: in parallel, each with its own nested card
    assert "OVERLAP True" in cell_text(nb.cells[3])
    assert "SUBS [('toolu_pa', True), ('toolu_pb', True)]" in cell_text(nb.cells[3])
    soup = cell_html(nb.cells[2])
    assert nested_in(soup, "toolu_pa", "toolu_l") and nested_in(soup, "toolu_pb", "toolu_r")
    assert not nested_in(soup, "toolu_pa", "toolu_r") and not nested_in(soup, "toolu_pb", "toolu_l")
    left = soup.select_one('[data-tool-use-id="toolu_pa"] .jp-toolagent-nested')
    assert left is not None and "left is done" in left.get_text() and "right is done" not in left.get_text()
    # the user's sub-agent: its own tools and system prompt; its ask denied headless, naming it
    noter = bodies_of("SUB note it")[0]
    assert {t["name"] for t in noter["tools"]} == {"write_note", "ReadToolOutput"}
    assert "You write notes." in str(noter["system"])
    denied = result_of(bodies_of("SUB note it")[1], "toolu_w")
    assert denied["is_error"] and "sub-agent noter: note it" in str(denied["content"])
    unknown = result_of(bodies_of("DENY notes")[-1], "toolu_nosuch")
    assert unknown["is_error"]
    assert all(name in str(unknown["content"]) for name in ("nosuch", "explore", "general-purpose", "noter"))
    deny_soup = cell_html(nb.cells[4])
    assert nested_in(deny_soup, "toolu_noter", "toolu_w")
    inner = deny_soup.select_one('[data-tool-use-id="toolu_w"]')
    assert inner is not None and inner["data-status"] == "denied" and "noter: note it › write_note" in inner.get_text()
    # depth: Agent offered at the first level, not at the second; the third call refused
    assert "Agent" in {t["name"] for t in bodies_of("LEVEL one")[0]["tools"]}
    assert "Agent" not in {t["name"] for t in bodies_of("LEVEL two")[0]["tools"]}
    assert result_of(bodies_of("LEVEL two")[1], "toolu_d3")["is_error"]
    checks = cell_text(nb.cells[6])
    assert "DEPTHS 1 2 []" in checks and "DEEP PAIRING [] []" in checks
    assert nested_in(cell_html(nb.cells[5]), "toolu_d1", "toolu_d2")
    # the off switch
    assert "Agent" not in {t["name"] for t in bodies_of("NOAGENT hi")[0]["tools"]}
    assert "Agent" in {t["name"] for t in bodies_of("PAIR both")[0]["tools"]}


HUNDRED = '''from jupyter_toolagent import tool
SERVERS = ["github", "jira", "slack", "drive", "postgres"]
VERBS = ["get", "list", "search", "create", "update", "delete", "export", "sync", "count", "describe",
         "archive", "restore", "tag", "move", "copy", "share", "lock", "unlock", "rename", "audit"]

def make(server, verb):
    def remote(item_id: str) -> str:
        return f"{verb} on {server} ran for {item_id}"
    remote.__doc__ = f"{verb.capitalize()} an item in {server}. " + "Long vendor documentation. " * 12
    return tool(name=f"mcp__{server}__{verb}_item", read_only=True)(remote)

globals().update({f"t_{s}_{v}": make(s, v) for s in SERVERS for v in VERBS})
'''


def test_hundred_mcp_like_tools_are_deferred_in_a_cell_and_loaded_by_search(kernel_python: str, workdir) -> None:
    target = "mcp__jira__archive_item"
    turns = {
        "DEFER go": [[tool_use_block(target, {"item_id": "J-1"}, id="toolu_early")],
                     [tool_use_block("ToolSearch", {"query": f"select:{target}"}, id="toolu_search")],
                     [tool_use_block(target, {"item_id": "J-1"}, id="toolu_loaded")],
                     "archived"],
        "NEVER go": ["all sent"],
    }
    with FakeAnthropicServer(turns=by_conversation(turns)) as server:
        nb = run_notebook([
            LOAD, HUNDRED,
            "%%agent\nDEFER go",
            '%config AgentMagics.defer_tools = "never"',
            "%%agent --new\nNEVER go",
        ], kernel_python, kernel_env(server.base_url), workdir)
        bodies = message_bodies(server)
    for cell in nb.cells:
        assert not cell_errors(cell), cell_text(cell)
    defer = [b for b in bodies if "DEFER go" in str(b["messages"][0]["content"])]
    mcp_sent = [{t["name"] for t in b["tools"] if t["name"].startswith("mcp__")} for b in defer]
    assert [len(s) for s in mcp_sent] == [0, 0, 1, 1] and mcp_sent[2] == {target}
    assert "ToolSearch" in {t["name"] for t in defer[0]["tools"]}
    listing = str(defer[0]["messages"][0]["content"])
    assert all(f"mcp__{s}__get_item" in listing for s in ("github", "jira", "slack", "drive", "postgres"))
    results = {b["tool_use_id"]: b for m in defer[-1]["messages"] if m["role"] == "user" and isinstance(m["content"], list)
               for b in m["content"] if b.get("type") == "tool_result"}
    assert results["toolu_early"]["is_error"] and f"select:{target}" in str(results["toolu_early"]["content"])
    assert "unknown tool" not in str(results["toolu_early"]["content"]).lower()
    assert not results["toolu_loaded"].get("is_error") and "archive on jira ran for J-1" in str(results["toolu_loaded"]["content"])
    never = [b for b in bodies if "NEVER go" in str(b["messages"][0]["content"])][0]
    assert len([t for t in never["tools"] if t["name"].startswith("mcp__")]) == 100
    assert "ToolSearch" not in {t["name"] for t in never["tools"]}


def test_kernel_interrupt_during_two_parallel_sub_agents(kernel_python: str, workdir: Path) -> None:
    """Both sub-agents are inside a 30 s tool when the kernel is interrupted: the cell ends at
    once, and the cell's transcript and both sub-transcripts are valid for the next request."""
    turns = {
        "STOP both": [[agent_call("SUB one", "explore", "toolu_s1", "one"),
                       agent_call("SUB two", "explore", "toolu_s2", "two")], "after the stop"],
        "SUB one": [[tool_use_block("wait_long", {"key": "one"}, id="toolu_w1")]],
        "SUB two": [[tool_use_block("wait_long", {"key": "two"}, id="toolu_w2")]],
    }
    marks = workdir / "started"
    marks.mkdir()
    setup = ("%load_ext jupyter_toolagent\nimport asyncio, pathlib\nfrom jupyter_toolagent import tool, current_session\n"
             "@tool(read_only=True)\nasync def wait_long(key: str) -> str:\n"
             "    \"\"\"Wait a long time.\"\"\"\n"
             f"    pathlib.Path({str(marks)!r}, key).touch()\n"
             "    await asyncio.sleep(30)\n    return 'late'\n")
    with FakeAnthropicServer(turns=by_conversation(turns)) as server:
        with running_kernel(kernel_python, kernel_env(server.base_url), workdir) as (km, kc):
            reply, out = execute_and_wait(kc, setup)
            assert reply["status"] == "ok", out
            cell = kc.execute("%%agent\nSTOP both", allow_stdin=False)
            deadline = time.monotonic() + 30
            while len(list(marks.iterdir())) < 2:
                assert time.monotonic() < deadline, "the two sub-agents' tools did not both start"
                time.sleep(0.05)
            interrupted = time.monotonic()
            km.interrupt_kernel()
            wait_reply(kc, cell, timeout=20)
            collect_output(kc, cell)
            stopped_in = time.monotonic() - interrupted
            _, checks = execute_and_wait(kc, (
                "run = current_session().runs[-1]\n"
                "print('FINISH', run.finish_reason, sorted(s.record.finish_reason for s in run.subruns))\n"
                "print('PAIRING', current_session().check_pairing(), [s.session.check_pairing() for s in run.subruns])"))
            reply, after = execute_and_wait(kc, "%%agent\nAFTER stop", allow_stdin=False)
        bodies = message_bodies(server)
    assert stopped_in < 10, f"the interrupt took {stopped_in:.1f} s to end the cell"
    assert "FINISH aborted ['aborted', 'aborted']" in checks, checks
    assert "PAIRING [] [[], []]" in checks, checks
    assert reply["status"] == "ok" and "after the stop" in after
    follow_up = [b for b in bodies if "STOP both" in str(b["messages"][0]["content"])][-1]
    assert "AFTER stop" in str(follow_up["messages"][-1]["content"])
    results = {b["tool_use_id"] for m in follow_up["messages"] if m["role"] == "user" and isinstance(m["content"], list)
               for b in m["content"] if b.get("type") == "tool_result"}
    assert {"toolu_s1", "toolu_s2"} <= results
