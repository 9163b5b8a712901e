"""MCP servers nobody here wrote, over stdio through `Agent` and the fake Anthropic server:
``@modelcontextprotocol/server-everything`` (npm, installed into a cache folder by
``scripts/test.sh``) and ``mcp-server-git`` (PyPI, in the test extras)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp_support import agent_on, tool_names
from transcript_blocks import result_text, tool_results

from jupyter_toolagent import check_pairing
from jupyter_toolagent.core.events import ToolProgressEvent
from jupyter_toolagent.testing import FakeAnthropicServer
from jupyter_toolagent.models import tool_use_block

DEFAULT_EVERYTHING = Path.home() / ".cache" / "jupyter_toolagent-test" / "npm" / "node_modules" / ".bin" / \
    "mcp-server-everything"


def everything_command() -> str:
    path = os.environ.get("TOOLAGENT_SERVER_EVERYTHING") or str(DEFAULT_EVERYTHING)
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path} is missing: scripts/test.sh installs @modelcontextprotocol/server-everything")
    return path


def test_server_everything_text_image_resources_structured_progress(server: FakeAnthropicServer,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEMO_SECRET_TOKEN", "do-not-leak-this-value-123")
    monkeypatch.setenv("DEMO_PLAIN_SETTING", "visible-setting")
    server.set_turns([[
        tool_use_block("mcp__everything__get-sum", {"a": 2, "b": 3.5}, id="toolu_sum"),
        tool_use_block("mcp__everything__get-tiny-image", {}, id="toolu_img"),
        tool_use_block("mcp__everything__get-resource-reference", {"resourceType": "Text", "resourceId": 2},
                       id="toolu_res"),
        tool_use_block("mcp__everything__get-structured-content", {"location": "Chicago"}, id="toolu_struct"),
        tool_use_block("mcp__everything__trigger-long-running-operation", {"duration": 1, "steps": 4},
                       id="toolu_long"),
        tool_use_block("mcp__everything__get-env", {}, id="toolu_env"),
        tool_use_block("mcp__everything__get-sum", {"a": "two"}, id="toolu_bad"),
    ], "ok"])
    with agent_on(server, {"everything": {"command": everything_command(), "args": ["stdio"], "trust": True}}) as agent:
        record = agent.run_sync("go")
        assert check_pairing(agent.messages) == []
        results = tool_results(agent.messages)
        assert "5.5" in result_text(results["toolu_sum"])
        assert any(b["type"] == "image" for b in results["toolu_img"]["content"])
        assert "[resource " in result_text(results["toolu_res"])
        assert "Chicago" in result_text(results["toolu_struct"]) or "temperature" in result_text(results["toolu_struct"])
        progress = [e for e in record.events if isinstance(e, ToolProgressEvent) and e.tool_use_id == "toolu_long"]
        assert progress and progress[-1].fraction == 1.0
        env_text = result_text(results["toolu_env"])
        assert "visible-setting" in env_text  # the child gets the environment …
        assert "DEMO_SECRET_TOKEN" not in env_text and "do-not-leak" not in env_text  # … minus secrets
        bad = result_text(results["toolu_bad"])
        assert '`a`: expected number, got string "two"' in bad and "missing required parameter `b`" in bad
        assert "ListMcpResources" in tool_names(server.bodies[0])


def test_mcp_server_git_over_stdio(server: FakeAnthropicServer, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git = shutil.which("git")
    assert git, "git is needed by mcp-server-git"
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    subprocess.run([git, "init", "-q", str(repo)], check=True, env=env)
    (repo / "notes.txt").write_text("first line\n")
    subprocess.run([git, "-C", str(repo), "add", "notes.txt"], check=True, env=env)
    subprocess.run([git, "-C", str(repo), "commit", "-q", "-m", "Add the notes"], check=True, env=env)
    (repo / "notes.txt").write_text("first line\nsecond line\n")
    command = str(Path(sys.executable).parent / "mcp-server-git")
    server.set_turns([[tool_use_block("mcp__git__git_status", {"repo_path": str(repo)}, id="toolu_status"),
                       tool_use_block("mcp__git__git_log", {"repo_path": str(repo)}, id="toolu_log"),
                       tool_use_block("mcp__git__git_diff_unstaged", {"repo_path": str(repo)}, id="toolu_diff")],
                      "ok"])
    with agent_on(server, {"git": {"command": command, "args": ["--repository", str(repo)]}},
                  allow=["mcp__git__git_status", "mcp__git__git_log", "mcp__git__git_diff_unstaged"]) as agent:
        agent.run_sync("go")
        assert check_pairing(agent.messages) == []
        results: dict[str, Any] = tool_results(agent.messages)
        assert "notes.txt" in result_text(results["toolu_status"])
        assert "Add the notes" in result_text(results["toolu_log"])
        assert "+second line" in result_text(results["toolu_diff"])
        names = tool_names(server.bodies[0])
        assert "mcp__git__git_commit" in names  # offered, but asks: no rule allows it
