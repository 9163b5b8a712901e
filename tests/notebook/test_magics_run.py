"""`%%agent` and `%agent` in an in-process IPython shell (no kernel: the synchronous path).

The shared test shell has no terminal on stdin, so asks are denied by policy, as headless.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from jupyter_toolagent.notebook import agent_cell_transformer, headless
from jupyter_toolagent.notebook.sessions import current_session, registry_for
from jupyter_toolagent.testing import FakeAnthropicServer
from jupyter_toolagent.models import text_block, tool_use_block

SECRET = "sk-ant-secret-never-shown-0123456789"


def run(shell: Any, cell: str) -> str:
    """Run a cell; return everything it showed as text. Errors are raised."""
    with capture_output() as captured:
        result = shell.run_cell(cell)
    shown = captured.stdout + captured.stderr + "".join(str(o.data.get("text/plain", "")) for o in captured.outputs)
    if result.error_before_exec or result.error_in_exec:
        raise result.error_before_exec or result.error_in_exec
    return shown


def test_transformer_rewrites_only_agent_cells_into_an_await(agent_shell) -> None:
    agent_shell.autoawait = True
    lines = ["%%agent --model 'x y'\n", "line one\n", "it's \"quoted\"\n"]
    (out,) = agent_cell_transformer(lines)
    assert out.startswith("await get_ipython().magics_manager.registry['AgentMagics'].agent_cell_async(")
    call = out[out.index("(", out.index("agent_cell_async")) :].strip()
    assert eval(call.replace("(", "[", 1)[:-1] + "]") == ["--model 'x y'", "line one\nit's \"quoted\"\n"]
    for untouched in (["%%agent?\n"], ["%%agentx\n", "body\n"], ["x = 1\n"], ["%%time\n", "x\n"]):
        assert agent_cell_transformer(untouched) == untouched
    agent_shell.autoawait = False
    try:
        assert agent_cell_transformer(lines) == lines
    finally:
        agent_shell.autoawait = True


def test_scripted_cell_runs_and_conversation_continues(agent_shell) -> None:
    agent_shell.user_ns["turns"] = [[tool_use_block("ListVariables", {})], "You have some variables."]
    agent_shell.user_ns["second"] = ["Still here."]
    run(agent_shell, "%%agent --script turns\nwhat do I have?")
    session = current_session(agent_shell)
    assert [m["role"] for m in session.messages] == ["user", "assistant", "user", "assistant"]
    run(agent_shell, "%%agent --script second\nand now?")
    assert len(session.messages) == 6 and session.check_pairing() == []
    assert "(6 messages): valid — every tool_use has exactly one tool_result" in run(agent_shell, "%agent check")
    run(agent_shell, "%%agent --script second --new\nfresh")
    assert len(current_session(agent_shell).messages) == 2


def test_named_sessions_and_subcommands(agent_shell, tmp_path) -> None:
    agent_shell.user_ns["hello"] = ["hello"]
    run(agent_shell, "%%agent --script hello --session other\nhi")
    assert registry_for(agent_shell).current_name == "other"
    listing = run(agent_shell, "%agent sessions")
    assert "* other: 2 messages, 1 runs" in listing
    transcript = run(agent_shell, "%agent transcript")
    assert "2 message(s), 0 tool call(s): valid" in transcript and "messages.1 · assistant" in transcript
    raw = run(agent_shell, "%agent raw")
    assert "Raw requests of the last run in session 'other' — 1 request(s) in this run" in raw
    assert "request body:" in run(agent_shell, "%agent raw --full")
    exported = tmp_path / "t.json"
    assert "exported session 'other'" in run(agent_shell, f"%agent export {exported}")
    assert json.loads(exported.read_text())["messages"][0]["role"] == "user"
    assert "(2 messages dropped)" in run(agent_shell, "%agent reset")
    assert "has no session rules" in run(agent_shell, "%agent rules")
    for bad, message in (("", "%agent needs a subcommand"), ("frob", "unknown subcommand 'frob'"),
                         ("check now", "%agent check takes no arguments"), ("export", "usage: %agent export PATH"),
                         ("rules remove NoSuchRule", "no session rule 'NoSuchRule'")):
        with pytest.raises(UsageError, match=message):
            agent_shell.run_line_magic("agent", bad)


def test_dry_run_sends_nothing(agent_shell, monkeypatch) -> None:
    with FakeAnthropicServer(turns=["unused"]) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
        shown = run(agent_shell, "%%agent --dry-run\nwhat would you send?")
        assert server.requests == []
    assert '"messages"' in shown and "what would you send?" in shown


def test_the_api_key_is_never_shown(agent_shell, monkeypatch, tmp_path) -> None:
    def answer(body: dict[str, Any]) -> Any:
        last = body["messages"][-1]["content"]
        if isinstance(last, list) and last[0].get("type") == "tool_result":
            return [text_block("done")]
        return [tool_use_block("RunPython", {"code": "import os; os.environ['ANTHROPIC_API_KEY']"})]

    with FakeAnthropicServer(turns=answer) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
        shown = run(agent_shell, "%%agent\nshow me the key")
        shown += run(agent_shell, "%agent config") + run(agent_shell, "%agent raw") + run(agent_shell, "%agent transcript")
        run(agent_shell, f"%agent export {tmp_path / 'x.json'}")
        assert all({"x-api-key", "authorization"} & set(r.headers) for r in server.requests)
    assert "ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN: set" in shown
    assert SECRET not in shown
    assert SECRET not in (tmp_path / "x.json").read_text()


def test_config_values_reach_the_run(agent_shell, monkeypatch) -> None:
    with FakeAnthropicServer(turns=lambda body: "ok") as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
        monkeypatch.setenv("TOOLAGENT_MODEL", "claude-from-env")
        run(agent_shell, "%%agent\nhi")
        run(agent_shell, '%config AgentMagics.model = "claude-from-config"')
        run(agent_shell, "%config AgentMagics.system = 'Answer in French.'")
        run(agent_shell, "%config AgentMagics.deny = ['Bash']")
        run(agent_shell, "%%agent --system 'Be brief.'\nhi")
        bodies = [r.body for r in server.requests]
    assert bodies[0]["model"] == "claude-from-env"
    assert bodies[1]["model"] == "claude-from-config"
    system = json.dumps(bodies[1]["system"])
    assert "Answer in French." in system and "Be brief." in system
    assert "Bash" in [t["name"] for t in bodies[0]["tools"]]
    assert "Bash" not in [t["name"] for t in bodies[1]["tools"]]  # a whole-tool deny hides it
    with pytest.raises(Exception, match="AgentMagics.mode must be one of"):
        agent_shell.magics_manager.registry["AgentMagics"].mode = "yolo"


def test_tools_option_limits_and_wraps_plain_functions(agent_shell) -> None:
    def area(width: float, height: float) -> float:
        """Area of a rectangle."""
        return width * height

    agent_shell.user_ns["area"] = area
    agent_shell.user_ns["turns"] = [[tool_use_block("area", {"width": 2, "height": 3})], "six"]
    run(agent_shell, "%%agent --script turns --tools area,ListVariables --allow area\nhow big?")
    session = current_session(agent_shell)
    tools = [t["name"] for t in session.runs[-1].requests[0]["tools"]]
    assert sorted(tools) == ["ListVariables", "ReadToolOutput", "area"]
    result = session.messages[2]["content"][0]
    assert result["type"] == "tool_result" and not result.get("is_error") and "6" in json.dumps(result["content"])


def test_always_allow_adds_a_session_rule_that_outlives_new_and_can_be_removed(agent_shell, monkeypatch) -> None:
    monkeypatch.setattr(headless, "stdin_is_terminal", lambda: True)  # the [y/N] prompt path
    monkeypatch.setattr("sys.stdin", io.StringIO("a\n"))
    agent_shell.user_ns["turns"] = [[tool_use_block("RunPython", {"code": "ALWAYS = 1"})], "ok"]
    run(agent_shell, "%%agent --script turns\nset it")
    assert agent_shell.user_ns.get("ALWAYS") == 1
    assert "allow RunPython" in run(agent_shell, "%agent rules")
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # nobody answers any more
    agent_shell.user_ns["turns"] = [[tool_use_block("RunPython", {"code": "ALWAYS = 2"})], "ok"]
    run(agent_shell, "%%agent --script turns --new\nset it again")
    assert agent_shell.user_ns["ALWAYS"] == 2  # the session rule allowed it without asking
    assert "removed session rule 'RunPython'" in run(agent_shell, "%agent rules remove RunPython")
    assert "has no session rules" in run(agent_shell, "%agent rules")


def test_settings_file_is_read_before_anything_runs(agent_shell, monkeypatch, tmp_path) -> None:
    (tmp_path / ".toolagent").mkdir()
    (tmp_path / ".toolagent" / "settings.json").write_text('{"permissions": {"allow": "not a list"}}')
    monkeypatch.chdir(tmp_path)
    agent_shell.user_ns["turns"] = ["never played"]
    with pytest.raises(UsageError) as info:
        agent_shell.run_cell_magic("agent", "--script turns", "hi")
    assert "settings.json" in str(info.value) and "\n" not in str(info.value)
    assert current_session(agent_shell).runs == []


def test_settings_file_mode_is_not_overridden_by_the_config_default(agent_shell, monkeypatch, tmp_path) -> None:
    (tmp_path / ".toolagent").mkdir()
    (tmp_path / ".toolagent" / "settings.json").write_text('{"mode": "plan"}')
    monkeypatch.chdir(tmp_path)
    agent_shell.user_ns["turns"] = [[tool_use_block("RunPython", {"code": "PLANNED = 1"})], "ok"]
    run(agent_shell, "%%agent --script turns --allow RunPython\ntry it")
    result = current_session(agent_shell).messages[2]["content"][0]
    assert result["is_error"] and "PLANNED" not in agent_shell.user_ns
    assert "plan" in json.dumps(result["content"])


def test_a_denial_in_a_cell_names_the_allow_flag(agent_shell) -> None:
    agent_shell.user_ns["run_turns"] = [[tool_use_block("RunPython", {"code": "1 + 1"}, id="toolu_p")], "Not run."]
    run(agent_shell, "%%agent --script run_turns --new\nadd")
    session = current_session(agent_shell)
    result = next(b for m in session.messages if m["role"] == "user" and isinstance(m["content"], list)
                  for b in m["content"] if b.get("type") == "tool_result")
    text = result["content"] if isinstance(result["content"], str) else " ".join(b["text"] for b in result["content"])
    assert result["is_error"] is True
    assert "To allow it, add `--allow 'RunPython'`." in text and "Agent(" not in text
