"""R8 — a long session in a small context window (SPEC §14), through the real SDK path.

1,000 requests (`AnthropicModel` → `FakeAnthropicServer` with a 6,000-token window), in ten
cells of a hundred requests, each request one tool call with a ~600-character result; the
window is passed as the override, as `%config AgentMagics.context_window` would. What must hold:

* never a 400: the server counts every body (characters/4) and would answer "prompt is too
  long"; it never has to, and every body it receives passes the pairing check;
* compactions happen where expected: only when a request would pass ``compact_at`` (0.8) of the
  window, each cuts at a cut point (an assistant message or a prompt), keeps exactly the last
  ``compact_keep`` assistant turns, and brings the request back under ``compact_at``;
* memory is bounded: the transcript is kept in full on purpose (the original stays in the
  session), so memory grows by a constant per request — not with the length of the
  conversation — and the bodies sent stay under the window however long the session gets.
  Memory is traced (tracemalloc) over two windows of 100 requests, early and late, so the test
  stays within a minute: what each window's requests allocated and kept, per request.

Then the 400 itself: "prompt is too long" injected once → compacted and retried once, the run
succeeds; a window the conversation cannot fit even after compaction → one clear error line.
"""

from __future__ import annotations

import asyncio
import json
import time
import tracemalloc
from typing import Any

import pytest
from pydantic import BaseModel
from reliability_support import RecordingPolicy, blocks, empty_hooks
from suite_counts import report

from jupyter_toolagent.core.compaction import SUMMARY_REQUEST_MARKER, is_cut_point
from jupyter_toolagent.core.events import NoticeEvent, RunFinishedEvent
from jupyter_toolagent.core.pairing import check_pairing, normalize_messages_for_api
from jupyter_toolagent.core.session import RunConfig, Session
from jupyter_toolagent.core.tool import Progress, Tool, ToolUseContext
from jupyter_toolagent.models.anthropic import AnthropicModel
from jupyter_toolagent.testing import FakeAnthropicServer, Fault
from jupyter_toolagent.testing.summaries import body_tokens, is_summary_request
from jupyter_toolagent.testing.validation import request_error

WINDOW = 6000
CELLS = 10
PER_CELL = 100
REQUESTS = CELLS * PER_CELL
WINDOWS = ((200, 300), (800, 900))
PER_REQUEST_LIMIT = 48 * 1024


class StepInput(BaseModel):
    n: int


class Measure(Tool):
    """A read-only tool whose result is ~600 characters (a DataFrame summary's size)."""

    name = "Measure"
    description = "Measure step n of the experiment."
    input_model = StepInput

    def is_concurrency_safe(self, input: BaseModel) -> bool:
        return True

    def is_read_only(self, input: BaseModel) -> bool:
        return True

    async def call(self, input: BaseModel, ctx: ToolUseContext, progress: Progress) -> Any:
        assert isinstance(input, StepInput)
        return f"step {input.n}: " + ", ".join(f"col{i}={input.n * i % 97}" for i in range(60))


class Script:
    """Per cell: 99 tool calls then a text answer. Checks every conversation request it sees
    and keeps no history (the test measures the client's memory)."""

    def __init__(self) -> None:
        self.requests = 0
        self.summaries = 0
        self.invalid: list[str] = []
        self.largest = 0
        self.in_cell = 0

    def __call__(self, body: dict[str, Any]) -> Any:
        problem = request_error(body) or (check_pairing(body["messages"]) or [None])[0]
        if problem is not None:
            self.invalid.append(str(problem))
        self.largest = max(self.largest, body_tokens(body))
        self.requests += 1
        self.in_cell += 1
        if self.in_cell >= PER_CELL:
            self.in_cell = 0
            return "All steps measured."
        return [{"type": "tool_use", "name": "Measure", "input": {"n": self.requests}}]


class LongSession:
    def __init__(self) -> None:
        self.script = Script()
        self.session = Session()
        self.kept: list[float] = []
        """Bytes kept per request over each of `WINDOWS`."""
        self.finished: list[RunFinishedEvent] = []
        self.notices: list[str] = []
        self.compaction_requests: list[int] = []
        self.too_long = 0
        self.summary_requests = 0
        self.peak = 0
        self.wall = 0.0

    async def run(self) -> "LongSession":
        with FakeAnthropicServer(turns=self.script, context_window=WINDOW, keep=2) as server:
            model = AnthropicModel("claude-sonnet-5-5", api_key="test-key", base_url=server.base_url, max_retries=0)
            config = RunConfig(model=model, tool_provider=lambda: [Measure()], can_use_tool=RecordingPolicy(),
                               hooks=empty_hooks(), max_turns=PER_CELL + 5, context_window=WINDOW)
            done = 0
            starts = {a: b for a, b in WINDOWS}
            ends = {b for _, b in WINDOWS}
            started = time.monotonic()
            try:
                for cell in range(CELLS):
                    async for event in self.session.run(f"Cell {cell}: measure a hundred steps.", config):
                        if event.kind == "request_finished":
                            done += 1
                            if done in starts:
                                tracemalloc.start()
                            elif done in ends:
                                current, peak = tracemalloc.get_traced_memory()
                                self.kept.append(current / 100)
                                self.peak = max(self.peak, peak)
                                tracemalloc.stop()
                        elif isinstance(event, NoticeEvent):
                            self.notices.append(event.text)
                            if event.text.startswith("Context compacted"):
                                self.compaction_requests.append(done)
                        elif isinstance(event, RunFinishedEvent):
                            self.finished.append(event)
            finally:
                if tracemalloc.is_tracing():
                    tracemalloc.stop()
            self.wall = time.monotonic() - started
            self.too_long, self.summary_requests = server.too_long_answers, server.summary_requests
            await model.aclose()
        return self


@pytest.fixture(scope="module")
def long_session() -> LongSession:
    measured = asyncio.run(LongSession().run())
    report("r8_requests", measured.script.requests)
    report("r8_compactions", len(measured.session.context.compactions),
           f"summary requests {measured.summary_requests}")
    report("r8_wall_seconds", round(measured.wall, 1), "tracemalloc on for 200 of the requests")
    report("r8_memory_kept_per_request_bytes", {f"requests {a}-{b}": round(kept)
                                                for (a, b), kept in zip(WINDOWS, measured.kept)})
    report("r8_largest_body_tokens", measured.script.largest, f"window {WINDOW}")
    report("r8_traced_window_peak_mb", round(measured.peak / 2**20, 1))
    return measured


def test_a_thousand_requests_never_meet_the_window(long_session: LongSession) -> None:
    assert [f.reason for f in long_session.finished] == ["end_turn"] * CELLS, long_session.finished
    assert long_session.script.requests == REQUESTS, "every conversation request reached the script"
    assert long_session.too_long == 0, "the server never had to answer 'prompt is too long'"
    assert long_session.script.invalid == [], long_session.script.invalid[:3]
    assert long_session.script.largest <= WINDOW
    messages = long_session.session.messages
    assert check_pairing(normalize_messages_for_api(messages)) == []
    assert sum(1 for m in messages if m["role"] == "assistant") == REQUESTS, "the full original stays in the session"


def test_compactions_happen_where_expected(long_session: LongSession) -> None:
    compactions = long_session.session.context.compactions
    messages = long_session.session.messages
    assert len(compactions) >= REQUESTS * 600 // 4 // WINDOW // 2, "a 6k window over ~150k tokens of results"
    assert long_session.summary_requests == sum(1 for c in compactions if c.summary is not None)
    boundaries = [c.boundary for c in compactions]
    assert boundaries == sorted(boundaries), "each compaction starts where the previous one left off, or later"
    for c in compactions:
        assert c.reason == "auto"
        assert c.tokens_before > 0.8 * WINDOW, "compacted only when the request would pass compact_at"
        assert c.tokens_after < 0.8 * WINDOW, "and afterwards it is back under it"
        if c.summary is not None:
            assert is_cut_point(messages, c.boundary)
            kept = sum(1 for m in messages[c.boundary:c.boundary + 200] if m["role"] == "assistant")
            assert kept >= 4
    gaps = [b - a for a, b in zip(long_session.compaction_requests, long_session.compaction_requests[1:])]
    assert gaps and min(gaps) >= 3, f"the cache prefix restarts once per compaction, not every request: {gaps}"


def test_memory_grows_by_a_constant_per_request(long_session: LongSession) -> None:
    first, second = long_session.kept
    assert second <= 1.5 * first + 2048, f"{first:.0f} then {second:.0f} bytes per request"
    assert second <= PER_REQUEST_LIMIT


# --- "prompt is too long" from the API ------------------------------------------------------


def _turns(calls: int) -> Any:
    state = {"n": 0}

    def turn(body: dict[str, Any]) -> Any:
        state["n"] += 1
        last = blocks(body["messages"][-1])
        if state["n"] > calls and any(b.get("type") == "tool_result" for b in last):
            return "Done."
        return [{"type": "tool_use", "name": "Measure", "input": {"n": state["n"]}}]

    return turn


async def _run(server: FakeAnthropicServer, session: Session, prompt: str, **config: Any) -> list[Any]:
    model = AnthropicModel("claude-sonnet-5-5", api_key="test-key", base_url=server.base_url, max_retries=0)
    run_config = RunConfig(model=model, tool_provider=lambda: [Measure()], can_use_tool=RecordingPolicy(),
                           hooks=empty_hooks(), max_turns=40, **config)
    try:
        return [event async for event in session.run(prompt, run_config)]
    finally:
        await model.aclose()


@pytest.mark.asyncio
async def test_prompt_too_long_is_compacted_and_retried_once() -> None:
    with FakeAnthropicServer(turns=_turns(12)) as server:
        session = Session()
        await _run(server, session, "Measure twelve steps.")
        assert not session.context.compactions
        server.inject(Fault.prompt_too_long(4321, 3000))
        server.set_turns(["Continued."])
        before = len(server.bodies)
        events = await _run(server, session, "And now?")
    finished = events[-1]
    assert finished.reason == "end_turn", finished
    conversation = [b for b in server.bodies[before:] if not is_summary_request(b)]
    assert len(conversation) == 2, "the refused request, then exactly one retry"
    assert server.summary_requests == 1
    assert session.context.meter.learned_window == 3000, "M is the session's window from then on"
    (compaction,) = session.context.compactions
    assert compaction.reason == "prompt too long" and compaction.summary
    retry = conversation[-1]
    assert check_pairing(retry["messages"]) == []
    assert len(json.dumps(retry)) < len(json.dumps(conversation[0])) / 2
    texts = [e.text for e in events if isinstance(e, NoticeEvent)]
    assert any("3,000 maximum" in t and "context window is 3,000 from now on" in t for t in texts), texts
    assert any(t.startswith("Context compacted (prompt too long)") for t in texts)


@pytest.mark.asyncio
async def test_a_second_prompt_too_long_is_one_clear_error() -> None:
    with FakeAnthropicServer(turns=_turns(6)) as server:
        session = Session()
        await _run(server, session, "Measure six steps.")
        # a window smaller than even the system prompt and tools: nothing compaction does can fit it
        server.context_window = 300
        server.set_turns(["never played"])
        before = len(server.bodies)
        events = await _run(server, session, "And now?")
    finished = events[-1]
    assert finished.reason == "api_error"
    assert finished.error is not None and "\n" not in finished.error
    assert "too long for the model's context window even after compaction" in finished.error
    assert "%%agent --new" in finished.error
    conversation = [b for b in server.bodies[before:] if not is_summary_request(b)]
    assert len(conversation) == 2, "one retry, not a loop"
    assert server.too_long_answers >= 2
    assert check_pairing(normalize_messages_for_api(session.messages)) == []
    assert SUMMARY_REQUEST_MARKER not in json.dumps(session.messages), "the summary request is not in the transcript"
