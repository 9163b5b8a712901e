"""B12 — deferred tools and parallel sub-agents (SPEC §12, §13).

Two questions, each answered by rows measured side by side in one run:

* how many input tokens the first request of a session costs with 100 MCP-like tools from 5
  servers, with the tools sent in full (``defer_tools="never"``) and deferred (``"auto"``: names
  in a message, ``ToolSearch`` in ``tools``). The count is the fake server's (about four
  characters per token of the request body), and the body's size in bytes is shown beside it;
* the wall time of a run whose model starts one ``explore`` sub-agent running a 0.5 s
  read-only tool, and of one that starts two such sub-agents in the same message (they are
  concurrency-safe, so they should overlap).
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from typing import Any

from pydantic import BaseModel, ConfigDict

from .harness import Figure, Row, Size, Target, pick

KEY = "B12"
TITLE = "Deferred tools (first-request tokens) and parallel explore sub-agents (wall time)"
SERVERS = ["github", "jira", "slack", "drive", "postgres"]
VERBS = ["get", "list", "search", "create", "update", "delete", "export", "sync", "count", "describe",
         "archive", "restore", "tag", "move", "copy", "share", "lock", "unlock", "rename", "audit"]
TOOL_SECONDS = 0.5


def mcp_like_tools() -> list[Any]:
    """100 tools shaped like real MCP servers' (a paragraph of description, 6 documented
    parameters); named ``mcp__SERVER__TOOL`` so the deferral rule treats them as MCP tools."""
    from jupyter_toolagent import Tool

    class Free(BaseModel):
        model_config = ConfigDict(extra="allow")

    class McpLike(Tool):
        input_model = Free

        def __init__(self, server: str, verb: str) -> None:
            self.name = f"mcp__{server}__{verb}_item"
            self.rule_group = f"mcp__{server}"
            self.description = (
                f"{verb.capitalize()} an item in {server}. Works on issues, documents, messages and records "
                "alike; the item is addressed by its id as returned by the list tool. Respects the caller's "
                "permissions in the remote system and returns the item's fields as JSON. Rate limited to 60 "
                "calls per minute; on HTTP 429 wait and retry. Pagination: pass the cursor from the previous "
                "response. Dates are ISO 8601 in UTC.")

        def input_schema(self) -> dict[str, Any]:
            def field(kind: str, text: str) -> dict[str, Any]:
                return {"type": kind, "description": text}
            return {"type": "object", "required": ["item_id"], "properties": {
                "item_id": field("string", "The item's id in the remote system, as returned by the list tool."),
                "fields": {"type": "array", "items": {"type": "string"},
                           "description": "Fields to include in the answer (default: all fields)."},
                "cursor": field("string", "Pagination cursor from the previous response, if any."),
                "limit": field("integer", "Most items to return (1-100, default 20)."),
                "since": field("string", "Only items changed after this ISO 8601 time."),
                "options": field("object", "Extra options passed to the vendor's API unchanged.")}}

        def parse_input(self, raw: Any) -> BaseModel:
            return Free.model_validate(raw)

        def is_read_only(self, input: BaseModel) -> bool:
            return True

        async def call(self, input: BaseModel, ctx: Any, progress: Any) -> str:
            return "ok"

    return [McpLike(s, v) for s in SERVERS for v in VERBS]


async def first_request(server: Any, mode: str) -> tuple[int, int]:
    """(the fake server's input tokens, body bytes) of a session's first request."""
    from jupyter_toolagent import Agent
    from jupyter_toolagent.models.anthropic import AnthropicModel

    server.set_turns(["hi"])
    before = len(server.bodies)
    agent = Agent(AnthropicModel("claude-sonnet-5-5", base_url=server.base_url, api_key="sk-ant-bench-0000"),
                  tools=mcp_like_tools(), defer_tools=mode)
    record = await agent.run("Which tools do you have?")
    body = server.bodies[before]
    return record.usage.input_tokens, len(json.dumps(body, ensure_ascii=False).encode())


async def sub_agent_run(server: Any, agents: int) -> float:
    """Wall time of a run whose first response starts ``agents`` explore sub-agents at once."""
    from jupyter_toolagent import Agent, tool
    from jupyter_toolagent.models.anthropic import AnthropicModel
    from jupyter_toolagent.models import tool_use_block

    @tool(read_only=True)
    async def lookup(key: str) -> str:
        """Look a key up (takes half a second)."""
        await asyncio.sleep(TOOL_SECONDS)
        return f"value of {key}"

    prompts = [f"SUB {i}" for i in range(agents)]
    turns = {"main": [[tool_use_block("Agent", {"description": f"look {i}", "prompt": p, "subagent_type": "explore"})
                       for i, p in enumerate(prompts)], "done"]}
    for i, p in enumerate(prompts):
        turns[p] = [[tool_use_block("lookup", {"key": str(i)})], f"found {i}"]
    lock = threading.Lock()

    def answer(body: dict[str, Any]) -> Any:
        first = "".join(b.get("text", "") for b in body["messages"][0]["content"] if b.get("type") == "text")
        with lock:
            return turns[first].pop(0)

    server.set_turns(answer)
    agent = Agent(AnthropicModel("claude-sonnet-5-5", base_url=server.base_url, api_key="sk-ant-bench-0000"),
                  tools=[lookup], subagents=True)
    start = time.perf_counter()
    record = await agent.run("main")
    wall = time.perf_counter() - start
    if record.finish_reason != "end_turn" or len(record.subruns) != agents:
        raise RuntimeError(f"the scripted sub-agent run did not complete ({record.finish_reason})")
    return wall


SEARCH_AT = 3
"""The response to this request (1-based) is the ``ToolSearch`` call."""


async def shares_around_a_search(server: Any, requests: int) -> list[float]:
    """Per request N of one run with 100 deferred tools, the share of its cacheable prefix
    (`cache_prefix_bytes`: tools, system, messages) that request N+1 repeats byte for byte (B8's
    measure). The model calls a notebook function, searches once (the response to request
    `SEARCH_AT`), then calls the tool it loaded until the last request."""
    from jupyter_toolagent import Agent, tool
    from jupyter_toolagent.models.anthropic import AnthropicModel
    from jupyter_toolagent.core.request_body import cache_prefix_bytes
    from jupyter_toolagent.models import tool_use_block

    @tool(read_only=True)
    def peek(key: str) -> str:
        """A notebook function (never deferred)."""
        return f"value of {key}"

    loaded = "mcp__jira__archive_item"
    turns: list[Any] = []
    for index in range(1, requests):
        if index == SEARCH_AT:
            turns.append([tool_use_block("ToolSearch", {"query": f"select:{loaded}"})])
        elif index < SEARCH_AT:
            turns.append([tool_use_block("peek", {"key": f"k{index}"})])
        else:
            turns.append([tool_use_block(loaded, {"item_id": f"J-{index}"})])
    turns.append("done")
    server.set_turns(turns)
    agent = Agent(AnthropicModel("claude-sonnet-5-5", base_url=server.base_url, api_key="sk-ant-bench-0000"),
                  tools=[peek, *mcp_like_tools()], defer_tools="auto", max_turns=requests)
    record = await agent.run("Archive the items.")
    views = [cache_prefix_bytes(body) for body in list(record.requests)]
    if len(views) != requests:
        raise RuntimeError(f"expected {requests} requests, the run made {len(views)}")
    return [len(os.path.commonprefix([views[i], views[i + 1]])) / len(views[i]) for i in range(len(views) - 1)]


def run(size: Size = "full") -> Figure:
    from jupyter_toolagent.testing import FakeAnthropicServer

    runs = pick(size, full=5, quick=3, smoke=1)
    requests = pick(size, full=12, quick=10, smoke=7)
    figure = Figure(
        KEY, TITLE,
        method=("First request of a new session with 100 MCP-like tools from 5 servers (a paragraph of description "
                "and 6 documented parameters each), sent in full (`defer_tools=\"never\"`) and deferred (`\"auto\"`); "
                "input tokens are the fake server's count of the request body (≈ 4 characters per token). Then "
                f"the wall time of a run that starts one explore sub-agent running a {TOOL_SECONDS:g} s read-only "
                "tool, and of one that starts two in the same response (2 model requests per sub-agent plus "
                f"the parent's 2). Last, B8's prefix share (the part of request N's cacheable prefix that request N+1 repeats) "
                f"over one {requests}-request run in which the response to request {SEARCH_AT} loads a deferred tool. "
                f"Median of {runs} runs; real SDK over HTTP+SSE to the fake server on 127.0.0.1."),
        size=size,
    )
    with FakeAnthropicServer() as server:
        async def measure() -> tuple[list[Any], ...]:
            """All runs on one event loop (the SDK's HTTP clients close on the loop they opened on)."""
            full = [await first_request(server, "never") for _ in range(runs)]
            deferred = [await first_request(server, "auto") for _ in range(runs)]
            one = [await sub_agent_run(server, 1) for _ in range(runs)]
            two = [await sub_agent_run(server, 2) for _ in range(runs)]
            shares = await shares_around_a_search(server, requests)
            return full, deferred, one, two, shares

        full, deferred, one, two, shares = asyncio.run(measure())
        full_row = figure.add(Row.from_samples("first request, 100 tools sent in full", [t for t, _ in full], "tokens"))
        def_row = figure.add(Row.from_samples("first request, 100 tools deferred", [t for t, _ in deferred], "tokens"))
        def_row.compare_to(full_row)
        figure.add(Row.from_samples("request body, 100 tools sent in full", [b for _, b in full], "bytes"))
        figure.add(Row.from_samples("request body, 100 tools deferred", [b for _, b in deferred], "bytes")).compare_to(
            figure.row("request body, 100 tools sent in full"))
        saved = 1 - def_row.ratio if def_row.ratio is not None else None
        figure.targets.append(Target("deferred: ≥ 85 % fewer first-request input tokens",
                                     None if saved is None else saved * 100, 85.0, "%", at_least=True))

        one_row = figure.add(Row.from_samples(f"one explore agent, {TOOL_SECONDS:g} s tool", one, "s"))
        two_row = figure.add(Row.from_samples(f"two explore agents in parallel, {TOOL_SECONDS:g} s tool each", two, "s"))
        two_row.compare_to(one_row)
        figure.targets.append(Target("two parallel explore agents: wall ≤ 1.2× one", two_row.ratio, 1.2, "×"))
    figure.add(Row(f"prefix share of request {SEARCH_AT} (the search is its response)", shares[SEARCH_AT - 1], "", 1))
    figure.add(Row(f"prefix share of request {SEARCH_AT + 1} (the first with the loaded tool)", shares[SEARCH_AT], "", 1))
    after = shares[SEARCH_AT + 1:]
    worst = figure.add(Row(f"lowest prefix share from request {SEARCH_AT + 2} on", min(after) if after else None, "",
                           len(after)))
    figure.targets.append(Target("B8's prefix share ≥ 0.9 again from the second request after a search",
                                 worst.value, 0.9, "", at_least=True))
    lines = ["| request | share of its cacheable prefix repeated by the next |", "|---|---|"]
    lines += [f"| {i + 1} | {share:.4f} |" for i, share in enumerate(shares)]
    figure.details.append("\n".join(lines))
    figure.notes.append("The deferred request carries the 100 names in a text block of the first user message and "
                        "`ToolSearch` in `tools`; the session's other tools (here the `Agent` tool, offered by default) are "
                        "sent in full on both sides.")
    return figure
