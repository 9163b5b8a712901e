"""B13 — tokens sent over a long session with and without compaction, and the prompt cache
after a compaction (SPEC §14).

One scripted notebook session of 200 model requests (20 cells of 10: nine tool calls whose
results are ~1,500-character DataFrame-like summaries, then a text answer), with the built-in
tools offered as in every ``%%agent`` cell, run twice through `AnthropicModel` and the fake
server:

* **without**: ``auto_compact=False`` and no window limit — every request carries everything;
* **with**: a 16,000-token window (``context_window=`` override, the server enforcing the same
  window), so clearing and summaries happen as the session grows.

Tokens are the fake server's count (characters of the JSON body / 4), summed over every
request it received, the summary requests included. The cache share of request N is the part
of its cacheable content (`cache_prefix_bytes`: tools, system, messages, markers removed) that
is a byte-identical prefix of request N-1's — what the API could read from the cache N-1
wrote. After each compaction the first request rewrites the cache past tools and system; the
target is that the share is back at ≥ 0.9 by the second request after it.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from jupyter_toolagent.core.request_body import cache_prefix_bytes

from .harness import Figure, Row, Size, Target, pick

KEY = "B13"
TITLE = "Long session: tokens sent with and without compaction; prompt cache after a compaction"
TARGET = 0.9
WINDOW = 16_000


def _share(previous: bytes, current: bytes) -> float:
    return len(os.path.commonprefix([previous, current])) / len(current) if current else 0.0


def _turns(per_cell: int) -> Any:
    state = {"n": 0}

    def turn(body: dict[str, Any]) -> Any:
        from jupyter_toolagent.models import tool_use_block

        state["n"] += 1
        if state["n"] % per_cell == 0:
            return f"Cell done after {state['n']} requests: the columns look consistent."
        return [{"type": "text", "text": f"Looking at part {state['n']}."},
                tool_use_block("describe_part", {"part": state["n"]})]

    return turn


def _tools() -> list[Any]:
    from jupyter_toolagent import tool

    @tool(read_only=True)
    def describe_part(part: int) -> str:
        """Describe one part of the data set (a DataFrame-like summary).

        Args:
            part: Which part.
        """
        rows = [f"col{c:02d}  mean={part * c % 101 / 7:.3f}  std={c / 3:.2f}  nulls={part % (c + 2)}" for c in range(36)]
        return f"part {part}: shape (10000, 36)\n" + "\n".join(rows)

    return [describe_part]


async def _session(requests: int, per_cell: int, compact: bool) -> tuple[list[dict[str, Any]], Any, list[int]]:
    """The bodies the server received, the session, and the index (among conversation
    requests) of the first request after each compaction."""
    from jupyter_toolagent import Agent
    from jupyter_toolagent.models.anthropic import AnthropicModel
    from jupyter_toolagent.testing import FakeAnthropicServer

    from .runners import KEY as API_KEY
    from .runners import MODEL

    with FakeAnthropicServer(turns=_turns(per_cell), context_window=WINDOW if compact else None) as server:
        model = AnthropicModel(MODEL, api_key=API_KEY, base_url=server.base_url, max_retries=0)
        agent = Agent(model, tools=_tools(), builtin_tools=True, max_turns=per_cell + 2,
                      context_window=WINDOW if compact else None)
        agent.config.auto_compact = compact
        started = [0]
        restarts: list[int] = []

        def count(event: Any) -> None:
            if event.kind == "request_started":
                started[0] += 1
            elif event.kind == "notice" and event.text.startswith("Context compacted"):
                restarts.append(started[0])  # the next conversation request is the first after it

        try:
            for cell in range(requests // per_cell):
                record = await agent.run(f"Cell {cell}: describe the next parts.", on_event=count)
                if record.finish_reason != "end_turn":
                    raise RuntimeError(f"cell {cell} ended with {record.finish_reason}: {record.error}")
        finally:
            await model.aclose()
        bodies = [r.body for r in server.requests if r.path.startswith("/v1/messages") and isinstance(r.body, dict)]
        return bodies, agent.session, restarts


def run(size: Size = "full") -> Figure:
    from jupyter_toolagent.testing.summaries import body_tokens, is_summary_request

    requests = pick(size, full=200, quick=100, smoke=40)
    per_cell = 10
    figure = Figure(
        KEY, TITLE,
        method=(f"{requests} scripted requests in {requests // per_cell} cells (9 tool calls with ~1,500-character "
                f"results, then text), `AnthropicModel` → fake server. Without: `auto_compact=False`. With: a "
                f"{WINDOW:,}-token window (override, and the server enforcing it). Tokens: the server's count "
                "(characters/4 of each JSON body), summed over every request including the summary requests. "
                "Cache share of request N: bytes of `cache_prefix_bytes(N)` that are a prefix shared with request "
                "N-1, over the size of N. Deterministic: one run each."),
        size=size,
    )
    plain, _, _ = asyncio.run(_session(requests, per_cell, compact=False))
    compacted, session, restarts = asyncio.run(_session(requests, per_cell, compact=True))
    sent_plain = sum(body_tokens(b) for b in plain)
    sent_compacted = sum(body_tokens(b) for b in compacted)
    largest_plain = max(body_tokens(b) for b in plain)
    largest_compacted = max(body_tokens(b) for b in compacted)
    without = figure.add(Row("tokens sent without compaction", float(sent_plain), "tokens", 1,
                             note=f"largest request {largest_plain:,} tokens"))
    figure.add(Row("tokens sent with clearing and compaction", float(sent_compacted), "tokens", 1,
                   note=f"largest request {largest_compacted:,} tokens; window {WINDOW:,}").compare_to(without))
    summaries = [b for b in compacted if is_summary_request(b)]
    figure.add(Row("compactions", float(len(session.context.compactions)), "", 1,
                   note=f"{len(summaries)} with a summary request"))

    conversation = [b for b in compacted if not is_summary_request(b)]
    views = [cache_prefix_bytes(b) for b in conversation]
    shares = [None] + [_share(views[i - 1], views[i]) for i in range(1, len(views))]
    after_first, after_second = [], []
    lines = ["| compaction before request | share of that request | share of the next | share of the one after |",
             "|---|---|---|---|"]
    for i in restarts:
        row = [shares[j] if j < len(shares) else None for j in (i, i + 1, i + 2)]
        if row[1] is not None:
            after_first.append(row[1])
        if row[2] is not None:
            after_second.append(row[2])
        lines.append(f"| {i + 1} | " + " | ".join("—" if v is None else f"{v:.3f}" for v in row) + " |")
    figure.details.append("Cache share around each compaction:\n\n" + "\n".join(lines))
    steady = [s for i, s in enumerate(shares) if s is not None and i not in restarts
              and i - 1 not in restarts]
    figure.add(Row.from_samples("cache share, requests away from a compaction (median)", steady, ""))
    figure.add(Row.from_samples("cache share of the first request after a compaction (median)",
                                [shares[i] for i in restarts if shares[i] is not None], ""))
    worst = figure.add(Row("lowest cache share of the 2nd request after a compaction",
                           min(after_first) if after_first else None, "", len(after_first)))
    figure.targets.append(Target(f"cache share ≥ {TARGET} again within 2 requests of every compaction",
                                 worst.value, TARGET, "", at_least=True))
    reduction = Row("tokens sent with compaction / without", sent_compacted / sent_plain if sent_plain else None, "×", 1)
    figure.add(reduction)
    figure.notes.append("The session offers the built-in tools, as every %%agent cell does: their schemas and the "
                        "system prompt are the part of the prefix a compaction never changes. The share of a "
                        "request is bounded by how much it adds: right after a summary the context is small, so "
                        "one new ~400-token result weighs more (with a single small tool and no built-ins the "
                        "same measurement gave 0.82 on this machine).")
    figure.notes.append("The fake server's cache is not simulated: shares are measured on the bodies, as B8 does. "
                        "Summary requests repeat the conversation's own tools, system prompt and messages, so "
                        "they read the cache the conversation wrote; their share is not counted above.")
    return figure
