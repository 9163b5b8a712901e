"""``notebooks/mcp_tools.ipynb``: a server added mid-session and seen by the next request, an
approval, a progress bar and a crash — with the product's demo MCP server as the kernel's child."""

from __future__ import annotations

import os

import pytest

from lesson_support import ExecutedLesson, execute_lesson, probe

pytestmark = pytest.mark.kernel

PROBES = [
    probe("None"),
    probe("[[t['name'] for t in list(r.requests)[0].get('tools', [])] for r in current_session().runs]",
          setup="from jupyter_toolagent import current_session"),
    probe("__import__('jupyter_toolagent.mcp.stdio_transport', fromlist=['SPAWNED']).SPAWNED and "
          "list(__import__('jupyter_toolagent.mcp.stdio_transport', fromlist=['SPAWNED']).SPAWNED)"),
    probe("current_session().check_pairing()", setup="from jupyter_toolagent import current_session"),
]


@pytest.fixture(scope="module")
def lesson(tmp_path_factory: pytest.TempPathFactory) -> ExecutedLesson:
    return execute_lesson("mcp_tools", tmp_path_factory.mktemp("mcp_tools"), probes=PROBES, timeout=90)


def test_runs_offline_without_errors(lesson: ExecutedLesson) -> None:
    assert lesson.errors() == []
    assert lesson.probes[3] == []


def test_the_server_added_mid_session_is_in_the_next_request(lesson: ExecutedLesson) -> None:
    assert "no tool named 'mcp__demo__add'" in lesson.text("before-add")
    assert "MCP server 'demo' connected: 8 tools" in lesson.text("add")
    assert "demo [user] connected: 8 tool(s)" in lesson.text("list")
    tools = lesson.probes[1]
    assert not [n for n in tools[0] if n.startswith("mcp__")]
    assert "mcp__demo__add" in tools[1]  # the run right after `%agent mcp add`
    assert "5" in lesson.text("call")


def test_the_approval_names_the_servers_hints(lesson: ExecutedLesson) -> None:
    text = lesson.text("approval")
    assert "DESTRUCTIVE" in text and "--allow 'mcp__demo__delete_everything'" in text


def test_progress_and_the_crash(lesson: ExecutedLesson) -> None:
    assert "counted to 5" in lesson.text("progress")
    crash = lesson.text("crash")
    assert "MCP server 'demo'" in crash and "exited with code 3" in crash
    assert "demo [user] failed" in lesson.text("list-after-crash")
    assert "crashing with exit code 3" in lesson.text("log")
    assert "mcp__demo__crash" in lesson.text("transcript")


def test_no_server_outlives_the_kernel(lesson: ExecutedLesson) -> None:
    pids = lesson.probes[2]
    assert pids
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
