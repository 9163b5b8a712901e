"""SPEC §4.1 / §4.2: batches, concurrency, the cap, context modifiers in block order, and
failures that cancel nothing — through `run_tools` and through `StreamingToolExecutor` alike."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any, Awaitable, Callable

import pytest
from pydantic import BaseModel

from jupyter_toolagent.core.permission_types import PermissionDecision
from jupyter_toolagent.core.run_tool_use import ToolCallOutcome
from jupyter_toolagent.core.scheduling import partition_tool_calls, run_tools
from jupyter_toolagent.core.streaming_executor import StreamingToolExecutor
from jupyter_toolagent.core.tool import Progress, Tool, ToolResult, ToolUseContext
from jupyter_toolagent.core.scheduled_call import max_tool_use_concurrency

from runtime_support import Probe, TagInput, Timeline, ctx_for, result_text

Runner = Callable[[list[dict[str, Any]], ToolUseContext], Awaitable[list[ToolCallOutcome]]]


async def via_run_tools(blocks: list[dict[str, Any]], ctx: ToolUseContext) -> list[ToolCallOutcome]:
    return (await run_tools(blocks, ctx)).outcomes


async def via_executor(blocks: list[dict[str, Any]], ctx: ToolUseContext) -> list[ToolCallOutcome]:
    executor = StreamingToolExecutor(ctx)
    for block in blocks:
        executor.add(block)
    return await executor.finish()


RUNNERS = pytest.mark.parametrize("runner", [via_run_tools, via_executor], ids=["run_tools", "executor"])


def use(name: str, tag: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_{tag}", "name": name, "input": {"tag": tag}}


# --- the seed example: Read A, Grep B, Edit C, Read D ------------------------------------------

@dataclasses.dataclass(frozen=True)
class Edited:
    """A plug-in option a context modifier sets: whether an earlier call edited something."""

    edited: bool = False


class Seed(Tool):
    """Read/Grep (safe) and Edit (unsafe). Each returns a modifier that logs when it is applied;
    Edit's modifier also marks the context as edited, which later reads report."""

    input_model = TagInput

    def __init__(self, name: str, *, safe: bool, delays: dict[str, float], timeline: Timeline,
                 applied: list[str]) -> None:
        self.name = name
        self.safe = safe
        self.delays = delays
        self.timeline = timeline
        self.applied = applied

    def is_concurrency_safe(self, input: BaseModel) -> bool:
        return self.safe

    async def call(self, input: BaseModel, ctx: ToolUseContext, progress: Progress) -> Any:
        assert isinstance(input, TagInput)
        tag = input.tag
        self.timeline.start(tag)
        await asyncio.sleep(self.delays.get(tag, 0.2))
        self.timeline.end(tag)
        self.timeline.leave()
        seen = ctx.options.plugins.get(Edited).edited

        def modifier(c: ToolUseContext) -> ToolUseContext:
            self.applied.append(tag)
            if self.safe:
                return c
            return c.replace(options=dataclasses.replace(c.options, plugins=c.options.plugins.with_options(Edited(True))))

        return ToolResult(f"{self.name} {tag} saw edited={seen}", context_modifier=modifier)


def seed_setup() -> tuple[ToolUseContext, Timeline, list[str], list[dict[str, Any]]]:
    timeline, applied = Timeline(), []
    delays = {"A": 0.35, "B": 0.1, "C": 0.1, "D": 0.2}  # B finishes well before A
    tools = [Seed(n, safe=s, delays=delays, timeline=timeline, applied=applied)
             for n, s in (("Read", True), ("Grep", True), ("Edit", False))]
    blocks = [use("Read", "A"), use("Grep", "B"), use("Edit", "C"), use("Read", "D")]
    return ctx_for(*tools), timeline, applied, blocks


def test_seed_example_partition() -> None:
    ctx, _, _, blocks = seed_setup()
    batches = partition_tool_calls(blocks, ctx)
    assert [(b.concurrency_safe, b.ids) for b in batches] == [
        (True, ["toolu_A", "toolu_B"]), (False, ["toolu_C"]), (True, ["toolu_D"])]


def test_partition_puts_unknown_invalid_and_raising_calls_alone() -> None:
    class Touchy(Probe):
        def is_concurrency_safe(self, input: BaseModel) -> bool:
            raise RuntimeError("cannot tell")

    ctx = ctx_for(Probe("Read"), Touchy("Touchy"))
    blocks = [use("Read", "a"), use("Read", "b"), use("Nope", "c"), use("Read", "d"),
              {"type": "tool_use", "id": "toolu_e", "name": "Read", "input": {"tag": 5}},
              use("Read", "f"), use("Touchy", "g"), use("Read", "h"), use("Read", "i")]
    assert [b.ids for b in partition_tool_calls(blocks, ctx)] == [
        ["toolu_a", "toolu_b"], ["toolu_c"], ["toolu_d"], ["toolu_e"], ["toolu_f"], ["toolu_g"],
        ["toolu_h", "toolu_i"]]


@RUNNERS
@pytest.mark.asyncio
async def test_seed_example_runs_in_order_with_modifiers_in_block_order(runner: Runner) -> None:
    ctx, tl, applied, blocks = seed_setup()
    outcomes = await runner(blocks, ctx)
    assert [o.tool_use_id for o in outcomes] == ["toolu_A", "toolu_B", "toolu_C", "toolu_D"]
    assert all(o.status == "done" for o in outcomes)
    assert tl.overlap("A", "B")
    assert tl.ends["B"] < tl.ends["A"]  # B finished first ...
    assert applied == ["A", "B", "C", "D"]  # ... yet A's modifier was applied first
    assert tl.starts["C"] >= max(tl.ends["A"], tl.ends["B"])
    assert tl.starts["D"] >= tl.ends["C"]
    texts = [result_text(o.result) for o in outcomes]
    assert texts == ["Read A saw edited=False", "Grep B saw edited=False", "Edit C saw edited=False",
                     "Read D saw edited=True"]


@pytest.mark.asyncio
async def test_run_tools_returns_the_context_after_every_modifier() -> None:
    ctx, _, _, blocks = seed_setup()
    result = await run_tools(blocks, ctx)
    assert result.context.options.plugins.get(Edited).edited is True
    assert ctx.options.plugins.find(Edited) is None  # the caller's context is not mutated


@pytest.mark.asyncio
async def test_executor_context_reflects_completed_prefix() -> None:
    ctx, _, _, blocks = seed_setup()
    executor = StreamingToolExecutor(ctx)
    for block in blocks:
        executor.add(block)
    await executor.finish()
    assert executor.context.options.plugins.get(Edited).edited is True


@pytest.mark.asyncio
async def test_executor_starts_a_safe_call_when_it_is_added_and_holds_an_unsafe_one() -> None:
    tl = Timeline()
    read, edit = Probe("Read", timeline=tl, delay=0.3), Probe("Edit", timeline=tl, safe=False, delay=0.05)
    executor = StreamingToolExecutor(ctx_for(read, edit))
    executor.add(use("Read", "r1"))
    await asyncio.sleep(0.05)
    assert "r1" in tl.starts  # started before the message ended (no finish() yet)
    executor.add(use("Edit", "e1"))
    executor.add(use("Read", "r2"))  # safe, but queued behind the unsafe call
    await asyncio.sleep(0.05)
    assert "e1" not in tl.starts and "r2" not in tl.starts
    await executor.finish()
    assert tl.starts["e1"] >= tl.ends["r1"]
    assert tl.starts["r2"] >= tl.ends["e1"]


# --- the concurrency cap -------------------------------------------------------------------

@RUNNERS
@pytest.mark.parametrize("value,expected", [("3", 3), (None, 10), ("0", 10), ("abc", 10), ("-4", 10), (" 7 ", 7)])
@pytest.mark.asyncio
async def test_concurrency_cap(runner: Runner, value: str | None, expected: int,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    if value is None:
        monkeypatch.delenv("TOOLAGENT_MAX_TOOL_USE_CONCURRENCY", raising=False)
    else:
        monkeypatch.setenv("TOOLAGENT_MAX_TOOL_USE_CONCURRENCY", value)
    assert max_tool_use_concurrency() == expected
    tl = Timeline()
    probe = Probe("Read", timeline=tl, delay=0.05)
    outcomes = await runner([use("Read", f"c{i}") for i in range(25)], ctx_for(probe))
    assert len(outcomes) == 25 and all(o.status == "done" for o in outcomes)
    assert tl.max_running == expected


# --- a failed call cancels nothing (SPEC §4.2) ------------------------------------------------

def failure_setup() -> tuple[ToolUseContext, Timeline, list[dict[str, Any]]]:
    tl = Timeline()
    tools = [
        Probe("Shell", timeline=tl, delay=0.1, fail="exit status 2"),
        Probe("Slow", timeline=tl, delay=0.6),
        Probe("Careful", timeline=tl, delay=0.4, behavior="block"),
        Probe("Write", timeline=tl, safe=False),
    ]
    blocks = [use("Slow", "slow"), use("Shell", "shell"), use("Careful", "careful"), use("Write", "write"),
              use("Slow", "later")]
    return ctx_for(*tools), tl, blocks


@RUNNERS
@pytest.mark.asyncio
async def test_a_failing_call_cancels_nothing(runner: Runner) -> None:
    ctx, tl, blocks = failure_setup()
    outcomes = await asyncio.wait_for(runner(blocks, ctx), 5)
    by_id = {o.tool_use_id: o for o in outcomes}
    assert [o.tool_use_id for o in outcomes] == [b["id"] for b in blocks]
    assert by_id["toolu_shell"].status == "error" and "exit status 2" in result_text(by_id["toolu_shell"].result)
    for tag in ("slow", "careful", "write", "later"):  # beside it and queued after it: all ran to the end
        outcome = by_id[f"toolu_{tag}"]
        assert outcome.status == "done" and outcome.result.get("is_error") is not True, (tag, outcome)
        assert tag in tl.starts and tag in tl.ends
    assert tl.overlap("slow", "shell") and tl.starts["write"] >= max(tl.ends["slow"], tl.ends["careful"])


@RUNNERS
@pytest.mark.asyncio
async def test_an_ordinary_failure_cancels_nothing(runner: Runner) -> None:
    tl = Timeline()
    ctx = ctx_for(Probe("Bad", timeline=tl, delay=0.05, fail="nope"), Probe("Read", timeline=tl, delay=0.2))
    outcomes = await runner([use("Bad", "bad"), use("Read", "r")], ctx)
    assert [o.status for o in outcomes] == ["error", "done"]


@RUNNERS
@pytest.mark.asyncio
async def test_invalid_input_cancels_nothing(runner: Runner) -> None:
    tl = Timeline()
    ctx = ctx_for(Probe("Shell", timeline=tl), Probe("Read", timeline=tl, delay=0.1))
    blocks = [{"type": "tool_use", "id": "toolu_x", "name": "Shell", "input": {"tag": []}}, use("Read", "r")]
    outcomes = await runner(blocks, ctx)
    assert [o.status for o in outcomes] == ["invalid", "done"]


class SlowApproval:
    """Allows everything; takes a while to decide for the tag ``slowperm``."""

    async def __call__(self, call, ctx, *, hook_decision):  # noqa: ANN001
        input = call.observable
        if input.get("tag") == "slowperm":
            await asyncio.sleep(0.3)
        return PermissionDecision.allow("test")


@RUNNERS
@pytest.mark.asyncio
async def test_a_sibling_waiting_for_approval_still_runs_after_a_failure(runner: Runner) -> None:
    tl = Timeline()
    ctx = ctx_for(Probe("Shell", timeline=tl, delay=0.05, fail="exit status 1"),
                  Probe("Read", timeline=tl, delay=0.05), can_use_tool=SlowApproval())
    outcomes = await runner([use("Shell", "shell"), use("Read", "slowperm")], ctx)
    assert "slowperm" in tl.ends
    assert [o.status for o in outcomes] == ["error", "done"]
