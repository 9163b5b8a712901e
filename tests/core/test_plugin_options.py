"""Typed run options: the loop settings are `RunConfig` fields, plug-in options travel by type.

`PluginOptions` is checked as a value (lookup by type, defaults, immutability) and through a
real run of the query loop: what `RunConfig.plugin_options` holds is what a tool's
``ctx.options.plugins`` returns, and ``max_continuations`` bounds the continuations.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from jupyter_toolagent.core.session import RunConfig, Session
from jupyter_toolagent.core.tool import PluginOptions, Progress, Tool, ToolResult, ToolUseContext
from jupyter_toolagent.errors import ModelAPIError
from jupyter_toolagent.models import ScriptedModel, text_block, tool_use_block
from jupyter_toolagent.tools.options import BuiltinToolOptions

from runtime_support import Raise, RawModel, finished, message_events, run, run_config


@dataclasses.dataclass(frozen=True)
class Marker:
    value: int = 0


@dataclasses.dataclass(frozen=True)
class Other:
    text: str = "default"


def test_an_absent_type_reads_as_its_defaults_and_find_says_absent() -> None:
    options = PluginOptions()
    assert options.get(Marker) == Marker()
    assert options.find(Marker) is None
    assert options.get(BuiltinToolOptions).grep_backend == "auto"


@given(st.lists(st.one_of(st.builds(Marker, st.integers()), st.builds(Other, st.text(max_size=5))), max_size=6))
def test_the_last_object_of_each_type_wins_and_with_options_copies(items: list[Any]) -> None:
    options = PluginOptions(*items)
    for kind in (Marker, Other):
        given_of_kind = [i for i in items if type(i) is kind]
        assert options.find(kind) == (given_of_kind[-1] if given_of_kind else None)
    changed = options.with_options(Marker(-1))
    assert changed.get(Marker) == Marker(-1)
    assert changed.find(Other) == options.find(Other)  # other types are kept
    assert options.find(Marker) == next((i for i in reversed(items) if type(i) is Marker), None)  # not mutated


def test_a_misspelled_option_is_an_error_not_a_silent_default() -> None:
    with pytest.raises(TypeError):
        BuiltinToolOptions(grep_backnd="python")  # type: ignore[call-arg]  # the point of the test
    with pytest.raises(AttributeError):
        PluginOptions(BuiltinToolOptions()).get(BuiltinToolOptions).grep_backnd  # type: ignore[attr-defined]


class ReadInput(BaseModel):
    pass


class ReadsOptions(Tool):
    """Reports the plug-in options and the run settings its call sees."""

    name = "ReadsOptions"
    input_model = ReadInput

    async def call(self, input: BaseModel, ctx: ToolUseContext, progress: Progress) -> ToolResult:
        run_config = ctx.options.run
        assert run_config is not None
        return ToolResult(f"marker={ctx.options.plugins.get(Marker).value} other={ctx.options.plugins.get(Other).text} "
                          f"streaming={run_config.streaming_tools}")


@pytest.mark.asyncio
@pytest.mark.parametrize("streaming", [True, False])
async def test_plugin_options_reach_the_tool_through_a_run(streaming: bool) -> None:
    model = ScriptedModel([[tool_use_block("ReadsOptions", {}, id="toolu_1")], "Done."])
    config = run_config(model, ReadsOptions(), streaming=streaming, plugin_options=PluginOptions(Marker(7)))
    session = Session()
    await run(session, "go", config)
    result = session.messages[2]["content"][0]
    assert result["tool_use_id"] == "toolu_1"
    text = result["content"] if isinstance(result["content"], str) else result["content"][0]["text"]
    assert text == f"marker=7 other=default streaming={streaming}"


@pytest.mark.asyncio
@pytest.mark.parametrize("limit", [0, 1, 2])
async def test_max_continuations_bounds_the_continuations(limit: int) -> None:
    events = message_events([text_block("first paragraph"), text_block("second paragraph")], "end_turn", text_chunk=6)
    cut = next(i for i, e in enumerate(events) if e["type"] == "content_block_start" and e["index"] == 1)
    overloaded = Raise(ModelAPIError("overloaded", status=200, error_type="overloaded_error"))
    model = RawModel([[*events[:cut + 2], overloaded]] * 4)
    result = await run(Session(), "hi", run_config(model, continuation_delay=0, max_continuations=limit))
    assert finished(result).reason == "api_error"
    assert len(model.requests) == limit + 1


def test_run_config_defaults_are_the_documented_ones() -> None:
    config = RunConfig(model=ScriptedModel([]))
    assert (config.streaming_tools, config.defer_tools, config.max_continuations, config.continuation_delay) == \
        (True, "auto", 3, 0.5)
    assert config.plugin_options == PluginOptions()
