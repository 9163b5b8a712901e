"""R7 — load: a 500-request session, and one turn with 1,000 concurrency-safe calls.

Both go through the real SDK path (`AnthropicModel` → `FakeAnthropicServer`).

* 500 requests in one run, one tool call per request. Memory is traced (tracemalloc) and
  measured at request 50, 275 and 500, together with the size of the transcript. The session
  keeps, on purpose, the transcript, every request body as sent and every response (the
  ``%agent raw`` view needs them), so memory grows with every request; what must not happen is
  the per-request cost growing with the length of the conversation (each stored request body
  holding its own copy of the whole transcript would make the second half of the run cost far
  more per request than the first half). The bound: the second half costs at most 1.5 times
  the first half per request, and at most 64 KB per request. (Before requests shared the
  transcript's blocks and `RunRecord.requests` became a `RequestLog`, it was ~226 KB per request
  over requests 50-275 and ~511 KB over 275-500, a 206 MB traced peak.)
* 1,000 safe calls in one assistant message with ``TOOLAGENT_MAX_TOOL_USE_CONCURRENCY=10``:
  never more than 10 at once, 10 reached, every call paired, the follow-up request accepted.
"""

from __future__ import annotations

import asyncio
import json
import time
import tracemalloc
from typing import Any

import pytest
from reliability_support import (
    RecordingPolicy,
    assert_bodies_valid,
    assert_every_tool_use_paired_once,
    blocks,
    empty_hooks,
)
from runtime_support import Gauge, probe_tools
from suite_counts import report

from jupyter_toolagent.core.events import RequestFinishedEvent, RunFinishedEvent
from jupyter_toolagent.core.session import RunConfig, Session
from jupyter_toolagent.models.anthropic import AnthropicModel
from jupyter_toolagent.testing import FakeAnthropicServer

REQUESTS = 500
CALLS = 1000
CAP = 10
MARKS = (50, 275, 500)
PER_REQUEST_LIMIT = 64 * 1024


class OneCallPerRequest:
    """Answers every request with one tool call until the last, which gets text. Keeps no
    history in the server (the test process measures the client's memory)."""

    def __init__(self, server_ref: list[FakeAnthropicServer]) -> None:
        self.server_ref = server_ref
        self.answered = 0
        self.seen = 0

    def __call__(self, body: dict[str, Any]) -> Any:
        server = self.server_ref[0]
        self.seen += len(server.requests)  # every request so far reached this turn function
        server.requests.clear()
        server.responses.clear()
        n = self.answered
        self.answered += 1
        last = blocks(body["messages"][-1])
        assert n == 0 or any(b.get("type") == "tool_result" for b in last)
        if n >= REQUESTS - 1:
            return "All done."
        return [{"type": "text", "text": f"Step {n}."},
                {"type": "tool_use", "name": "Look", "input": {"tag": f"step-{n}"}}]


class LongRun:
    """What the 500-request run measured (made once, shared by the tests below)."""

    def __init__(self) -> None:
        self.turns: OneCallPerRequest | None = None
        self.session = Session()
        self.effects: list[str] = []
        self.marks: dict[int, tuple[int, int]] = {}
        self.finished: RunFinishedEvent | None = None
        self.wall = 0.0
        self.peak = 0

    def per_request(self, start: int, end: int) -> float:
        return (self.marks[end][0] - self.marks[start][0]) / (end - start)

    async def run(self) -> "LongRun":
        ref: list[FakeAnthropicServer] = []
        self.turns = OneCallPerRequest(ref)
        with FakeAnthropicServer(turns=self.turns) as server:
            ref.append(server)
            model = AnthropicModel("claude-load", api_key="test-key", base_url=server.base_url, max_retries=0)
            config = RunConfig(model=model, tool_provider=lambda: probe_tools(self.effects),
                               can_use_tool=RecordingPolicy(), hooks=empty_hooks(), max_turns=REQUESTS + 1)
            tracemalloc.start()
            started = time.monotonic()
            try:
                async for event in self.session.run("Take 500 small steps.", config):
                    if isinstance(event, RequestFinishedEvent) and event.index + 1 in MARKS:
                        self.marks[event.index + 1] = (tracemalloc.get_traced_memory()[0],
                                                       len(json.dumps(self.session.messages)))
                    if isinstance(event, RunFinishedEvent):
                        self.finished = event
            finally:
                self.peak = tracemalloc.get_traced_memory()[1]
                tracemalloc.stop()
            self.wall = time.monotonic() - started
            self.turns.seen += len(server.requests)
            await model.aclose()
        return self


@pytest.fixture(scope="module")
def long_run() -> LongRun:
    measured = asyncio.run(LongRun().run())
    first, second = measured.per_request(*MARKS[:2]), measured.per_request(*MARKS[1:])
    transcript = measured.marks[MARKS[2]][1]
    report("r7_requests", REQUESTS)
    report("r7_wall_seconds", round(measured.wall, 1),
           f"{1000 * measured.wall / REQUESTS:.1f} ms per request with tracemalloc on")
    report("r7_memory_per_request_bytes", {f"requests {MARKS[0]}-{MARKS[1]}": round(first),
                                           f"requests {MARKS[1]}-{MARKS[2]}": round(second)})
    report("r7_transcript_json_bytes", {"at 500": transcript, "per request": round(transcript / REQUESTS)})
    report("r7_traced_peak_mb", round(measured.peak / 2**20, 1))
    return measured


def test_a_500_request_session_stays_valid(long_run: LongRun) -> None:
    assert long_run.finished is not None and long_run.finished.reason == "end_turn", long_run.finished
    assert long_run.turns is not None
    assert long_run.turns.answered == REQUESTS and long_run.turns.seen == REQUESTS, "every request accepted (no 400)"
    record = long_run.session.runs[-1]
    assert len(record.requests) == REQUESTS
    assert long_run.effects == [f"step-{n}" for n in range(REQUESTS - 1)]
    assert_every_tool_use_paired_once(long_run.session.messages)
    assert_bodies_valid(record.requests[-1:])
    assert len(long_run.session.messages) == 2 * REQUESTS


def test_memory_per_request_does_not_grow_with_the_conversation(long_run: LongRun) -> None:
    first, second = long_run.per_request(*MARKS[:2]), long_run.per_request(*MARKS[1:])
    assert second <= 1.5 * first + 1024, "the per-request cost grows with the conversation (quadratic memory)"
    assert second <= PER_REQUEST_LIMIT, f"{second:.0f} bytes kept per request"


@pytest.mark.asyncio
@pytest.mark.parametrize("streaming", [True, False], ids=["while_streaming", "after_the_stream"])
async def test_1000_safe_calls_in_one_turn_respect_the_cap(streaming: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLAGENT_MAX_TOOL_USE_CONCURRENCY", str(CAP))
    follow_up: list[dict[str, Any]] = []

    def turns(body: dict[str, Any]) -> Any:
        if any(b.get("type") == "tool_result" for b in blocks(body["messages"][-1])):
            follow_up.append(body)
            return "All looked at."
        return [{"type": "tool_use", "name": "Look", "input": {"tag": f"look-{n}", "delay": 0.005}}
                for n in range(CALLS)]

    effects: list[str] = []
    gauge = Gauge()
    with FakeAnthropicServer(turns=turns) as server:
        model = AnthropicModel("claude-load", api_key="test-key", base_url=server.base_url, max_retries=0)
        session = Session()
        config = RunConfig(model=model, tool_provider=lambda: probe_tools(effects, gauge),
                           can_use_tool=RecordingPolicy(), hooks=empty_hooks(), max_turns=3,
                           streaming_tools=streaming)
        started = time.monotonic()
        events = [e async for e in session.run("Look at a thousand things.", config)]
        wall = time.monotonic() - started
        assert_bodies_valid(server.bodies)
        await model.aclose()

    assert events[-1].reason == "end_turn", events[-1]
    assert sorted(effects) == sorted(f"look-{n}" for n in range(CALLS)) and len(set(effects)) == CALLS
    assert gauge.most == CAP, f"at most {CAP} at once, and the cap was reached: {gauge.most}"
    assert_every_tool_use_paired_once(session.messages)
    (body,) = follow_up
    results = [b for b in blocks(body["messages"][-1]) if b.get("type") == "tool_result"]
    assert len(results) == CALLS and not any(r.get("is_error") for r in results)
    mode = "streaming" if streaming else "after_stream"
    report(f"r7_{mode}_1000_calls", {"max_concurrency": gauge.most, "wall_seconds": round(wall, 2)})
