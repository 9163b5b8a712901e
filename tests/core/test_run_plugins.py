"""`RunConfig.plugins`: the session takes the rule engine, the hooks and function tools from
what it is given, never from a package above the core; without them it is the bare core and
says so before anything is sent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from runtime_support import StubHooks, allow_all

from jupyter_toolagent import Agent
from jupyter_toolagent.core.permission_types import PermissionDecision
from jupyter_toolagent.core.run_plugins import RunPlugins
from jupyter_toolagent.core.session import RunConfig, Session
from jupyter_toolagent.core.tool import Tool, ToolPool
from jupyter_toolagent.defaults import DefaultPlugins, default_plugins
from jupyter_toolagent.errors import ConfigError
from jupyter_toolagent.hooks import RegistryHookRunner
from jupyter_toolagent.models import ScriptedModel, tool_use_block
from jupyter_toolagent.permissions import PermissionContext, RuleBasedPermissions
from jupyter_toolagent.tools.function_tool import FunctionTool, tool


class Counting:
    """A model that counts the requests it was sent."""

    def __init__(self, turns: list[Any]) -> None:
        self.inner, self.sent = ScriptedModel(turns), 0

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    async def stream(self, body: dict[str, Any], *, abort: Any) -> Any:
        self.sent += 1
        async for event in self.inner.stream(body, abort=abort):
            yield event


class RecordingPlugins:
    """A `RunPlugins` that says which of its parts the session used."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.hooks_runner = StubHooks()

    def permission_state(self, cwd: Path) -> Any:
        self.calls.append(f"permission_state {cwd.name}")
        return PermissionContext(cwd=cwd)

    def parse_mode(self, text: str) -> Any:
        self.calls.append(f"parse_mode {text}")
        return text

    def can_use_tool(self, config: RunConfig) -> Any:
        self.calls.append("can_use_tool")
        return allow_all

    def hooks(self) -> Any:
        self.calls.append("hooks")
        return self.hooks_runner

    def as_tool(self, value: Any) -> Tool:
        self.calls.append(f"as_tool {value.__name__}")
        return FunctionTool(value)

    def visible_tools(self, pool: ToolPool, permissions: Any) -> ToolPool:
        self.calls.append("visible_tools")
        return pool.without(["hidden"])


def shout(text: str) -> str:
    """Shout it."""
    return text.upper()


def hidden() -> str:
    return "never offered"


async def run(session: Session, config: RunConfig) -> list[Any]:
    return [event async for event in session.run("go", config)]


@pytest.mark.asyncio
async def test_the_session_uses_the_plugins_it_is_given(tmp_path: Path) -> None:
    plugins = RecordingPlugins()
    model = ScriptedModel([[tool_use_block("shout", {"text": "hi"})], "ok"])
    config = RunConfig(model=model, tool_provider=lambda: [shout, hidden], plugins=plugins, cwd=tmp_path,
                       mode="plan")
    session = Session(cwd=tmp_path)
    events = await run(session, config)
    assert events[-1].reason == "end_turn"
    assert plugins.calls[:4] == [f"permission_state {tmp_path.name}", "parse_mode plan", "can_use_tool", "hooks"]
    assert plugins.calls.count("permission_state " + tmp_path.name) == 1  # the rule state is the session's
    assert {"as_tool shout", "as_tool hidden", "visible_tools"} <= set(plugins.calls)
    assert ["shout", "hi"] in [[t, i.get("text")] for t, i in plugins.hooks_runner.seen]
    assert isinstance(session.permissions, PermissionContext)
    assert session.permissions.base_mode == "default"  # a run's mode ends with the run
    result = session.messages[2]["content"][0]
    assert result["type"] == "tool_result" and result["content"] == "HI"


@pytest.mark.asyncio
async def test_given_parts_of_the_config_win_over_the_plugins(tmp_path: Path) -> None:
    plugins = RecordingPlugins()

    async def deny_all(tool: Any, input: Any, ctx: Any, *, tool_use_id: str, hook_decision: Any) -> PermissionDecision:
        return PermissionDecision.deny("no", "policy")

    config = RunConfig(model=ScriptedModel([[tool_use_block("shout", {"text": "hi"})], "ok"]),
                       tool_provider=lambda: [FunctionTool(shout)], can_use_tool=deny_all, hooks=StubHooks(),
                       plugins=plugins, cwd=tmp_path)
    await run(Session(cwd=tmp_path), config)
    assert "can_use_tool" not in plugins.calls and "hooks" not in plugins.calls


BARE_MISTAKES = {
    "no permission callable": {},
    "a rule": {"can_use_tool": allow_all, "allow": ["Bash"]},
    "a deny rule": {"can_use_tool": allow_all, "deny": ["Bash"]},
    "a mode": {"can_use_tool": allow_all, "mode": "plan"},
}


@pytest.mark.parametrize("given", BARE_MISTAKES.values(), ids=list(BARE_MISTAKES))
@pytest.mark.asyncio
async def test_the_bare_core_refuses_what_only_plugins_can_do_before_sending(given: dict[str, Any]) -> None:
    model, session = Counting(["ok"]), Session()
    with pytest.raises(ConfigError, match="plugins="):
        await run(session, RunConfig(model=model, hooks=StubHooks(), **given))
    assert model.sent == 0 and session.runs == [] and session.messages == []


@pytest.mark.parametrize("given", [FunctionTool(shout), tool(lambda text: text.upper(), name="shout")],
                         ids=["a Tool", "an @tool function"])
@pytest.mark.asyncio
async def test_the_bare_core_runs_tools_and_refuses_plain_functions(given: Any) -> None:
    ok = RunConfig(model=ScriptedModel([[tool_use_block("shout", {"text": "hi"})], "ok"]),
                   tool_provider=lambda: [given], can_use_tool=allow_all, hooks=StubHooks())
    session = Session()
    events = await run(session, ok)
    assert events[-1].reason == "end_turn" and session.permissions is None
    assert session.messages[2]["content"][0]["content"] == "HI"
    plain = RunConfig(model=ScriptedModel([[tool_use_block("shout", {"text": "hi"})], "ok"]),
                      tool_provider=lambda: [shout], can_use_tool=allow_all, hooks=StubHooks())
    finished = (await run(Session(), plain))[-1]
    assert finished.reason == "error" and "is not a Tool" in (finished.error or "")


def test_the_default_plugins_are_the_rule_engine_the_hook_registry_and_function_tools(tmp_path: Path) -> None:
    plugins: RunPlugins = default_plugins()
    assert isinstance(plugins, DefaultPlugins) and default_plugins() is plugins
    state = plugins.permission_state(tmp_path)
    assert isinstance(state, PermissionContext) and Path(state.cwd) == tmp_path
    assert plugins.parse_mode("accept-edits") == "acceptEdits"
    with pytest.raises(ConfigError):
        plugins.parse_mode("sometimes")
    assert isinstance(plugins.can_use_tool(RunConfig(model=ScriptedModel(["ok"]))), RuleBasedPermissions)
    assert isinstance(plugins.hooks(), RegistryHookRunner)
    assert isinstance(plugins.as_tool(tool(shout)), FunctionTool)
    denied = PermissionContext(cwd=tmp_path, deny=["shout"])
    assert plugins.visible_tools(ToolPool([FunctionTool(shout), FunctionTool(hidden)]), denied).names() == ["hidden"]


def test_agent_wires_the_default_plugins() -> None:
    assert Agent(ScriptedModel(["ok"])).config.plugins is default_plugins()
