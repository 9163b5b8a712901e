"""A denial's hint says how to allow the call on the surface in use: ``--allow 'Rule'`` in a
``%%agent`` cell, ``allow=["Rule"]`` for `Agent(...)` — never the other one's syntax."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fakes import BASH, make_ctx

from jupyter_toolagent import Agent
from jupyter_toolagent.core.permission_types import how_to_allow
from jupyter_toolagent.core.tool import ToolOptions
from jupyter_toolagent.core.tool_call import ToolCall
from jupyter_toolagent.models.anthropic import AnthropicModel
from jupyter_toolagent.permissions import PermissionContext, RuleBasedPermissions
from jupyter_toolagent.testing import FakeAnthropicServer
from jupyter_toolagent.models import tool_use_block

KEY = "sk-ant-api03-" + "Hn2" * 10


def test_the_instruction_for_each_surface() -> None:
    assert how_to_allow("Bash(git push:*)", "cell") == "add `--allow 'Bash(git push:*)'`"
    assert how_to_allow("Bash(git push:*)", "python") == 'pass `allow=["Bash(git push:*)"]` to `Agent(...)`'
    assert how_to_allow("Bash(echo 'hi')", "cell") == "add `--allow 'Bash(echo '\"'\"'hi'\"'\"')'`"
    assert how_to_allow('Bash(echo "hi")', "python") == 'pass `allow=["Bash(echo \\"hi\\")"]` to `Agent(...)`'


@pytest.mark.asyncio
@pytest.mark.parametrize("mode", ["default", "dontAsk"])
@pytest.mark.parametrize("surface", ["cell", "python"])
async def test_the_engine_phrases_the_hint_for_the_contexts_surface(tmp_path: Path, mode: str, surface: str) -> None:
    perms = PermissionContext(cwd=tmp_path, mode=mode)
    ctx = make_ctx(perms)
    ctx = ctx.replace(options=ToolOptions(cwd=tmp_path, rule_surface=surface))  # type: ignore[arg-type]
    decision = await RuleBasedPermissions(None, interactive=False)(
        ToolCall.of(BASH, {"command": "git push"}, ctx, "toolu_1"), ctx)
    assert decision.behavior == "deny"
    if surface == "cell":
        assert "add `--allow 'Bash(git push:*)'`" in decision.message and "Agent(" not in decision.message
    else:
        assert 'allow=["Bash(git push:*)"]' in decision.message and "--allow" not in decision.message


def result_text(result: dict[str, Any]) -> str:
    content = result["content"]
    return content if isinstance(content, str) else "\n".join(b.get("text", "") for b in content)


@pytest.mark.asyncio
async def test_agent_over_the_real_sdk_names_allow_keyword(tmp_path: Path, no_real_api: None) -> None:
    turns = [[tool_use_block("Bash", {"command": "git push origin main"}, id="toolu_push")], "Denied, fine."]
    with FakeAnthropicServer(turns=turns) as server:
        model = AnthropicModel("claude-sonnet-5-5", base_url=server.base_url, api_key=KEY)
        agent = Agent(model, builtin_tools=True, cwd=tmp_path)
        await agent.run("push it")
        result = next(b for b in server.bodies[1]["messages"][-1]["content"] if b.get("type") == "tool_result")
    text = result_text(result)
    assert result["is_error"] is True
    assert 'To allow it, pass `allow=["Bash(git push:*)"]` to `Agent(...)`.' in text and "--allow" not in text
