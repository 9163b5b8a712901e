"""`Agent(...)` and `Agent.run_sync(...)` refuse keywords they do not take, naming the one meant;
the typed options they do take reach the run (over the real SDK and HTTP to the fake server)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from jupyter_toolagent import Agent, ConfigError
from jupyter_toolagent.agent import _keywords
from jupyter_toolagent.core.tool import Progress, Tool, ToolResult, ToolUseContext
from jupyter_toolagent.errors import UnknownKeywordError
from jupyter_toolagent.models import ScriptedModel, tool_use_block
from jupyter_toolagent.models.anthropic import AnthropicModel
from jupyter_toolagent.testing import FakeAnthropicServer
from jupyter_toolagent.tools.options import BuiltinToolOptions

KEYWORDS = _keywords(Agent.__init__)


def typos(word: str) -> st.SearchStrategy[str]:
    """One everyday slip: a letter dropped, doubled, or two neighbours swapped."""
    positions = st.integers(0, len(word) - 1)
    dropped = positions.map(lambda i: word[:i] + word[i + 1:])
    doubled = positions.map(lambda i: word[:i] + word[i] + word[i:])
    swapped = st.integers(0, len(word) - 2).map(lambda i: word[:i] + word[i + 1] + word[i] + word[i + 2:])
    return st.one_of(dropped, doubled, swapped).filter(lambda t: t != word and t not in KEYWORDS)


def test_max_turn_names_max_turns() -> None:
    with pytest.raises(UnknownKeywordError) as info:
        Agent(ScriptedModel([]), max_turn=3)  # type: ignore[arg-type]  # the typo under test (mypy sees it too)
    assert str(info.value) == "Agent() got an unexpected keyword argument 'max_turn'; did you mean 'max_turns'?"
    assert isinstance(info.value, TypeError) and isinstance(info.value, ConfigError)
    assert info.value.meant == {"max_turn": "max_turns"}


@settings(max_examples=300)
@given(st.sampled_from([k for k in KEYWORDS if len(k) >= 4]).flatmap(lambda k: st.tuples(st.just(k), typos(k))))
def test_a_slip_in_any_keyword_names_that_keyword(case: tuple[str, str]) -> None:
    meant, typo = case
    with pytest.raises(UnknownKeywordError) as info:
        slip: dict[str, Any] = {typo: 1}
        Agent(ScriptedModel([]), **slip)
    assert info.value.meant == {typo: meant}
    assert f"did you mean {meant!r}?" in str(info.value)


def test_a_keyword_like_nothing_lists_what_is_taken() -> None:
    with pytest.raises(UnknownKeywordError) as info:
        Agent(ScriptedModel([]), zzqx=1)  # type: ignore[arg-type]  # an unknown keyword on purpose
    assert info.value.meant == {"zzqx": None}
    assert "max_turns" in str(info.value) and "plugin_options" in str(info.value)


def test_every_keyword_the_agent_takes_is_accepted() -> None:
    agent = Agent(ScriptedModel([]), max_turns=3, max_tokens=100, streaming_tools=False, defer_tools="never",
                  max_continuations=1, continuation_delay=0.0, plugin_options=[BuiltinToolOptions(grep_backend="python")],
                  subagents=False, compact_at=0.7, system="s")
    config = agent.config
    assert (config.max_turns, config.streaming_tools, config.defer_tools, config.max_continuations,
            config.continuation_delay) == (3, False, "never", 1, 0.0)
    assert config.plugin_options.get(BuiltinToolOptions).grep_backend == "python"


def test_run_sync_refuses_a_misspelled_keyword() -> None:
    agent = Agent(ScriptedModel(["Done."]))
    with pytest.raises(UnknownKeywordError, match="did you mean 'on_event'"):
        agent.run_sync("hi", on_evnt=print)  # type: ignore[arg-type]  # the typo under test
    assert agent.messages == []  # nothing ran
    seen: list[Any] = []
    agent.run_sync("hi", on_event=seen.append)
    assert seen and seen[-1].kind == "run_finished"


class ShowInput(BaseModel):
    pass


class ShowOptions(Tool):
    name = "ShowOptions"
    input_model = ShowInput

    async def call(self, input: BaseModel, ctx: ToolUseContext, progress: Progress) -> ToolResult:
        return ToolResult(f"grep_backend={ctx.options.plugins.get(BuiltinToolOptions).grep_backend}")


@pytest.mark.asyncio
async def test_plugin_options_given_to_agent_reach_a_tool_over_http() -> None:
    turns: list[Any] = [[tool_use_block("ShowOptions", {}, id="toolu_show")], "Done."]
    with FakeAnthropicServer(turns=turns) as server:
        model = AnthropicModel("claude-sonnet-5-5", base_url=server.base_url, api_key="sk-ant-test-000")
        agent = Agent(model, tools=[ShowOptions()], allow=["ShowOptions"], continuation_delay=0,
                      plugin_options=[BuiltinToolOptions(grep_backend="python")])
        try:
            record = await agent.run("show")
        finally:
            await model.aclose()
        assert record.finish_reason == "end_turn"
        sent = server.requests[1].body["messages"][-1]["content"][0]
    assert sent["tool_use_id"] == "toolu_show"
    content = sent["content"] if isinstance(sent["content"], str) else sent["content"][0]["text"]
    assert content == "grep_backend=python"
