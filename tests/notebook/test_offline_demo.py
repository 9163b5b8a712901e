"""Model choice and the offline demo (no key: a built-in fake server with scripted turns)."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from jupyter_toolagent.models.anthropic import AnthropicModel
from jupyter_toolagent.models import ScriptedModel
from jupyter_toolagent.notebook import offline
from jupyter_toolagent.notebook.sessions import current_session


def test_model_name_precedence(no_anthropic_env, monkeypatch) -> None:
    assert offline.resolve_model_name(None, "") == offline.DEFAULT_MODEL
    monkeypatch.setenv("TOOLAGENT_MODEL", "from-env")
    assert offline.resolve_model_name(None, "") == "from-env"
    assert offline.resolve_model_name(None, "from-config") == "from-config"
    assert offline.resolve_model_name("from-flag", "from-config") == "from-flag"


def test_default_model_is_in_the_sdk_list() -> None:
    import typing

    from anthropic.types.model_param import ModelParam

    known = typing.get_args(typing.get_args(ModelParam)[0])
    assert offline.DEFAULT_MODEL in known


def test_choices(no_anthropic_env, monkeypatch) -> None:
    ns = {"turns": ["hi"], "fn": lambda body: "hi", "ready": ScriptedModel(["x"]), "number": 3}
    assert isinstance(offline.choose_model("m", script_var="turns", user_ns=ns).model, ScriptedModel)
    assert isinstance(offline.choose_model("m", script_var="fn", user_ns=ns).model, ScriptedModel)
    assert offline.choose_model("m", script_var="ready", user_ns=ns).model is ns["ready"]
    with pytest.raises(UsageError, match="expected a list of turns"):
        offline.choose_model("m", script_var="number", user_ns=ns)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    choice = offline.choose_model("m", script_var=None, user_ns=ns)
    assert isinstance(choice.model, AnthropicModel) and choice.notice is None and not offline.demo_server_running()
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    choice = offline.choose_model("m", script_var=None, user_ns=ns)
    assert choice.notice is None and choice.model._api_key == offline.PLACEHOLDER_KEY
    monkeypatch.delenv("ANTHROPIC_BASE_URL")
    with pytest.raises(UsageError, match="no API key"):
        offline.choose_model("m", script_var=None, user_ns=ns, offline_demo=False)


def demo_tools(*names: str) -> list[dict]:
    schemas = {"InspectVariable": {"required": ["path"]}, "RunPython": {"required": ["code"]}, "ListVariables": {}}
    return [{"name": n, "input_schema": schemas[n]} for n in names]


def test_demo_script_walks_through_the_quickstart() -> None:
    tools = demo_tools("ListVariables", "InspectVariable", "RunPython")
    messages = [{"role": "user", "content": "look at my data"}]
    first = offline.demo_turn({"messages": messages, "tools": tools})
    assert "Offline demo" in first[0]["text"] and first[1]["name"] == "ListVariables"
    first[1]["id"] = "t1"
    messages += [{"role": "assistant", "content": first},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                               "content": "Variables (1):\n  sales: pandas DataFrame 3×2"}]}]
    second = offline.demo_turn({"messages": messages, "tools": tools})
    assert second[1] == {"type": "tool_use", "name": "InspectVariable", "input": {"path": "sales"}}
    second[1]["id"] = "t2"
    messages += [{"role": "assistant", "content": second},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "sales = ..."}]}]
    third = offline.demo_turn({"messages": messages, "tools": tools})
    assert third[1]["name"] == "RunPython" and "sales.describe()" in third[1]["input"]["code"]
    third[1]["id"] = "t3"
    messages += [{"role": "assistant", "content": third},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t3", "is_error": True,
                                               "content": "Permission to use RunPython needs approval"}]}]
    last = offline.demo_turn({"messages": messages, "tools": tools})
    assert len(last) == 1 and "`RunPython` refused or failed: Permission" in last[0]["text"]
    assert "ANTHROPIC_API_KEY" in last[0]["text"]
    # a new prompt starts over; without a DataFrame the snippet builds one; absent tools are skipped
    messages.append({"role": "assistant", "content": last})
    messages.append({"role": "user", "content": "again"})
    again = offline.demo_turn({"messages": messages, "tools": demo_tools("RunPython")})
    assert again[1]["name"] == "RunPython" and "demo_df = pd.DataFrame" in again[1]["input"]["code"]


def test_offline_demo_end_to_end(agent_shell, no_anthropic_env) -> None:
    import pandas as pd

    agent_shell.user_ns["sales"] = pd.DataFrame({"region": ["n", "s"], "units": [3, 5]})
    try:
        with capture_output() as captured:
            result = agent_shell.run_cell("%%agent\nWhat is in my data?")
        assert result.success, result.error_in_exec
        shown = captured.stdout + "".join(str(o.data.get("text/plain", "")) for o in captured.outputs)
        assert offline.OFFLINE_NOTICE in shown
        assert offline.OFFLINE_NOTICE == ("offline demo: scripted turns from the built-in fake server; "
                                          "set ANTHROPIC_API_KEY to use Claude")
        session = current_session(agent_shell)
        names = [b["name"] for m in session.messages if m["role"] == "assistant"
                 for b in m["content"] if b["type"] == "tool_use"]
        assert names == ["ListVariables", "InspectVariable", "RunPython"]
        assert session.check_pairing() == []
        assert offline.demo_server_running()
        assert offline.demo_server().keep == offline.DEMO_SERVER_KEEPS  # it lives as long as the kernel
    finally:
        agent_shell.run_line_magic("unload_ext", "jupyter_toolagent")
        agent_shell.run_line_magic("load_ext", "jupyter_toolagent")
    assert not offline.demo_server_running()  # %unload_ext stopped it
