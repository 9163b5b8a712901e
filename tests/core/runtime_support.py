"""Small test doubles for the core runtime tests: probe tools that record what happened and
when, a stub hook runner, models that yield raw stream events, and transcript checks.

Runs built with `run_config` pass their own permission callback and hook runner, so these
tests exercise the core alone (the rule engine and the hook registry have their own tests)."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from typing import Any, Callable, Literal, Sequence

import pytest
from pydantic import BaseModel, ConfigDict

from jupyter_toolagent.core.abort import AbortSignal
from jupyter_toolagent.core.events import AgentEvent, RunFinishedEvent
from jupyter_toolagent.core.hook_types import PostToolUseOutcome, PreToolUseOutcome
from jupyter_toolagent.core.pairing import check_pairing, normalize_messages_for_api
from jupyter_toolagent.core.permission_types import PermissionDecision
from jupyter_toolagent.core.session import RunConfig, Session
from jupyter_toolagent.core.tool import Progress, Tool, ToolPool, ToolUseContext
from jupyter_toolagent.models.stream_events import message_stream_events, new_message_id

from transcript_blocks import result_text, tool_results, tool_uses  # noqa: F401 - the core tests import them from here


STREAMING = pytest.mark.parametrize("streaming", [True, False], ids=["streaming", "after-stream"])
"""Run the test under both schedulers: tools started while the response streams, and after it."""


class TagInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tag: str = ""


class EffectInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tag: str
    delay: float = 0.0
    fail: bool = False


class SideEffect(Tool):
    """Records its tag the moment it starts (the side effect), reports progress, then sleeps
    and maybe raises. ``gauge`` (shared by the tools of a run) measures concurrency."""

    input_model = EffectInput

    def __init__(self, name: str, effects: list[str], *, safe: bool, behavior: str = "cancel",
                 gauge: "Gauge | None" = None) -> None:
        self.name = name
        self.description = f"side-effect probe {name}"
        self.effects = effects
        self.safe = safe
        self.interrupt_behavior = behavior  # type: ignore[assignment]
        self.gauge = gauge

    def is_concurrency_safe(self, input: BaseModel) -> bool:
        return self.safe

    def is_read_only(self, input: BaseModel) -> bool:
        return self.safe

    async def call(self, input: BaseModel, ctx: ToolUseContext, progress: Progress) -> Any:
        assert isinstance(input, EffectInput)
        self.effects.append(input.tag)
        progress("working", 0.5)
        if self.gauge is not None:
            self.gauge.enter()
        try:
            if input.delay:
                await asyncio.sleep(input.delay)
        finally:
            if self.gauge is not None:
                self.gauge.leave()
        if input.fail:
            raise RuntimeError(f"{self.name} failed on purpose ({input.tag})")
        return f"{self.name} did {input.tag}"


class Gauge:
    """How many calls run at once, and the most that ever did."""

    def __init__(self) -> None:
        self.running = 0
        self.most = 0

    def enter(self) -> None:
        self.running += 1
        self.most = max(self.most, self.running)

    def leave(self) -> None:
        self.running -= 1


def probe_tools(effects: list[str], gauge: Gauge | None = None) -> list[Tool]:
    """Look (safe), Keep (safe, finishes on abort), Change (unsafe), Shell (safe; like every
    failure, its error cancels nothing)."""
    return [
        SideEffect("Look", effects, safe=True, gauge=gauge),
        SideEffect("Keep", effects, safe=True, behavior="block", gauge=gauge),
        SideEffect("Change", effects, safe=False, gauge=gauge),
        SideEffect("Shell", effects, safe=True, gauge=gauge),
    ]


async def allow_all(call, ctx, *, hook_decision):  # noqa: ANN001
    return PermissionDecision.allow("test")


def ctx_for(*tools: Tool, **kw: Any) -> ToolUseContext:
    return ToolUseContext(tools=ToolPool(tools), can_use_tool=kw.pop("can_use_tool", allow_all), **kw)


class Timeline:
    """Start/end times of calls, and how many ran at once."""

    def __init__(self) -> None:
        self.starts: dict[str, float] = {}
        self.ends: dict[str, float] = {}
        self.order: list[str] = []
        self.running = 0
        self.max_running = 0

    def start(self, key: str) -> None:
        self.starts[key] = time.monotonic()
        self.order.append(key)
        self.running += 1
        self.max_running = max(self.max_running, self.running)

    def end(self, key: str) -> None:
        self.ends[key] = time.monotonic()

    def leave(self) -> None:
        self.running -= 1

    def overlap(self, a: str, b: str) -> bool:
        return self.starts[a] < self.ends[b] and self.starts[b] < self.ends[a]


class Probe(Tool):
    """A configurable tool: sleeps, records its start and end under its input tag (or its name),
    optionally fails or returns what ``output`` makes of its input."""

    input_model = TagInput

    def __init__(
        self,
        name: str,
        *,
        timeline: Timeline | None = None,
        safe: bool = True,
        read_only: bool | None = None,
        delay: float = 0.0,
        behavior: Literal["cancel", "block"] = "cancel",
        fail: str | None = None,
        output: Callable[[TagInput, ToolUseContext], Any] | None = None,
        started: asyncio.Event | None = None,
    ) -> None:
        self.name = name
        self.description = f"probe {name}"
        self.timeline = timeline if timeline is not None else Timeline()
        self.safe = safe
        self.read_only = safe if read_only is None else read_only
        self.delay = delay
        self.interrupt_behavior = behavior
        self.fail = fail
        self.output = output
        self.started = started
        self.calls: list[str] = []

    def is_concurrency_safe(self, input: BaseModel) -> bool:
        return self.safe

    def is_read_only(self, input: BaseModel) -> bool:
        return self.read_only

    async def call(self, input: BaseModel, ctx: ToolUseContext, progress: Progress) -> Any:
        assert isinstance(input, TagInput)
        key = input.tag or self.name
        self.calls.append(key)
        self.timeline.start(key)
        if self.started is not None:
            self.started.set()
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            self.timeline.end(key)
        finally:
            self.timeline.leave()
        if self.fail is not None:
            raise RuntimeError(self.fail)
        if self.output is not None:
            return self.output(input, ctx)
        return f"{self.name} {key} done"


class StubHooks:
    """A HookRunner whose PreToolUse outcome is chosen by a function of (tool name, input)."""

    def __init__(self, pre: Callable[[str, dict[str, Any]], PreToolUseOutcome] | None = None) -> None:
        self._pre = pre or (lambda name, input: PreToolUseOutcome())
        self.seen: list[tuple[str, dict[str, Any]]] = []

    async def pre_tool_use(self, call, ctx):  # noqa: ANN001
        tool, input = call.tool, call.observable
        self.seen.append((tool.name, dict(input)))
        return self._pre(tool.name, input)

    async def post_tool_use(self, call, result, ctx, *, failed):  # noqa: ANN001
        return PostToolUseOutcome()

    async def stop(self, ctx, reason):  # noqa: ANN001
        return PostToolUseOutcome()


def run_config(model: Any, *tools: Any, streaming: bool = True, **kw: Any) -> RunConfig:
    """A RunConfig with these tools, allow-all permissions and no hooks unless given."""
    kw.setdefault("can_use_tool", allow_all)
    kw.setdefault("hooks", StubHooks())
    return RunConfig(model=model, tool_provider=lambda: list(tools), streaming_tools=streaming, **kw)


# --- models -------------------------------------------------------------------------------

def message_events(content: list[dict[str, Any]], stop_reason: str | None = "tool_use", **kw: Any) -> list[dict[str, Any]]:
    """Raw stream events (no pings) of a complete assistant message."""
    message = {"id": new_message_id(), "model": "raw", "content": content, "stop_reason": stop_reason,
               "usage": {"input_tokens": 5, "output_tokens": 5}}
    return [e for e in message_stream_events(message, **kw) if e["type"] != "ping"]


class Raise:
    """In a `RawModel` turn: raise this exception at this point of the stream."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


class RawModel:
    """A Model that yields hand-made raw events (to build streams no well-formed turn can
    produce: cut JSON, a missing content_block_stop, an exception mid-block)."""

    model_name = "raw"

    def __init__(self, turns: Sequence[Sequence[Any]]) -> None:
        self.turns = list(turns)
        self.requests: list[dict[str, Any]] = []

    async def stream(self, body: dict[str, Any], *, abort: AbortSignal):  # noqa: ANN201
        self.requests.append(body)
        if not self.turns:
            raise AssertionError("RawModel has no turn left")
        for item in self.turns.pop(0):
            if isinstance(item, Raise):
                raise item.exc
            yield item


class TimedModel:
    """Wraps a model and timestamps each event as the model yields it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.times: list[tuple[str, float]] = []
        self.message_stopped = asyncio.Event()

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    async def stream(self, body: dict[str, Any], *, abort: AbortSignal):  # noqa: ANN201
        async for event in self.inner.stream(body, abort=abort):
            self.times.append((event["type"], time.monotonic()))
            if event["type"] == "message_stop":
                self.message_stopped.set()
            yield event

    def time_of(self, kind: str) -> float:
        return next(t for k, t in self.times if k == kind)


class StopInFlight:
    """Wraps a model. As it yields the n-th event whose type is in ``kinds``, it schedules
    ``abort.abort()`` for the loop's next turn: a Stop click landing while that event is on its
    way to the run (no timing involved, so the interleaving is the same on every machine)."""

    def __init__(self, inner: Any, abort: AbortSignal, *, kinds: Sequence[str] = ("message_stop",),
                 nth: int = 0) -> None:
        self.inner, self.abort, self.kinds, self.nth = inner, abort, tuple(kinds), nth
        self.count = 0

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    async def stream(self, body: dict[str, Any], *, abort: AbortSignal):  # noqa: ANN201
        async for event in self.inner.stream(body, abort=abort):
            if event["type"] in self.kinds:
                if self.count == self.nth:
                    asyncio.get_running_loop().call_soon(self.abort.abort, "Stop button")
                self.count += 1
            yield event


# --- running and checking -------------------------------------------------------------------

async def run(session: Session, prompt: str, config: RunConfig, abort: AbortSignal | None = None) -> list[AgentEvent]:
    events: list[AgentEvent] = []
    async for event in session.run(prompt, config, abort=abort):
        events.append(event)
    return events


def finished(events: Sequence[AgentEvent]) -> RunFinishedEvent:
    last = events[-1]
    assert isinstance(last, RunFinishedEvent), last
    return last


def assert_valid_transcript(messages: Sequence[dict[str, Any]]) -> None:
    """Pairing holds and every tool_use has exactly one tool_result."""
    assert check_pairing(normalize_messages_for_api(list(messages))) == []
    uses = Counter(b["id"] for b in tool_uses(messages))
    results = tool_results(messages)
    assert all(n == 1 for n in uses.values()), uses
    assert set(results) == set(uses)
