"""B16 — what the secret scrubber (SPEC §5.6, §3 stage 10) costs on a 50,000-character result.

Every tool result passes the scrubber, so its cost is paid on every call. Measured side by side
in one run, on the same text and the same protected values (three API-key-shaped values of 108
characters and three 40-character tokens):

* the scrubber on a clean result (the common case) and on one with 20 leaked slices in it;
* the obvious pure-Python way to apply the same rule (a set of every 8-character piece, every
  window of the whitespace-free text looked up) — what the automaton replaced;
* the old mask (`str.replace` of each whole value), which is cheaper but lets any slice pass;
* the whole choke point: a tool returning the text, through `run_tool_use`, with the session's
  scrubber and with an empty one — the difference is what a call pays.
"""

from __future__ import annotations

import asyncio
import random
import re
import string
import time
from typing import Any, Callable

from pydantic import BaseModel, ConfigDict

from jupyter_toolagent.core.permission_types import PermissionDecision
from jupyter_toolagent.core.run_tool_use import run_tool_use
from jupyter_toolagent.core.secrets import RUN_LENGTH, SecretScrubber
from jupyter_toolagent.core.tool import Progress, Tool, ToolPool, ToolUseContext

from .harness import Figure, Row, Size, Target, pick

KEY = "B16"
TITLE = "Secret scrubbing of a 50,000-character tool result"
MAX_MS = 5.0
"""Own check: scrubbing one result of the default size budget costs at most 5 ms."""
CHARS = 50_000


def protected(rng: random.Random) -> list[str]:
    alphabet = string.ascii_letters + string.digits
    keys = ["sk-ant-api03-" + "".join(rng.choice(alphabet) for _ in range(95)) for _ in range(3)]
    tokens = ["".join(rng.choice(alphabet + "_") for _ in range(40)) for _ in range(3)]
    return keys + tokens


def result_text(rng: random.Random, chars: int, leaks: list[str]) -> str:
    """Log-like lines of words and numbers, with ``leaks`` spliced in at random places."""
    words = ["error", "value", "row", "column", "df", "mean", "0.125", "2026-12-01", "ok", "x", "path/to/file.csv"]
    lines, size = [], 0
    while size < chars:
        line = " ".join(rng.choice(words) for _ in range(rng.randint(3, 14)))
        lines.append(line)
        size += len(line) + 1
    for leak in leaks:
        lines.insert(rng.randrange(len(lines)), leak)
    return "\n".join(lines)[: chars + sum(len(x) + 1 for x in leaks)]


def eight_gram_scan(values: list[str]) -> Callable[[str], str]:
    """The same rule in plain Python, for comparison (reports coverage, does not rebuild text)."""
    pieces = {v[i:i + RUN_LENGTH] for value in values for v in (value, value[::-1])
              for i in range(len(v) - RUN_LENGTH + 1)}
    space = re.compile(r"\s+")

    def scan(text: str) -> str:
        flat = space.sub("", text)
        hits = [i for i in range(len(flat) - RUN_LENGTH + 1) if flat[i:i + RUN_LENGTH] in pieces]
        return text if not hits else flat
    return scan


def whole_value_mask(values: list[str]) -> Callable[[str], str]:
    def mask(text: str) -> str:
        for value in values:
            if value in text:
                text = text.replace(value, "[redacted]")
        return text
    return mask


def timed(fn: Callable[[], Any], runs: int) -> list[float]:
    fn()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return samples


class TextInput(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReturnsText(Tool):
    name = "ReturnsText"
    description = "returns a fixed text"
    input_model = TextInput

    def __init__(self, text: str) -> None:
        self.text = text
        self.max_result_chars = len(text) + 1_000  # measure scrubbing, not the preview cut

    async def call(self, input: BaseModel, ctx: ToolUseContext, progress: Progress) -> str:
        return self.text


async def _allow(call: Any, ctx: Any, *, hook_decision: Any) -> PermissionDecision:
    return PermissionDecision.allow("benchmark")


def through_run_tool_use(text: str, scrubber: SecretScrubber) -> Callable[[], Any]:
    ctx = ToolUseContext(tools=ToolPool([ReturnsText(text)]), can_use_tool=_allow, scrubber=scrubber)
    block = {"type": "tool_use", "id": "toolu_b11", "name": "ReturnsText", "input": {}}
    loop = asyncio.new_event_loop()

    def once() -> Any:
        return loop.run_until_complete(run_tool_use(block, ctx))
    return once


def run(size: Size = "full") -> Figure:
    runs = pick(size, full=50, quick=15, smoke=2)
    chars = pick(size, full=CHARS, quick=CHARS, smoke=5_000)
    rng = random.Random(11)
    values = protected(rng)
    leaks = []
    for _ in range(20):
        value = rng.choice(values)
        start = rng.randrange(len(value) - 20)
        piece = value[start:start + rng.randint(8, 20)]
        leaks.append(piece[::-1] if rng.random() < 0.5 else piece)
    clean = result_text(rng, chars, [])
    leaky = result_text(rng, chars, leaks)
    scrubber = SecretScrubber(values)
    figure = Figure(
        KEY, TITLE,
        method=(f"{len(values)} protected values (3 × 108-character keys, 3 × 40-character tokens); a {chars:,}-character "
                "log-like result, clean and with 20 leaked slices (8–20 characters, half reversed). Median of "
                f"{runs} calls after one warm-up. Ratios are to the scrubber on the clean result."),
        size=size,
    )
    base = figure.add(Row.from_samples("scrubber, clean result", timed(lambda: scrubber.scrub(clean), runs), "ms",
                                       scale=1000))
    figure.add(Row.from_samples("scrubber, 20 leaked slices", timed(lambda: scrubber.scrub(leaky), runs), "ms",
                                scale=1000, note=f"{scrubber.scrub(leaky).count('[secret]')} replacements").compare_to(base))
    scan = eight_gram_scan(values)
    figure.add(Row.from_samples("pure-Python 8-gram scan, clean result", timed(lambda: scan(clean), runs), "ms",
                                scale=1000, note="same rule, no automaton").compare_to(base))
    mask = whole_value_mask(values)
    figure.add(Row.from_samples("old whole-value mask, clean result", timed(lambda: mask(clean), runs), "ms",
                                scale=1000, note="misses every slice").compare_to(base))
    with_scrubber = figure.add(Row.from_samples(
        "run_tool_use, session scrubber", timed(through_run_tool_use(clean, scrubber), runs), "ms", scale=1000))
    without = figure.add(Row.from_samples(
        "run_tool_use, no protected values", timed(through_run_tool_use(clean, SecretScrubber()), runs), "ms",
        scale=1000))
    with_scrubber.compare_to(without)
    figure.targets.append(Target(f"scrubbing a {chars:,}-character result ≤ {MAX_MS:g} ms (own check)",
                                 base.value, MAX_MS, "ms", own=True))
    leaked_row = figure.row("scrubber, 20 leaked slices")
    figure.targets.append(Target(f"… with 20 leaked slices ≤ {MAX_MS:g} ms (own check)", leaked_row.value, MAX_MS,
                                 "ms", own=True))
    if with_scrubber.value is not None and without.value is not None:
        figure.notes.append(f"Added per call at the choke point: {with_scrubber.value - without.value:.2f} ms "
                            "(the content is scanned before packaging, because the full text of an oversized "
                            "result is kept in the session, and the packaged result once more).")
    return figure
