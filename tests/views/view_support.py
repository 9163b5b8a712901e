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
from jupyter_toolagent.models import ScriptedModel

HTML_TAG = re.compile(r"<\s*/?\s*[a-zA-Z][a-zA-Z0-9-]*(\s[^<>]*)?>")


class TagInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tag: str = ""


class Meeting:
    """A rendezvous: ``count`` parties must arrive before any waiting one goes on.

    Makes "these calls overlapped" a fact the test arranges, not a race it hopes to win: a tool
    that waits at the meeting cannot finish before its siblings have started (or, with
    `arriving_policy`, before a sibling's permission was decided). If the runtime did not run
    them together, the wait times out and the test's assertions fail.
    """

    def __init__(self, count: int, timeout: float = 5.0) -> None:
        self.count = count
        self.timeout = timeout
        self.arrived = 0
        self._all_here = asyncio.Event()

    def arrive(self) -> None:
        self.arrived += 1
        if self.arrived >= self.count:
            self._all_here.set()

    async def wait(self) -> None:
        try:
            await asyncio.wait_for(self._all_here.wait(), self.timeout)
        except asyncio.TimeoutError:
            pass


def arriving_policy(policy: Any, meeting: Meeting, tool_use_id: str) -> Any:
    """A permission callback that arrives at ``meeting`` once ``tool_use_id`` is decided."""

    async def decide(call, ctx, *, hook_decision):  # noqa: ANN001
        tool_use_id = call.tool_use_id
        decision = await policy(call, ctx, hook_decision=hook_decision)
        if tool_use_id == watched:
            meeting.arrive()
        return decision

    watched = tool_use_id
    return decide


class SleepTool(Tool):
    """Sleeps ``delay`` seconds and answers ``"<name> <tag> done"``; safe or not as told.
    With a ``meeting``, it first arrives there and waits for the other parties."""

    input_model = TagInput

    def __init__(self, name: str, *, safe: bool, delay: float = 0.05, output: str | None = None,
                 meeting: Meeting | None = None) -> None:
        self.name = name
        self.description = f"sleeps {delay}s ({'concurrency-safe' if safe else 'not concurrency-safe'})"
        self.safe = safe
        self.delay = delay
        self.output = output
        self.meeting = meeting

    def is_concurrency_safe(self, input: BaseModel) -> bool:
        return self.safe

    def is_read_only(self, input: BaseModel) -> bool:
        return self.safe

    async def call(self, input: BaseModel, ctx: ToolUseContext, progress: Progress) -> Any:
        if self.meeting is not None:
            self.meeting.arrive()
            await self.meeting.wait()
        await asyncio.sleep(self.delay)
        assert isinstance(input, TagInput)
        return self.output if self.output is not None else f"{self.name} {input.tag} done"


async def allow_all(call, ctx, *, hook_decision):  # noqa: ANN001
    return PermissionDecision.allow("test")


class NoHooks:
    """A HookRunner with no hooks (the hook registry is not what these tests are about)."""

    async def pre_tool_use(self, call, ctx):  # noqa: ANN001
        return PreToolUseOutcome()

    async def post_tool_use(self, call, result, ctx, *, failed):  # noqa: ANN001
        return PostToolUseOutcome()

    async def stop(self, ctx, reason):  # noqa: ANN001
        return PostToolUseOutcome()


def use(name: str, tag: str, tool_use_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_use_id, "name": name, "input": {"tag": tag}}


def config(turns: Sequence[Any], tools: Sequence[Tool], *, streaming: bool = True, can_use_tool: Any = allow_all,
           **kw: Any) -> RunConfig:
    model = ScriptedModel(list(turns), block_delay=kw.pop("block_delay", 0.0))
    return RunConfig(model=model, tool_provider=lambda: list(tools), can_use_tool=can_use_tool, hooks=NoHooks(),
                     streaming_tools=streaming, **kw)


async def run(session: Session, prompt: str, run_config: RunConfig) -> list[AgentEvent]:
    events: list[AgentEvent] = []
    async for event in session.run(prompt, run_config):
        events.append(event)
    return events


def has_html(text: str) -> bool:
    return bool(HTML_TAG.search(text))
