"""B6 — `InspectVariable` on values that would sink a naive ``repr``.

Each value sits in a namespace as a notebook variable; the tool is called through
`run_tool_use` (the model's path: validation, permission, the call in a worker thread, result
packaging). Measured: wall time of the call and the size of the text the model receives.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any, Callable, Iterator

from jupyter_toolagent.core.permission_types import PermissionDecision
from jupyter_toolagent.core.results import ToolOutputStore
from jupyter_toolagent.core.run_tool_use import run_tool_use
from jupyter_toolagent.core.tool import ToolOptions, ToolPool, ToolUseContext

from .harness import Figure, Row, Size, Target, pick

KEY = "B6"
TITLE = "InspectVariable on huge and hostile values"
MAX_MS = 50.0
MAX_CHARS = 4_000


class RaisesOnRepr:
    def __repr__(self) -> str:
        raise RuntimeError("this object refuses to be printed")


class SleepsOnRepr:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def __repr__(self) -> str:
        time.sleep(self.seconds)
        return "<finally>"


def naturals() -> Iterator[int]:
    n = 0
    while True:
        yield n
        n += 1


def make_values(size: Size) -> list[tuple[str, str, Callable[[], Any]]]:
    """(variable name, description, factory) — factories so only one large value lives at a time."""
    import numpy as np
    import pandas as pd

    rows = pick(size, full=10_000_000, quick=10_000_000, smoke=10_000)
    elements = pick(size, full=100_000_000, quick=100_000_000, smoke=100_000)
    keys = pick(size, full=1_000_000, quick=1_000_000, smoke=10_000)
    chars = pick(size, full=100_000_000, quick=100_000_000, smoke=1_000_000)
    sleep = pick(size, full=10.0, quick=10.0, smoke=3.0)

    def frame() -> Any:
        rng = np.random.default_rng(0)
        return pd.DataFrame({
            "id": np.arange(rows, dtype=np.int64),
            "value": rng.standard_normal(rows),
            "group": pd.Categorical.from_codes(rng.integers(0, 5, rows), ["a", "b", "c", "d", "e"]),
            "when": pd.date_range("2020-01-01", periods=rows, freq="s"),
        })

    def text() -> str:
        unit = "lorem ipsum dolor sit amet, consectetur adipiscing elit. "
        return (unit * (chars // len(unit) + 1))[:chars]

    return [
        ("df", f"DataFrame, {rows:,} rows × 4 columns", frame),
        ("arr", f"ndarray float64, {elements:,} elements", lambda: np.random.default_rng(1).standard_normal(elements)),
        ("gen", "infinite generator", naturals),
        ("mapping", f"dict, {keys:,} keys", lambda: {f"key{i}": i for i in range(keys)}),
        ("text", f"str, {chars:,} characters", text),
        ("raising", "object whose __repr__ raises", RaisesOnRepr),
        ("sleeping", f"object whose __repr__ sleeps {sleep:g} s", lambda: SleepsOnRepr(sleep)),
    ]


async def _allow(call: Any, ctx: Any, *, hook_decision: Any) -> PermissionDecision:
    return PermissionDecision.allow("benchmark")


def result_text(result: dict[str, Any]) -> str:
    content = result.get("content")
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or [] if isinstance(b, dict))


async def inspect_once(ctx: ToolUseContext, name: str, index: int) -> tuple[float, str, str]:
    block = {"type": "tool_use", "id": f"toolu_b6_{index:04d}", "name": "InspectVariable", "input": {"path": name}}
    start = time.perf_counter()
    outcome = await run_tool_use(block, ctx)
    return time.perf_counter() - start, result_text(outcome.result), outcome.status


def run(size: Size = "full") -> Figure:
    runs = pick(size, full=5, quick=3, smoke=1)
    figure = Figure(
        KEY, TITLE,
        method=(f"`InspectVariable` called through `run_tool_use` with `path=<name>`; median of {runs} calls per value "
                "after one warm-up call (2 calls for the sleeping `__repr__`); the value is built before timing. "
                "Output size = characters of the tool_result text."),
        size=size,
    )
    asyncio.run(_measure(figure, size, runs))
    return figure


async def _measure(figure: Figure, size: Size, runs: int) -> None:
    try:
        from jupyter_toolagent.tools.inspect_variable import InspectVariable
    except ImportError as exc:
        figure.error = f"InspectVariable is not available: {exc}"
        return
    namespace: dict[str, Any] = {}
    ctx = ToolUseContext(tools=ToolPool([InspectVariable()]), can_use_tool=_allow,
                         options=ToolOptions(cwd=Path.cwd(), namespace=namespace), outputs=ToolOutputStore())
    worst_chars: tuple[int, str] = (0, "")
    index = 0
    for name, description, factory in make_values(size):
        namespace.clear()
        namespace[name] = factory()
        repeats = min(runs, 2) if name == "sleeping" else runs
        times, sizes, statuses = [], [], set()
        text = ""
        for attempt in range(repeats + 1):
            index += 1
            seconds, text, status = await inspect_once(ctx, name, index)
            if attempt:
                times.append(seconds)
                sizes.append(len(text))
                statuses.add(status)
        row = figure.add(Row.from_samples(f"{description}: time", times, "ms", scale=1000,
                                          note=f"status {', '.join(sorted(statuses))}"))
        figure.add(Row.from_samples(f"{description}: output", sizes, "chars"))
        figure.targets.append(Target(f"{description} ≤ {MAX_MS:g} ms", row.value, MAX_MS, "ms"))
        worst_chars = max(worst_chars, (max(sizes), description))
        figure.details.append(f"`{name}` ({description}) — what the model receives:\n\n```\n{_excerpt(text)}\n```")
    namespace.clear()
    try:
        from jupyter_toolagent.tools.bounded import DEFAULT_TIMEOUT

        figure.notes.append(
            f"A `__repr__` that hangs cannot be interrupted from Python; the summary gives up on it after "
            f"`tools.bounded.DEFAULT_TIMEOUT` = {DEFAULT_TIMEOUT:g} s (its thread is left to finish), so that row "
            "is bounded by the timeout, not by the 50 ms target.")
    except ImportError:
        pass
    figure.targets.append(Target(f"every output ≤ {MAX_CHARS:,} characters (largest: {worst_chars[1]})",
                                 float(worst_chars[0]), MAX_CHARS, "chars"))


def _excerpt(text: str, limit: int = 600) -> str:
    text = text.replace("```", "'''")
    return text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit:,} more characters)"
