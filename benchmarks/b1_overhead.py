"""B1 — per-call runtime overhead of `run_tool_use` (SPEC §3) against calling the function.

The pipeline under test is the one a real call takes: lookup, schema validation (pydantic),
semantic validation, observable input, a PreToolUse hook from the hooks registry, the
permission decision by the rule engine with an allow rule (``--allow add``), the call with
output capture, result packaging and the (empty) PostToolUse stage. The comparison is the same
function called directly with the same pydantic validation of its input: the difference is
what the runtime adds per call.

The headline uses an ``async`` tool and an ``async`` hook. A plain ``def`` tool or hook is run
in a worker thread (so user code never blocks the kernel's loop); those rows show what that
thread hop costs on top.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path
from typing import Any, Callable

from jupyter_toolagent.tools.function_tool import FunctionTool
from jupyter_toolagent.core.results import ToolOutputStore
from jupyter_toolagent.core.run_tool_use import run_tool_use
from jupyter_toolagent.core.scheduling import run_tools
from jupyter_toolagent.core.tool import ToolOptions, ToolPool, ToolUseContext

from .harness import Figure, Row, Size, Target, pick
from .profiling import profile_markdown

KEY = "B1"
TITLE = "Per-call runtime overhead of run_tool_use"
TARGET_US = 50.0
TOOL = "add"


async def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: First addend.
        b: Second addend.
    """
    return a + b


def add_sync(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: First addend.
        b: Second addend.
    """
    return a + b


async def look_at_the_call(event: Any) -> None:
    """A PreToolUse hook that looks at the call and lets the rules decide."""
    if event.tool_input is None:
        raise ValueError("no input")


def look_at_the_call_sync(event: Any) -> None:
    if event.tool_input is None:
        raise ValueError("no input")


# --------------------------------------------------------------------------------------------
# the pipeline's collaborators, taken from the product when they exist
# --------------------------------------------------------------------------------------------


def hook_runner(hook: Callable[..., Any]) -> tuple[Any, str]:
    try:
        from jupyter_toolagent.hooks import HookRegistry, RegistryHookRunner
    except ImportError:
        return _MinimalHookRunner(hook), "a minimal HookRunner (jupyter_toolagent.hooks not available)"
    registry = HookRegistry()
    registry.register("PreToolUse", hook, matcher=TOOL)
    return RegistryHookRunner(registry), "jupyter_toolagent.hooks.RegistryHookRunner"


class _MinimalHookRunner:
    """Calls one PreToolUse hook; used only when the hooks module is missing."""

    def __init__(self, hook: Callable[..., Any]) -> None:
        self.hook = hook

    async def pre_tool_use(self, call: Any, ctx: Any) -> Any:
        from types import SimpleNamespace

        from jupyter_toolagent.core.hook_types import PreToolUseOutcome

        event = SimpleNamespace(tool_name=call.name, tool_input=call.observable, tool_use_id=call.tool_use_id)
        result = self.hook(event)
        if asyncio.iscoroutine(result):
            await result
        return PreToolUseOutcome()

    async def post_tool_use(self, *args: Any, **kwargs: Any) -> Any:
        from jupyter_toolagent.core.hook_types import PostToolUseOutcome

        return PostToolUseOutcome()

    async def stop(self, *args: Any, **kwargs: Any) -> Any:
        from jupyter_toolagent.core.hook_types import PostToolUseOutcome

        return PostToolUseOutcome()


def allow_rule_permissions() -> tuple[Any, Callable[[], Any], str]:
    """(can_use_tool, fresh permission state, description)."""
    try:
        from jupyter_toolagent.permissions import PermissionContext, RuleBasedPermissions
    except ImportError:
        from jupyter_toolagent.core.simple_policy import SimplePolicy

        return SimplePolicy(allow=[TOOL]), lambda: None, "core SimplePolicy(allow=['add'])"
    cwd = Path.cwd()
    return (RuleBasedPermissions(None, interactive=False), lambda: PermissionContext(cwd=cwd, allow=[TOOL]),
            "permissions.RuleBasedPermissions with PermissionContext(allow=['add'])")


def make_context(fn: Callable[..., Any], hook: Callable[..., Any] | None) -> tuple[ToolUseContext, list[str]]:
    can_use_tool, fresh_permissions, permissions_text = allow_rule_permissions()
    hooks, hooks_text = hook_runner(hook) if hook is not None else (None, "no hook")
    sink: list[Any] = []

    def emit(event: Any) -> None:
        sink.append(event)
        if len(sink) > 10_000:
            sink.clear()

    ctx = ToolUseContext(
        tools=ToolPool([FunctionTool(fn, name=TOOL, read_only=False)]),
        can_use_tool=can_use_tool,
        permissions=fresh_permissions(),
        hooks=hooks,
        options=ToolOptions(cwd=Path.cwd()),
        outputs=ToolOutputStore(),
        emit=emit,
    )
    return ctx, [permissions_text, hooks_text]


def blocks(count: int) -> list[dict[str, Any]]:
    return [{"type": "tool_use", "id": f"toolu_bench_{i:06d}", "name": TOOL, "input": {"a": i, "b": 1}}
            for i in range(count)]


# --------------------------------------------------------------------------------------------
# timed loops (seconds per call)
# --------------------------------------------------------------------------------------------


async def per_call_pipeline(ctx: ToolUseContext, calls: list[dict[str, Any]]) -> float:
    start = time.perf_counter()
    for block in calls:
        outcome = await run_tool_use(block, ctx)
        if outcome.status != "done":
            raise RuntimeError(f"the benchmark call was not allowed to run: {outcome.result}")
    return (time.perf_counter() - start) / len(calls)


async def per_call_run_tools(ctx: ToolUseContext, calls: list[dict[str, Any]]) -> float:
    """One block per `run_tools` call: scheduling, tasks and events on top of the pipeline."""
    start = time.perf_counter()
    for block in calls:
        result = await run_tools([block], ctx)
        if result.outcomes[0].status != "done":
            raise RuntimeError(f"the benchmark call was not allowed to run: {result.outcomes[0].result}")
    return (time.perf_counter() - start) / len(calls)


async def per_call_direct(fn: Callable[..., Any], calls: list[dict[str, Any]]) -> float:
    model = FunctionTool(fn, name=TOOL).input_model
    fields = list(model.model_fields)
    is_async = asyncio.iscoroutinefunction(fn)
    start = time.perf_counter()
    for block in calls:
        parsed = model.model_validate(block["input"])
        kwargs = {name: getattr(parsed, name) for name in fields}
        if is_async:
            await fn(**kwargs)
        else:
            await asyncio.to_thread(fn, **kwargs)
    return (time.perf_counter() - start) / len(calls)


CPU_PER_CALL: list[float] = []
"""CPU seconds per call of the repetitions of the last `samples` call (this process, all threads)."""


async def samples(measure: Callable[[list[dict[str, Any]]], Any], calls: list[dict[str, Any]],
                  runs: int) -> list[float]:
    """Wall seconds per call of ``runs`` repetitions (CPU seconds per call left in `CPU_PER_CALL`)."""
    await measure(calls[: max(1, len(calls) // 10)])  # warm-up: imports, pydantic caches, the thread pool
    walls: list[float] = []
    CPU_PER_CALL.clear()
    for _ in range(runs):
        cpu = time.process_time()
        walls.append(await measure(calls))
        CPU_PER_CALL.append((time.process_time() - cpu) / len(calls))
    return walls


# --------------------------------------------------------------------------------------------


def run(size: Size = "full") -> Figure:
    count = pick(size, full=10_000, quick=3_000, smoke=200)
    runs = pick(size, full=5, quick=3, smoke=1)
    side_count = pick(size, full=2_000, quick=1_000, smoke=100)
    side_runs = pick(size, full=3, quick=2, smoke=1)
    figure = Figure(
        KEY, TITLE,
        method=(f"{count:,} sequential calls of a trivial tool (`add(a, b)`), each through `run_tool_use`; "
                f"µs per call = wall time / {count:,}; median of {runs} repetitions after a warm-up of a tenth "
                "as many calls. The comparison validates the same input with the same pydantic model and calls "
                f"the function. The rows below the overhead (variants) use {side_count:,} calls × {side_runs} "
                "repetitions."),
        size=size,
    )
    asyncio.run(_measure(figure, count, runs, side_count, side_runs))
    return figure


async def _measure(figure: Figure, count: int, runs: int, side_count: int, side_runs: int) -> None:
    calls = blocks(count)
    side = calls[:side_count]
    us = 1e6

    direct = figure.add(Row.from_samples("direct: validate + call (async def)", await samples(
        lambda c: per_call_direct(add, c), calls, runs), "µs/call", scale=us))
    direct_cpu = statistics.median(CPU_PER_CALL) * us
    ctx, used = make_context(add, look_at_the_call)
    pipeline_samples = await samples(lambda c: per_call_pipeline(ctx, c), calls, runs)
    pipeline_cpu = list(CPU_PER_CALL)
    figure.add(Row.from_samples("run_tool_use: async def tool, async hook, allow rule", pipeline_samples,
                                "µs/call", scale=us)).compare_to(direct)
    overhead = [p * us - (direct.value or 0.0) for p in pipeline_samples]  # each run against the direct median
    overhead_row = figure.add(Row.from_samples("overhead per call (pipeline − direct)", overhead, "µs/call"))
    figure.add(Row.from_samples("overhead per call in CPU time (pipeline − direct)",
                                [c * us - direct_cpu for c in pipeline_cpu], "µs/call",
                                note="process CPU: not inflated by other programs' load"))
    figure.notes.append("Pipeline parts: " + "; ".join(used) + ".")

    bare_ctx, _ = make_context(add, None)
    figure.add(Row.from_samples("run_tool_use without the hook", await samples(
        lambda c: per_call_pipeline(bare_ctx, c), side, side_runs), "µs/call", scale=us)).compare_to(direct)
    figure.add(Row.from_samples("run_tools, one call per batch (scheduling + events)", await samples(
        lambda c: per_call_run_tools(ctx, c), side, side_runs), "µs/call", scale=us)).compare_to(direct)

    sync_hook_ctx, _ = make_context(add, look_at_the_call_sync)
    figure.add(Row.from_samples("run_tool_use with a plain def hook (worker thread)", await samples(
        lambda c: per_call_pipeline(sync_hook_ctx, c), side, side_runs), "µs/call", scale=us)).compare_to(direct)
    direct_sync = figure.add(Row.from_samples("direct: validate + asyncio.to_thread(def)", await samples(
        lambda c: per_call_direct(add_sync, c), side, side_runs), "µs/call", scale=us))
    sync_ctx, _ = make_context(add_sync, look_at_the_call)
    figure.add(Row.from_samples("run_tool_use: def tool (worker thread), async hook", await samples(
        lambda c: per_call_pipeline(sync_ctx, c), side, side_runs), "µs/call", scale=us)).compare_to(direct_sync)

    figure.targets.append(Target(f"runtime overhead ≤ {TARGET_US:g} µs per call (async tool, async hook)",
                                 overhead_row.value, TARGET_US, "µs"))
    if overhead_row.value is not None and overhead_row.value > TARGET_US:
        async def pipeline_loop() -> None:
            for block in side:
                await run_tool_use(block, ctx)

        figure.details.append(await profile_markdown(pipeline_loop, f"{len(side):,} pipeline calls",
                                                     restrict="jupyter_toolagent"))
