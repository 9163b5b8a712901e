"""Real runs for the view tests: a `Session` driven by a `ScriptedModel`, small tools that sleep,
a permission callback (allow all, or the core's `SimplePolicy` with a real approver) and a hook
runner that does nothing. The views are then built from what the run recorded."""

from __future__ import annotations

import asyncio
import re
from typing import Any, Sequence

from pydantic import BaseModel, ConfigDict

from jupyter_toolagent.core.events import AgentEvent
from jupyter_toolagent.core.hook_types import PostToolUseOutcome, PreToolUseOutcome
from jupyter_toolagent.core.permission_types import PermissionDecision
from jupyter_toolagent.core.session import RunConfig, Session
from jupyter_toolagent.core.tool import Progress, Tool, ToolUseContext
from jupyter_toolagent.models.scripted import ScriptedModel

HTML_TAG = re.compile(r"<\s*/?\s*[a-zA-Z][a-zA-Z0-9-]*(\s[^<>]*)?>")


class TagInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tag: str = ""


class SleepTool(Tool):
    """Sleeps ``delay`` seconds and answers ``"<name> <tag> done"``; safe or not as told."""

    input_model = TagInput

    def __init__(self, name: str, *, safe: bool, delay: float = 0.05, output: str | None = None) -> None:
        self.name = name
        self.description = f"sleeps {delay}s ({'concurrency-safe' if safe else 'not concurrency-safe'})"
        self.safe = safe
        self.delay = delay
        self.output = output

    def is_concurrency_safe(self, input: BaseModel) -> bool:
        return self.safe

    def is_read_only(self, input: BaseModel) -> bool:
        return self.safe

    async def call(self, input: BaseModel, ctx: ToolUseContext, progress: Progress) -> Any:
        await asyncio.sleep(self.delay)
        assert isinstance(input, TagInput)
        return self.output if self.output is not None else f"{self.name} {input.tag} done"


async def allow_all(tool, input, ctx, *, tool_use_id, hook_decision):  # noqa: ANN001
    return PermissionDecision.allow("test")


class NoHooks:
    """A HookRunner with no hooks (the hook registry is not what these tests are about)."""

    async def pre_tool_use(self, tool, input, tool_use_id, ctx):  # noqa: ANN001
        return PreToolUseOutcome()

    async def post_tool_use(self, tool, input, tool_use_id, result, ctx, *, failed):  # noqa: ANN001
        return PostToolUseOutcome()

    async def stop(self, ctx, reason):  # noqa: ANN001
        return PostToolUseOutcome()


def use(name: str, tag: str, tool_use_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_use_id, "name": name, "input": {"tag": tag}}


def config(turns: Sequence[Any], tools: Sequence[Tool], *, streaming: bool = True, can_use_tool: Any = allow_all,
           **kw: Any) -> RunConfig:
    model = ScriptedModel(list(turns), block_delay=kw.pop("block_delay", 0.0))
    return RunConfig(model=model, tool_provider=lambda: list(tools), can_use_tool=can_use_tool, hooks=NoHooks(),
                     extra={"streaming_tools": streaming}, **kw)


async def run(session: Session, prompt: str, run_config: RunConfig) -> list[AgentEvent]:
    events: list[AgentEvent] = []
    async for event in session.run(prompt, run_config):
        events.append(event)
    return events


def has_html(text: str) -> bool:
    return bool(HTML_TAG.search(text))
