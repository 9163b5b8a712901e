"""R1 — pairing fuzz through the real SDK path.

Every example is one conversation: `Session.run` with `AnthropicModel` (the official SDK,
streaming, no retries) against one `FakeAnthropicServer` whose turn function plays the
generated plan. Plans mix text and tool_use blocks: known and unknown tools, valid, invalid
and truncated inputs (raw-event turns that stop with ``max_tokens`` inside a tool's JSON, with
and without its ``content_block_stop``; a connection cut inside a tool's JSON; a stream
without ``message_stop``; an error event mid-stream; a 429), repeated tool_use ids, tools that
raise (cancelling nothing), sleep, finish on abort, calls the policy denies, and a Stop or
a kernel-interrupt-style cancellation at a random point, mid-stream included.

After each conversation:

* every request the server received was valid (no 400) — also the request of a follow-up run
  in the same session, which must end normally;
* every tool_use in the final transcript has exactly one tool_result;
* no tool ran without an allow decision for that call, none ran twice, none the policy denied;
* no tool ran unless the client had received its block complete (its ``content_block_stop``
  and JSON that parses strictly, judged from the raw events by this test, not by the product),
  and no truncated block ran.

One server, one event loop and one SDK client serve every example; the wall time is measured.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reliability_support import (
    RecordingPolicy,
    assert_bodies_valid,
    assert_every_tool_use_paired_once,
    empty_hooks,
    first_user_text,
)
from runtime_support import probe_tools
from suite_counts import report

from jupyter_toolagent.core.abort import AbortSignal
from jupyter_toolagent.core.events import RunFinishedEvent
from jupyter_toolagent.core.session import RunConfig, Session
from jupyter_toolagent.models.anthropic import AnthropicModel
from jupyter_toolagent.models.stream_events import message_stream_events, new_message_id
from jupyter_toolagent.testing import FakeAnthropicServer, Fault

EXAMPLES = 2000
WALL_BUDGET_SECONDS = 240.0
TOOL_NAMES = ["Look", "Keep", "Change", "Shell", "Nope"]
FINISH_REASONS = {"end_turn", "max_turns", "max_tokens", "truncated", "aborted", "api_error"}


# --- the generated plan -----------------------------------------------------------------------------

tool_use_spec = st.fixed_dictionaries({
    "type": st.just("tool_use"),
    "name": st.sampled_from(TOOL_NAMES),
    "input": st.sampled_from(["valid"] * 8 + ["wrong_type", "unexpected", "missing_tag"]),
    "delay": st.sampled_from([0.0, 0.0, 0.0, 0.002, 0.01]),
    "fail": st.sampled_from([False] * 4 + [True]),
    "deny": st.sampled_from([False] * 5 + [True]),
    "dup": st.sampled_from([False] * 7 + [True]),
})
text_spec = st.fixed_dictionaries({"type": st.just("text"), "text": st.sampled_from(["ok", "Looking.", "next " * 9])})
block_spec = st.one_of(tool_use_spec, tool_use_spec, text_spec)

turn_spec = st.one_of(
    st.fixed_dictionaries({"kind": st.just("blocks"), "blocks": st.lists(block_spec, min_size=1, max_size=5)}),
    st.fixed_dictionaries({
        "kind": st.just("max_tokens"),
        "blocks": st.lists(block_spec, min_size=0, max_size=3),
        # a tool_use cut inside its JSON (an error result, then the run goes on: SPEC §7.1), or
        # text cut short (with no complete tool_use the run ends with max_tokens)
        "cut": st.one_of(tool_use_spec, tool_use_spec, text_spec),
        "keep_deltas": st.integers(0, 3),
        "block_stop": st.booleans(),
    }),
)
fault_spec = st.sampled_from([None] * 12 + ["cut", "missing_stop", "error_event", "rate_limit"])
abort_spec = st.one_of(
    st.none(), st.none(), st.none(), st.none(), st.none(),
    st.tuples(st.just("event"), st.integers(0, 40)),
    st.tuples(st.just("raw"), st.sampled_from(["content_block_delta", "content_block_stop", "message_delta"]),
              st.integers(0, 6)),
    st.tuples(st.just("time"), st.sampled_from([0.0, 0.002, 0.01, 0.03])),
    st.tuples(st.just("tool_started"), st.integers(0, 2)),
    st.tuples(st.just("cancel"), st.integers(0, 40)),
)
plan_spec = st.fixed_dictionaries({
    "turns": st.lists(turn_spec, min_size=1, max_size=3),
    "faults": st.lists(fault_spec, min_size=3, max_size=3),
    "error_after": st.integers(1, 12),
    "abort": abort_spec,
    "streaming": st.booleans(),
})


@dataclass
class Plan:
    """One generated conversation made concrete: ids, tags, events, and what happened."""

    serial: int
    spec: dict[str, Any]
    tag: str = ""
    turns: list[Any] = field(default_factory=list)
    denied: set[str] = field(default_factory=set)
    truncated: set[str] = field(default_factory=set)
    served: int = 0
    active: bool = True
    follow_up: bool = False
    received: list[list[dict[str, Any]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.tag = f"[r1:{self.serial}]"
        used: list[str] = []
        for t, turn in enumerate(self.spec["turns"]):
            content = [self._block(b, t, k, used) for k, b in enumerate(turn["blocks"])]
            if turn["kind"] == "blocks":
                self.turns.append(content)
            else:
                cut = self._block(turn["cut"], t, len(content), used, truncated=True)
                self.turns.append(self._max_tokens_events(content, cut, turn["keep_deltas"], turn["block_stop"]))

    def _block(self, spec: dict[str, Any], t: int, k: int, used: list[str], truncated: bool = False) -> dict[str, Any]:
        if spec["type"] == "text":
            return {"type": "text", "text": spec["text"]}
        tag = f"{'cut' if truncated else 'call'}-{self.serial}-{t}-{k}"
        block_id = used[len(used) // 2] if spec["dup"] and used and not truncated else f"toolu_{self.serial}_{t}_{k}"
        used.append(block_id)
        kind = "valid" if truncated else spec["input"]
        data: dict[str, Any] = {"tag": tag, "delay": spec["delay"], "fail": spec["fail"]}
        if kind == "wrong_type":
            data["delay"] = "slow"
        elif kind == "unexpected":
            data["colour"] = "red"
        elif kind == "missing_tag":
            del data["tag"]
        if truncated:
            self.truncated.add(tag)
        elif spec["deny"]:
            self.denied.add(tag)
        return {"type": "tool_use", "id": block_id, "name": spec["name"], "input": data}

    @staticmethod
    def _max_tokens_events(content: list[dict[str, Any]], cut: dict[str, Any], keep: int, block_stop: bool) -> list[dict[str, Any]]:
        """Raw events of a message that hit max_tokens inside ``cut`` (a tool's JSON, or text): the block gets its
        empty first delta and ``keep`` more chunks, never the last (so its JSON never parses),
        and its ``content_block_stop`` only if ``block_stop``."""
        message = {"id": new_message_id(), "model": "r1", "content": [*content, cut], "stop_reason": "max_tokens",
                   "usage": {"input_tokens": 10, "output_tokens": 10}}
        events = message_stream_events(message, pings=False)
        index = len(content)
        deltas = [e for e in events if e["type"] == "content_block_delta" and e["index"] == index]
        kept = {id(e) for e in deltas[: 1 + min(keep, len(deltas) - 2)]}
        out = []
        for event in events:
            if event.get("index") == index and event["type"] == "content_block_delta" and id(event) not in kept:
                continue
            if event.get("index") == index and event["type"] == "content_block_stop" and not block_stop:
                continue
            out.append(event)
        return out

    def fault(self, request: int) -> Fault | None:
        kind = self.spec["faults"][request] if request < len(self.spec["faults"]) else None
        if kind == "cut":
            return Fault.cut_in_tool_use(after_json_deltas=2)
        if kind == "missing_stop":
            return Fault.missing_message_stop()
        if kind == "error_event":
            return Fault.error_event("overloaded_error", after_events=self.spec["error_after"])
        if kind == "rate_limit":
            return Fault.rate_limit(retry_after_ms=10)
        return None


# --- the model as the run sees it, observed ----------------------------------------------------------

class Observed:
    """Wraps the SDK model: keeps every raw event the client received (the ground truth of
    what arrived) and, for a ``raw`` abort, presses Stop as the n-th event of a kind passes."""

    def __init__(self, inner: AnthropicModel) -> None:
        self.inner = inner
        self.plan: Plan | None = None
        self.abort: AbortSignal | None = None
        self.trigger: tuple[str, int] | None = None
        self.seen = 0

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    async def stream(self, body: dict[str, Any], *, abort: AbortSignal):  # noqa: ANN201
        assert self.plan is not None
        received: list[dict[str, Any]] = []
        self.plan.received.append(received)
        async for event in self.inner.stream(body, abort=abort):
            received.append(event)
            if self.trigger is not None and event.get("type") == self.trigger[0]:
                if self.seen == self.trigger[1] and self.abort is not None:
                    asyncio.get_running_loop().call_soon(self.abort.abort, "Stop (fuzz)")
                self.seen += 1
            yield event


def complete_tags(received: list[list[dict[str, Any]]]) -> set[str]:
    """Tags of the tool_use blocks the client received complete, decided independently of the
    product: a content_block_stop arrived and the raw partial_json parses as one object."""
    tags: set[str] = set()
    for events in received:
        parts: dict[int, list[str]] = {}
        stopped: set[int] = set()
        for event in events:
            kind = event.get("type")
            if kind == "content_block_start" and event["content_block"].get("type") == "tool_use":
                parts[event["index"]] = []
            elif kind == "content_block_delta" and event["index"] in parts:
                parts[event["index"]].append(event["delta"].get("partial_json", ""))
            elif kind == "content_block_stop" and event["index"] in parts:
                stopped.add(event["index"])
        for index, chunks in parts.items():
            try:
                value = json.loads("".join(chunks)) if index in stopped else None
            except ValueError:
                value = None
            if isinstance(value, dict) and isinstance(value.get("tag"), str):
                tags.add(value["tag"])
    return tags


# --- the harness ---------------------------------------------------------------------------------------

class Harness:
    """One server, one loop, one SDK client for all examples."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.plans: dict[str, Plan] = {}
        self.server = FakeAnthropicServer(turns=self.turn)
        self.server.start()
        self.loop = asyncio.new_event_loop()
        self.model = Observed(AnthropicModel("claude-fuzz", api_key="test-key", base_url=self.server.base_url,
                                             max_retries=0))
        self.outcomes: Counter[str] = Counter()
        self.faults_served: Counter[str] = Counter()
        self.requests = 0
        self.tools_run = 0
        self.sessions = 0

    def close(self) -> None:
        try:
            self.loop.run_until_complete(self.model.inner.aclose())
        finally:
            self.loop.close()
            self.server.stop()

    def turn(self, body: dict[str, Any]) -> Any:
        """The server's turn function (server thread): the next turn of the body's plan, and the
        fault for the plan's next request queued now."""
        plan = self.plans.get(next((t for t in _tags(first_user_text(body))), ""))
        if plan is None:
            return "No plan for this conversation."
        with self.lock:
            number = plan.served
            plan.served += 1
            if plan.active and not plan.follow_up:
                upcoming = plan.fault(number + 1)
                if upcoming is not None:
                    self.server.inject(upcoming)
        if plan.follow_up or number >= len(plan.turns):
            return "done"
        return plan.turns[number]

    def play(self, spec: dict[str, Any]) -> None:
        self.sessions += 1
        plan = Plan(self.sessions, spec)
        self.plans[plan.tag] = plan
        try:
            self.loop.run_until_complete(asyncio.wait_for(self._play(plan), 20))
        finally:
            with self.lock:
                plan.active = False
            self.plans.pop(plan.tag, None)

    async def _play(self, plan: Plan) -> None:
        effects: list[str] = []
        policy = RecordingPolicy(plan.denied)
        session, abort = Session(), AbortSignal()
        self.model.plan, self.model.abort, self.model.seen = plan, abort, 0
        stop = plan.spec["abort"] or (None, None)
        kind, when = stop[0], stop[1]
        self.model.trigger = (stop[1], stop[2]) if kind == "raw" else None
        config = RunConfig(model=self.model, tool_provider=lambda: probe_tools(effects), can_use_tool=policy,
                           hooks=empty_hooks(), max_turns=5, streaming_tools=plan.spec["streaming"])
        self.server.clear_faults()
        self.server.requests.clear()
        first = plan.fault(0)
        if first is not None:
            self.server.inject(first)
        reason = await self._run(session, config, abort, kind, when, plan.tag)
        self.outcomes[reason] += 1

        # a follow-up run in the same session must be accepted and end normally
        with self.lock:
            plan.follow_up = True
        self.server.clear_faults()
        self.model.trigger = None
        follow = [e async for e in session.run("continue " + plan.tag, config)]
        assert isinstance(follow[-1], RunFinishedEvent) and follow[-1].reason == "end_turn", follow[-1]

        self._check(plan, session, policy, effects)

    async def _run(self, session: Session, config: RunConfig, abort: AbortSignal, kind: str | None, when: Any,
                   tag: str) -> str:
        events: list[Any] = []
        started_tools = 0

        async def consume() -> None:
            nonlocal started_tools
            async for event in session.run("go " + tag, config, abort=abort):
                events.append(event)
                if kind == "event" and len(events) == when + 1:
                    abort.abort("Stop (fuzz)")
                if kind == "tool_started" and event.kind == "tool_started":
                    if started_tools == when:
                        abort.abort("Stop while a tool runs (fuzz)")
                    started_tools += 1
                if kind == "cancel" and len(events) == when + 1:
                    asyncio.current_task().cancel()  # type: ignore[union-attr]

        task = asyncio.ensure_future(consume())
        timer = None
        if kind == "time":
            timer = asyncio.get_running_loop().call_later(when, abort.abort, "Stop after a delay (fuzz)")
        try:
            await task
        except asyncio.CancelledError:
            if kind != "cancel":
                raise
        finally:
            if timer is not None:
                timer.cancel()
        record = session.runs[-1]
        reason = record.finish_reason or "none"
        assert reason in FINISH_REASONS, (reason, record.error)
        if events and not task.cancelled():
            finished = [e for e in events if isinstance(e, RunFinishedEvent)]
            assert len(finished) == 1 and events[-1] is finished[0], "RunFinished must be the one last event"
        if reason == "api_error":
            assert record.error and "API error" in record.error and "HTTP 400" not in record.error, record.error
        return reason

    def _check(self, plan: Plan, session: Session, policy: RecordingPolicy, effects: list[str]) -> None:
        bodies = [r.body for r in list(self.server.requests)
                  if isinstance(r.body, dict) and plan.tag in first_user_text(r.body)]
        self.requests += assert_bodies_valid(bodies)
        assert_every_tool_use_paired_once(session.messages)
        assert len(effects) == len(set(effects)), f"a call ran twice: {effects}"
        for tag in effects:
            assert policy.allowed[tag] == 1, f"{tag} ran without exactly one allow decision"
        assert not set(effects) & plan.denied, "a denied call ran"
        assert not set(effects) & plan.truncated, "a truncated block ran"
        arrived = complete_tags(plan.received)
        assert set(effects) <= arrived, f"ran without a complete block: {set(effects) - arrived}"
        self.tools_run += len(effects)


def _tags(text: str) -> list[str]:
    start = text.find("[r1:")
    return [text[start: text.index("]", start) + 1]] if start >= 0 else []


def test_pairing_fuzz_through_the_sdk() -> None:
    harness = Harness()
    started = time.monotonic()

    @settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example])
    @given(spec=plan_spec)
    def fuzz(spec: dict[str, Any]) -> None:
        harness.play(spec)

    try:
        fuzz()
    finally:
        wall = time.monotonic() - started
        harness.close()
        report("r1_sessions_fuzzed", harness.sessions, "generated conversations through the SDK")
        report("r1_requests_checked", harness.requests)
        report("r1_tools_run", harness.tools_run)
        report("r1_finish_reasons", dict(sorted(harness.outcomes.items())))
        report("r1_wall_seconds", round(wall, 1), f"{1000 * wall / max(1, harness.sessions):.1f} ms per session")
    assert harness.sessions >= EXAMPLES
    assert wall < WALL_BUDGET_SECONDS * 1.5, f"R1 took {wall:.0f} s"
    for reason in ("end_turn", "aborted", "api_error", "max_tokens"):
        assert harness.outcomes[reason] > 0, f"no conversation ended with {reason}: {harness.outcomes}"
