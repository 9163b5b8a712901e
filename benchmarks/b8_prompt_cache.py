"""B8 — prompt-cache prefix stability over the 20 requests of a real run (SPEC §7.1).

The API reads its prompt cache when a request starts with the same content as an earlier one
(tools, then system, then messages). Each request of a run should therefore begin with the
previous request, byte for byte. Measured on the bodies the fake server received from the
SDK: for each request N, the share of its cacheable input (`cache_prefix_bytes`: tools,
system and messages, one JSON document each, cache markers removed — the API matches on
content, not on where the markers sit) that is a byte-identical prefix of request N+1.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from jupyter_toolagent.core.request_body import cache_prefix_bytes

from .harness import Figure, Row, Size, Target, pick

KEY = "B8"
TITLE = "Prompt-cache prefix stability over 20 requests"
TARGET = 0.9


def common_prefix(a: bytes, b: bytes) -> int:
    return len(os.path.commonprefix([a, b]))


def conversation(requests: int) -> Any:
    """Tool turns of several shapes (text + call, parallel calls, a call alone), then text."""
    from jupyter_toolagent.models import text_block, tool_use_block

    def turn(body: dict[str, Any]) -> Any:
        done = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if done >= requests - 1:
            return [text_block("The data has 3 columns; `value` has no missing entries.")]
        shape = done % 3
        if shape == 0:
            return [text_block(f"Let me look at the frame (step {done})."),
                    tool_use_block("InspectVariable", {"path": "df"})]
        if shape == 1:
            return [tool_use_block("InspectVariable", {"path": "arr"}), tool_use_block("lookup", {"key": f"k{done}"})]
        return [tool_use_block("ListVariables", {})]

    return turn


def namespace() -> dict[str, Any]:
    import numpy as np
    import pandas as pd

    from jupyter_toolagent import tool

    @tool(read_only=True)
    def lookup(key: str) -> str:
        """Look a key up in the reference table.

        Args:
            key: The key.
        """
        return f"{key} -> {len(key) * 7}"

    return {
        "df": pd.DataFrame({"id": range(100), "value": [i * 0.5 for i in range(100)], "group": ["a", "b"] * 50}),
        "arr": np.linspace(0.0, 1.0, 1000),
        "lookup": lookup,
    }


def run(size: Size = "full") -> Figure:
    requests = pick(size, full=20, quick=20, smoke=6)
    figure = Figure(
        KEY, TITLE,
        method=(f"One `Agent` run of {requests} requests through `AnthropicModel` and the fake server (built-in tools "
                "plus a `@tool` function, tool turns of three shapes, then a final text). For each request N < "
                f"{requests}: bytes of `cache_prefix_bytes(N)` that are a prefix of `cache_prefix_bytes(N+1)`, divided "
                "by the size of `cache_prefix_bytes(N)`. Deterministic: one run."),
        size=size,
    )
    bodies = asyncio.run(_record(requests))
    views = [cache_prefix_bytes(b) for b in bodies]
    shares = []
    lines = ["| request | cacheable bytes | prefix of the next request | share |", "|---|---|---|---|"]
    for index in range(len(views) - 1):
        shared = common_prefix(views[index], views[index + 1])
        share = shared / len(views[index])
        shares.append(share)
        lines.append(f"| {index + 1} | {len(views[index]):,} | {shared:,} | {share:.4f} |")
    figure.details.append("Per request:\n\n" + "\n".join(lines))
    figure.add(Row("requests recorded", float(len(bodies)), "", 1))
    figure.add(Row.from_samples("share reused by the next request, requests 1–2", shares[:2], ""))
    later = shares[2:]
    worst = figure.add(Row("lowest share from request 3 on", min(later) if later else None, "", len(later)))
    figure.add(Row.from_samples("median share from request 3 on", later, ""))
    figure.targets.append(Target(f"share ≥ {TARGET} for every request from the third on", worst.value, TARGET, "",
                                 at_least=True))
    if len(bodies) != requests:
        figure.notes.append(f"Expected {requests} requests, the server recorded {len(bodies)}.")
    return figure


async def _record(requests: int) -> list[dict[str, Any]]:
    from jupyter_toolagent import Agent
    from jupyter_toolagent.models.anthropic import AnthropicModel
    from jupyter_toolagent.testing import FakeAnthropicServer

    from .runners import KEY as API_KEY
    from .runners import MODEL

    with FakeAnthropicServer(turns=conversation(requests)) as server:
        model = AnthropicModel(MODEL, api_key=API_KEY, base_url=server.base_url)
        agent = Agent(model, builtin_tools=_has_builtin_tools(), namespace=namespace(), max_turns=requests + 5)
        record = await agent.run("What is in df and arr? Use lookup on a few keys.")
        close = getattr(model, "aclose", None)  # closes the client's connection pool where supported
        if close is not None:
            await close()
        if record.finish_reason != "end_turn":
            raise RuntimeError(f"the run ended with {record.finish_reason}: {record.error}")
        return [r.body for r in server.requests if r.path == "/v1/messages" and isinstance(r.body, dict)]


def _has_builtin_tools() -> bool:
    try:
        from jupyter_toolagent.tools import builtin_tools  # noqa: F401
    except ImportError:
        return False
    return True
