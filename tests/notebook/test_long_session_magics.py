"""``%agent context | compact | sessions | resume``, the footer's context share, and saving
through the magic (SPEC §14) — in the in-process shell, against the fake server over HTTP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError

from jupyter_toolagent.notebook.sessions import current_session, registry_for
from jupyter_toolagent.testing import FakeAnthropicServer
from jupyter_toolagent.models import tool_use_block
from test_magics_run import run

WINDOW = 9000


def measuring_turns(body: dict[str, Any]) -> Any:
    last = body["messages"][-1]["content"]
    calls = sum(1 for m in body["messages"] if m["role"] == "assistant")
    if isinstance(last, list) and last and last[0].get("type") == "tool_result" and calls % 4 == 3:
        return "Measured."
    return [tool_use_block("measure", {"n": calls})]


@pytest.fixture
def long_shell(agent_shell: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.chdir(tmp_path)

    def measure(n: int) -> str:
        """Measure step n.

        Args:
            n: the step
        """
        return f"step {n}: " + "v" * 400

    from jupyter_toolagent import tool

    agent_shell.user_ns["measure"] = tool(read_only=True)(measure)
    run(agent_shell, "%config AgentMagics.save_sessions = True")
    run(agent_shell, f"%config AgentMagics.context_window = {WINDOW}")
    try:
        yield agent_shell
    finally:
        run(agent_shell, "%config AgentMagics.save_sessions = False")
        run(agent_shell, "%config AgentMagics.context_window = 0")
        agent_shell.user_ns.pop("measure", None)


def test_context_compact_sessions_and_resume(long_shell: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeAnthropicServer(turns=measuring_turns, context_window=WINDOW) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-fake-key-for-the-magic-test")
        shown = run(long_shell, "%%agent\nMeasure a few steps.")
        shown += run(long_shell, "%%agent\nAnd a few more.")
        assert f"% of {WINDOW:,}" in shown and "context " in shown, "the footer shows the window's fill"
        assert server.too_long_answers == 0

        context = run(long_shell, "%agent context")
        assert f"of {WINDOW:,}" in context and "largest tool results sent:" in context and "measure" in context
        assert "system " in context and "tools " in context and "messages " in context

        compacted = run(long_shell, "%agent compact --keep 1")
        assert "Context compacted (manual)" in compacted, compacted
        session = current_session(long_shell)
        assert session.context.compactions[-1].reason == "manual"
        transcript = run(long_shell, "%agent transcript")
        assert "(manual" in transcript and "sent as one summary" in transcript
        assert "cleared from what is sent" in transcript

        run(long_shell, "%%agent\nOne more after the compaction.")
        after = server.bodies[-1]["messages"]
        assert "[Summary of the earlier part" in json.dumps(after[0])
        assert len(after) < len(session.messages), "the compacted view is what is sent; the original stays"

        listing = run(long_shell, "%agent sessions")
        assert "saved in .toolagent/sessions/" in listing and "default (live)" in listing

        run(long_shell, "%config AgentMagics.save_sessions = False")
        run(long_shell, "%%agent --session private\nNot saved, please.")
        assert not (tmp_path / ".toolagent" / "sessions" / "private.jsonl").exists()
        run(long_shell, "%config AgentMagics.save_sessions = True")

        registry_for(long_shell).clear()  # as after a kernel restart: nothing live
        listing = run(long_shell, "%agent sessions")
        assert "default:" in listing and "(none yet" in listing
        resumed = run(long_shell, "%%agent --session default\nWhere were we?")
        assert "resumed session 'default'" in resumed
        restored = current_session(long_shell)
        assert restored.name == "default" and restored.context.compactions, "compactions come back too"
        assert "[Summary of the earlier part" in json.dumps(server.bodies[-1]["messages"][0])

        with pytest.raises(UsageError, match="no saved session 'nope'"):
            long_shell.run_line_magic("agent", "resume nope")
        with pytest.raises(UsageError, match="usage: %agent compact"):
            long_shell.run_line_magic("agent", "compact --keep x")
        with pytest.raises(UsageError, match="usage: %agent resume NAME"):
            long_shell.run_line_magic("agent", "resume")


def test_a_foreign_file_is_one_line(long_shell: Any, tmp_path: Path) -> None:
    directory = tmp_path / ".toolagent" / "sessions"
    directory.mkdir(parents=True)
    (directory / "odd.jsonl").write_text('{"hello": "world"}\n')
    with pytest.raises(UsageError, match="odd.jsonl is not a saved jupyter_toolagent session"):
        long_shell.run_line_magic("agent", "resume odd")
    assert "! odd.jsonl is not a saved jupyter_toolagent session" in run(long_shell, "%agent sessions")


def test_bad_window_settings_are_refused(long_shell: Any) -> None:
    magics = long_shell.magics_manager.registry["AgentMagics"]
    with pytest.raises(Exception, match="AgentMagics.compact_at must be a share"):
        magics.compact_at = 1.5
    with pytest.raises(Exception, match="AgentMagics.context_window must be 0"):
        magics.context_window = -5
    assert (magics.compact_at, magics.context_window) == (0.8, WINDOW), "a refused value is never stored"
