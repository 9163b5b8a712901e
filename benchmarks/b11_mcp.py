"""B11 — MCP calls: the product's cost per call, and trusted read-only calls run together.

1. One ``tools/call`` of the demo server's ``echo`` over stdio, measured two ways on the same
   server program (one child process each): through the product (a scripted turn → lookup,
   JSON Schema validation, hooks, permission, the hop to the MCP loop, result mapping and
   packaging: the tool's queued → finished events) and through a bare ``mcp`` `ClientSession`
   (``await session.call_tool``). Target: product ≤ 1.2× bare.
2. Ten calls of the demo server's ``sleep(0.2)`` in one assistant turn, from a server configured
   with ``"trust": true`` (its read-only hint is believed, so the calls share one batch). The tool
   phase (first start → last finish) against the ideal of 0.2 s. Target: ≤ 1.15× ideal.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

from .harness import Figure, Row, Size, Target, pick

KEY = "B11"
TITLE = "MCP: one call through the product vs a bare ClientSession; 10 trusted read-only calls at once"
RATIO_TARGET = 1.2
IDEAL_TARGET = 1.15
SLEEP = 0.2
FAN_OUT = 10
ROOT = Path(__file__).resolve().parents[1]


def _server(*args: str, **extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": ["-m", "jupyter_toolagent.testing.mcp_server", *args],
            "env": {"PYTHONPATH": str(ROOT)}, **extra}


def run(size: Size = "full") -> Figure:
    calls = pick(size, full=200, quick=60, smoke=10)
    runs = pick(size, full=5, quick=3, smoke=1)
    figure = Figure(
        KEY, TITLE, size=size,
        method=(f"Part 1: {calls} sequential calls of `echo` (one per assistant turn of a scripted model, allowed by "
                "a rule) through `Agent`, each timed from its ToolQueued to its ToolFinished event; and the same "
                f"number of `ClientSession.call_tool('echo')` on a bare SDK session to another child of the same "
                f"server program. Medians per call after 5 untimed warm-up calls. Part 2: {FAN_OUT} "
                f"`sleep({SLEEP})` calls in one turn from a trusted server, tool phase = first ToolStarted → last "
                f"ToolFinished, median of {runs} runs after one warm-up run."),
    )
    asyncio.run(_measure(figure, calls, runs))
    return figure


async def _measure(figure: Figure, calls: int, runs: int) -> None:
    bare = await _bare_calls(calls)
    ours = await _product_calls(calls)
    bare_row = figure.add(Row.from_samples("bare ClientSession.call_tool", bare, "ms", scale=1000))
    ours_row = figure.add(Row.from_samples("through the product (run_tool_use)", ours, "ms", scale=1000))
    ours_row.compare_to(bare_row)
    alone = figure.add(Row.from_samples("McpTool.call alone (the hop to the MCP loop, result mapping)",
                                        await _tool_call_alone(calls), "ms", scale=1000))
    alone.compare_to(bare_row)
    figure.targets.append(Target(f"one MCP call ≤ {RATIO_TARGET}× a bare ClientSession call", ours_row.ratio,
                                 RATIO_TARGET, "×"))
    ideal = figure.add(Row(f"ideal ({FAN_OUT} calls overlap)", SLEEP, "s", note="by construction"))
    phases = await _fan_out(runs)
    phase = figure.add(Row.from_samples(f"{FAN_OUT} trusted read-only calls: tool phase", phases, "s"))
    phase.compare_to(ideal)
    figure.targets.append(Target(f"{FAN_OUT} trusted read-only MCP calls ≤ {IDEAL_TARGET}× ideal", phase.ratio,
                                 IDEAL_TARGET, "×"))


async def _bare_calls(calls: int) -> list[float]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    spec = _server()
    params = StdioServerParameters(command=spec["command"], args=spec["args"], env=spec["env"])
    samples: list[float] = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for i in range(calls + 5):
            start = time.perf_counter()
            await session.call_tool("echo", {"text": f"hello {i}"})
            if i >= 5:
                samples.append(time.perf_counter() - start)
    return samples


async def _product_calls(calls: int) -> list[float]:
    from jupyter_toolagent import Agent
    from jupyter_toolagent.models import ScriptedModel, tool_use_block

    turns: list[Any] = [[tool_use_block("mcp__demo__echo", {"text": f"hello {i}"})] for i in range(calls + 5)]
    agent = Agent(ScriptedModel([*turns, "done"]), mcp_servers={"demo": _server()}, allow=["mcp__demo__echo"],
                  max_turns=calls + 10)
    try:
        record = await agent.run("go")
    finally:
        await agent.aclose()
    queued: dict[str, float] = {}
    samples: list[float] = []
    for event in record.events:
        if event.kind == "tool_queued":
            queued[event.tool_use_id] = event.at
        elif event.kind == "tool_finished" and event.tool_use_id in queued:
            samples.append(event.at - queued[event.tool_use_id])
    return samples[5:]


async def _tool_call_alone(calls: int) -> list[float]:
    """Where the product's cost is: the tool's own call, without the §3 pipeline around it."""
    from jupyter_toolagent import Agent
    from jupyter_toolagent.core.tool import Progress
    from jupyter_toolagent.models import ScriptedModel

    agent = Agent(ScriptedModel(["ok"]), mcp_servers={"demo": _server()})
    samples: list[float] = []
    try:
        await agent.run("start the server")
        tool = next(t for t in agent.mcp.tools() if t.name == "mcp__demo__echo")
        for i in range(calls + 5):
            args = tool.parse_input({"text": f"hello {i}"})
            start = time.perf_counter()
            await tool.call(args, None, Progress())  # type: ignore[arg-type]
            if i >= 5:
                samples.append(time.perf_counter() - start)
    finally:
        await agent.aclose()
    return samples


async def _fan_out(runs: int) -> list[float]:
    from jupyter_toolagent import Agent
    from jupyter_toolagent.models import ScriptedModel, tool_use_block

    phases: list[float] = []
    turn = [tool_use_block("mcp__demo__sleep", {"seconds": SLEEP}) for _ in range(FAN_OUT)]
    script: list[Any] = []
    for _ in range(runs + 1):
        script += [list(turn), "done"]
    agent = Agent(ScriptedModel(script), mcp_servers={"demo": _server(trust=True)})
    try:
        for i in range(runs + 1):
            record = await agent.run("go")
            starts = [e.at for e in record.events if e.kind == "tool_started"]
            ends = [e.at for e in record.events if e.kind == "tool_finished"]
            if i > 0 and len(starts) == FAN_OUT:
                phases.append(max(ends) - min(starts))
    finally:
        await agent.aclose()
    return phases


if __name__ == "__main__":  # pragma: no cover - manual run
    fig = run("quick")
    for r in fig.rows:
        print(r.label, r.value, r.ratio)
