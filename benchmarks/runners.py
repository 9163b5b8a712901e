"""The tool loops compared side by side, each driven through the same `FakeAnthropicServer`.

* **ours** — `jupyter_toolagent.Agent` with `AnthropicModel` (the SDK's async streaming) and
  the full pipeline: schema validation, permission decision (an ``--allow`` rule), scheduling.
* **SDK tool runner** — ``client.beta.messages.tool_runner(..., thread=False)`` of the
  ``anthropic`` SDK (async client with ``beta_async_tool``; sync client with ``beta_tool`` for
  blocking functions). ``thread=False`` makes it send the whole history each turn, as a local
  server needs (with server-side threads it sends only new messages, and any server that is not
  the API answers 400).
* **pydantic-ai** — ``pydantic_ai.Agent`` with its ``AnthropicModel`` (streaming), plain tools.

`prepare_*` does the one-time set-up (clients, tool schemas) outside the timed region and
returns an async callable that performs one complete run (a fresh conversation each time).
Tool functions are made by `Timeline`, which records when each call started and ended with the
same clock for every runner, so "tool phase" spans are comparable across runners.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, Awaitable, Callable

MODEL = "claude-sonnet-5-5"
MAX_TOKENS = 4096
PROMPT = "Go."
KEY = "sk-bench-not-a-real-key"

RunOnce = Callable[[], Awaitable[Any]]


# --------------------------------------------------------------------------------------------
# tools with a shared clock
# --------------------------------------------------------------------------------------------


@dataclass
class Timeline:
    """Start and end (``time.perf_counter``) of every tool call made since the last `reset`."""

    spans: list[tuple[float, float]] = field(default_factory=list)

    def reset(self) -> None:
        self.spans.clear()

    def add(self, start: float, end: float) -> None:
        self.spans.append((start, end))

    @property
    def first_start(self) -> float:
        return min(s for s, _ in self.spans)

    @property
    def last_end(self) -> float:
        return max(e for _, e in self.spans)

    @property
    def first_end(self) -> float:
        return min(e for _, e in self.spans)

    def tool_phase(self) -> float:
        """Seconds from the first call's start to the last call's end."""
        return self.last_end - self.first_start

    def async_sleeper(self, name: str, seconds: float) -> Callable[..., Any]:
        timeline = self

        async def fn(i: int) -> str:
            """Wait a moment and report which call this was.

            Args:
                i: Call number.
            """
            start = time.perf_counter()
            if seconds:
                await asyncio.sleep(seconds)
            timeline.add(start, time.perf_counter())
            return f"call {i} done"

        fn.__name__ = fn.__qualname__ = name
        return fn

    def sync_sleeper(self, name: str, seconds: float) -> Callable[..., Any]:
        timeline = self

        def fn(i: int) -> str:
            """Wait a moment (blocking) and report which call this was.

            Args:
                i: Call number.
            """
            start = time.perf_counter()
            if seconds:
                time.sleep(seconds)
            timeline.add(start, time.perf_counter())
            return f"call {i} done"

        fn.__name__ = fn.__qualname__ = name
        return fn


# --------------------------------------------------------------------------------------------
# availability
# --------------------------------------------------------------------------------------------


def pydantic_ai_problem() -> str | None:
    """None when pydantic-ai with its Anthropic model can be used, else why not."""
    try:
        version = metadata.version("pydantic-ai-slim")
    except metadata.PackageNotFoundError:
        return "pydantic-ai is not installed (pip install -r benchmarks/requirements.txt)"
    try:
        import pydantic_ai  # noqa: F401
        from pydantic_ai.models.anthropic import AnthropicModel  # noqa: F401
    except Exception as exc:  # e.g. an anthropic SDK it cannot work with
        return f"pydantic-ai-slim {version} cannot be imported with its Anthropic model: {type(exc).__name__}: {exc}"
    return None


def sdk_runner_problem() -> str | None:
    try:
        from anthropic import beta_async_tool, beta_tool  # noqa: F401
    except ImportError as exc:
        return f"this anthropic SDK has no beta tool runner: {exc}"
    return None


# --------------------------------------------------------------------------------------------
# ours
# --------------------------------------------------------------------------------------------


def prepare_ours(base_url: str, functions: list[Callable[..., Any]], *, concurrency_safe: bool = True,
                 streaming_tools: bool = True, max_turns: int = 100) -> RunOnce:
    """One run = a fresh `Agent` conversation (tools and the model's client are reused)."""
    from jupyter_toolagent import Agent
    from jupyter_toolagent.tools.function_tool import FunctionTool
    from jupyter_toolagent.models.anthropic import AnthropicModel

    model = AnthropicModel(MODEL, api_key=KEY, base_url=base_url)
    tools = [FunctionTool(fn, concurrency_safe=concurrency_safe) for fn in functions]
    names = [t.name for t in tools]

    async def run_once() -> Any:
        agent = Agent(model, tools=tools, allow=names, max_turns=max_turns, max_tokens=MAX_TOKENS,
                      streaming_tools=streaming_tools)
        record = await agent.run(PROMPT)
        if record.finish_reason != "end_turn":
            raise RuntimeError(f"our run ended with {record.finish_reason}: {record.error}")
        return record

    return run_once


# --------------------------------------------------------------------------------------------
# the anthropic SDK's tool runner
# --------------------------------------------------------------------------------------------


def prepare_sdk_async(base_url: str, functions: list[Callable[..., Any]], *, max_iterations: int = 100,
                      stream: bool = False, eager: bool = False) -> RunOnce:
    """The async runner (``AsyncAnthropic``) with ``beta_async_tool`` functions."""
    import anthropic
    from anthropic import beta_async_tool

    client = anthropic.AsyncAnthropic(api_key=KEY, base_url=base_url)
    tools = [beta_async_tool(fn) for fn in functions]

    async def run_once() -> Any:
        kwargs: dict[str, Any] = {}
        if stream:
            kwargs["stream"] = True
            kwargs["run_tools_eagerly"] = eager
        runner = client.beta.messages.tool_runner(
            model=MODEL, max_tokens=MAX_TOKENS, messages=[{"role": "user", "content": PROMPT}], tools=tools,
            thread=False, max_iterations=max_iterations, **kwargs,
        )
        last = None
        async for item in runner:
            last = await item.get_final_message() if stream else item
        return last

    return run_once


def prepare_sdk_sync(base_url: str, functions: list[Callable[..., Any]], *, max_iterations: int = 100) -> RunOnce:
    """The sync runner (``Anthropic``) with ``beta_tool`` functions, driven from a worker
    thread so the benchmark's event loop stays free."""
    import anthropic
    from anthropic import beta_tool

    client = anthropic.Anthropic(api_key=KEY, base_url=base_url)
    tools = [beta_tool(fn) for fn in functions]

    def run_blocking() -> Any:
        runner = client.beta.messages.tool_runner(
            model=MODEL, max_tokens=MAX_TOKENS, messages=[{"role": "user", "content": PROMPT}], tools=tools,
            thread=False, max_iterations=max_iterations,
        )
        last = None
        for message in runner:
            last = message
        return last

    async def run_once() -> Any:
        return await asyncio.to_thread(run_blocking)

    return run_once


# --------------------------------------------------------------------------------------------
# pydantic-ai
# --------------------------------------------------------------------------------------------


def prepare_pydantic_ai(base_url: str, functions: list[Callable[..., Any]], *, max_requests: int = 100) -> RunOnce:
    from pydantic_ai import Agent, Tool
    from pydantic_ai.models.anthropic import AnthropicModel, AnthropicModelSettings
    from pydantic_ai.providers.anthropic import AnthropicProvider
    from pydantic_ai.usage import UsageLimits

    model = AnthropicModel(MODEL, provider=AnthropicProvider(api_key=KEY, base_url=base_url))
    agent = Agent(model, tools=[Tool(fn) for fn in functions],
                  model_settings=AnthropicModelSettings(max_tokens=MAX_TOKENS))
    limits = UsageLimits(request_limit=max_requests)

    async def run_once() -> Any:
        return await agent.run(PROMPT, usage_limits=limits)

    return run_once


# --------------------------------------------------------------------------------------------
# measuring runs
# --------------------------------------------------------------------------------------------


@dataclass
class RunTimes:
    whole: list[float] = field(default_factory=list)
    """Seconds from calling the run to its final answer."""
    tool_phase: list[float] = field(default_factory=list)
    """Seconds from the first tool call's start to the last one's end."""
    to_last_result: list[float] = field(default_factory=list)
    """Seconds from calling the run to the last tool call's end."""
    to_first_result: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    """CPU seconds of this process (all threads) during the run: the client's own cost, which
    other processes on the machine do not inflate the way they inflate wall time."""


async def measure(run_once: RunOnce, timeline: Timeline, runs: int, *, warmup: int = 1,
                  expect_calls: int | None = None) -> RunTimes:
    """Time ``runs`` complete runs (after ``warmup`` untimed ones)."""
    times = RunTimes()
    for index in range(warmup + runs):
        timeline.reset()
        cpu_start = time.process_time()
        start = time.perf_counter()
        await run_once()
        end = time.perf_counter()
        cpu = time.process_time() - cpu_start
        if expect_calls is not None and len(timeline.spans) != expect_calls:
            raise RuntimeError(f"expected {expect_calls} tool calls, saw {len(timeline.spans)}")
        if index < warmup:
            continue
        times.whole.append(end - start)
        times.cpu.append(cpu)
        if timeline.spans:
            times.tool_phase.append(timeline.tool_phase())
            times.to_last_result.append(timeline.last_end - start)
            times.to_first_result.append(timeline.first_end - start)
    return times


# --------------------------------------------------------------------------------------------
# scripted conversations (fake server turn functions; stateless, so any number of runs work)
# --------------------------------------------------------------------------------------------


def assistant_turns(body: dict[str, Any]) -> int:
    return sum(1 for m in body.get("messages") or [] if m.get("role") == "assistant")


def fan_out(tool_name: str, calls: int, *, block_delay: float = 0.0,
            final_text: str = "All calls finished.") -> Callable[[dict[str, Any]], Any]:
    """First request: ``calls`` tool_use blocks of ``tool_name``; after the results: text."""
    from jupyter_toolagent.models import ScriptedTurn, text_block, tool_use_block

    def turn(body: dict[str, Any]) -> Any:
        if assistant_turns(body):
            return [text_block(final_text)]
        blocks = [tool_use_block(tool_name, {"i": i}) for i in range(calls)]
        return ScriptedTurn(content=blocks, block_delay=block_delay)

    return turn


def chain(tool_name: str, requests: int) -> Callable[[dict[str, Any]], Any]:
    """``requests`` requests in all: one tool call per turn, then a final text."""
    from jupyter_toolagent.models import text_block, tool_use_block

    def turn(body: dict[str, Any]) -> Any:
        done = assistant_turns(body)
        if done >= requests - 1:
            return [text_block(f"Finished after {done} calls.")]
        return [text_block(f"Step {done}."), tool_use_block(tool_name, {"i": done})]

    return turn
