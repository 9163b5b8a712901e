"""``ctx.flush_events()``: a tool that is about to block the loop lets the front end catch up.

It returns once the consumer of `Session.run` has handled every event emitted so far (its
``async for`` body has run for them), and after a bound when the consumer does not come back,
so a run never stalls on it.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from pydantic import BaseModel
from runtime_support import TagInput, run_config

from jupyter_toolagent.core.session import FLUSH_TIMEOUT, Session
from jupyter_toolagent.core.tool import Progress, Tool, ToolUseContext
from jupyter_toolagent.models import ScriptedModel, tool_use_block


class FlushingTool(Tool):
    """Awaits ``ctx.flush_events()`` and records what the consumer had handled by then."""

    name = "Flusher"
    description = "flushes the events, then reports"
    input_model = TagInput

    def __init__(self, handled: list[str]) -> None:
        self.handled = handled
        self.seen_at_flush: list[str] = []
        self.flush_seconds = -1.0
        self.flushed = asyncio.Event()

    async def call(self, input: BaseModel, ctx: ToolUseContext, progress: Progress) -> Any:
        start = time.monotonic()
        await ctx.flush_events()
        self.flush_seconds = time.monotonic() - start
        self.seen_at_flush = list(self.handled)
        self.flushed.set()
        return "flushed"


def one_call_model() -> ScriptedModel:
    return ScriptedModel([[tool_use_block("Flusher", {"tag": "a"})], "Done."])


@pytest.mark.asyncio
@pytest.mark.parametrize("streaming", [True, False])
async def test_flush_returns_once_the_consumer_has_handled_the_tool_s_events(streaming: bool) -> None:
    handled: list[str] = []
    tool = FlushingTool(handled)
    async for event in Session().run("go", run_config(one_call_model(), tool, streaming=streaming)):
        await asyncio.sleep(0.02)  # drawing takes a moment
        handled.append(event.kind)
    assert handled[-1] == "run_finished"
    assert "tool_queued" in tool.seen_at_flush and tool.seen_at_flush[-1] == "tool_started"
    assert tool.flush_seconds < FLUSH_TIMEOUT, "it waited for the consumer, not for the bound"


@pytest.mark.asyncio
async def test_flush_gives_up_after_the_bound_when_the_consumer_does_not_come_back() -> None:
    handled: list[str] = []
    tool = FlushingTool(handled)
    async for event in Session().run("go", run_config(one_call_model(), tool)):
        handled.append(event.kind)
        if event.kind == "tool_started":
            # a consumer busy elsewhere until the tool goes on: waiting for it would deadlock
            await asyncio.wait_for(tool.flushed.wait(), timeout=5)
    assert tool.flush_seconds >= FLUSH_TIMEOUT * 0.9
    assert tool.flush_seconds < FLUSH_TIMEOUT + 1.0
    assert handled[-1] == "run_finished"


@pytest.mark.asyncio
async def test_outside_a_session_flush_returns_at_once() -> None:
    from runtime_support import ctx_for

    start = time.monotonic()
    await ctx_for().flush_events()
    assert time.monotonic() - start < 0.05
