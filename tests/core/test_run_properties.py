"""Properties of whole runs over generated conversations.

Each example is one `Session.run` against a scripted model whose assistant turns mix text and
tool_use blocks: known and unknown tools, valid and invalid inputs, tools that raise beside
others (a failure cancels nothing), that block on abort, calls the policy denies, and a Stop at
a random moment. After every run:

* the transcript passes `check_pairing` once normalised, and every tool_use has exactly one
  tool_result;
* no tool ran without an allow decision for that very call, and none ran twice;
* every request the model received was valid.

Duplicate tool_use ids are left out: the loop does not keep the transcript valid with them
(see the duplicate-id tests in test_query_loop).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jupyter_toolagent.core.abort import AbortSignal
from jupyter_toolagent.core.pairing import check_pairing, normalize_messages_for_api
from jupyter_toolagent.core.permission_types import PermissionDecision
from jupyter_toolagent.core.session import Session
from jupyter_toolagent.core.tool import Progress, Tool, ToolUseContext
from jupyter_toolagent.models import ScriptedModel, ScriptedTurn, text_block

from runtime_support import StopInFlight, probe_tools, run_config, tool_results, tool_uses

TOOL_NAMES = ["Look", "Keep", "Change", "Shell", "Nope"]


@st.composite
def tool_use(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(st.sampled_from(TOOL_NAMES))
    kind = draw(st.sampled_from(["valid", "valid", "valid", "wrong_type", "unexpected", "missing"]))
    input: dict[str, Any] = {
        "delay": draw(st.sampled_from([0.0, 0.0, 0.005, 0.02])),
        "fail": draw(st.booleans()),
    }
    if kind == "wrong_type":
        input["delay"] = "slow"
    elif kind == "unexpected":
        input["colour"] = "red"
    deny = draw(st.integers(0, 4)) == 0
    return {"type": "tool_use", "name": name, "input": input, "_missing_tag": kind == "missing", "_deny": deny}


turn_blocks = st.lists(st.one_of(tool_use(), st.builds(text_block, st.sampled_from(["ok", "next"]))),
                       min_size=1, max_size=6)

scenario = st.fixed_dictionaries({
    "turns": st.lists(turn_blocks, min_size=1, max_size=3),
    # Stop either at a moment in time, or while the n-th block end of the run (a
    # content_block_stop or a message_stop) is on its way to the loop.
    "abort": st.one_of(st.none(), st.tuples(st.just("after"), st.sampled_from([0.0, 0.003, 0.01, 0.03])),
                       st.tuples(st.just("at_event"), st.integers(0, 8))),
})


class Scenario:
    """Makes the generated turns concrete: unique ids, tags equal to ids, deny decisions."""

    def __init__(self, spec: dict[str, Any], serial: int) -> None:
        self.denied: set[str] = set()
        self.turns: list[Any] = []
        for t, blocks in enumerate(spec["turns"]):
            content = []
            for k, block in enumerate(blocks):
                if block["type"] != "tool_use":
                    content.append(block)
                    continue
                tool_use_id = f"toolu_{serial}_{t}_{k}"
                input = dict(block["input"])
                if not block["_missing_tag"]:
                    input["tag"] = tool_use_id
                if block["_deny"]:
                    self.denied.add(tool_use_id)
                content.append({"type": "tool_use", "id": tool_use_id, "name": block["name"], "input": input})
            self.turns.append(ScriptedTurn(content))
        self.abort = spec["abort"]


class RecordingPolicy:
    def __init__(self, denied: set[str]) -> None:
        self.denied = denied
        self.allowed: Counter[str] = Counter()

    async def __call__(self, call, ctx, *, hook_decision):  # noqa: ANN001
        tool_use_id = call.tool_use_id
        if tool_use_id in self.denied:
            return PermissionDecision.deny(f"denied {tool_use_id} by the test policy", "policy")
        self.allowed[tool_use_id] += 1
        return PermissionDecision.allow("policy")


async def play(spec: dict[str, Any], serial: int, *, streaming: bool) -> None:
    scenario = Scenario(spec, serial)
    effects: list[str] = []
    policy = RecordingPolicy(scenario.denied)
    model = ScriptedModel(scenario.turns, when_exhausted="done")
    session, abort = Session(), AbortSignal()
    kind, when = scenario.abort or (None, None)
    if kind == "at_event":  # a Stop landing while the n-th block end is on its way to the run
        model_seen: Any = StopInFlight(model, abort, kinds=("content_block_stop", "message_stop"), nth=when)
    else:
        model_seen = model
    config = run_config(model_seen, *probe_tools(effects), streaming=streaming, can_use_tool=policy, max_turns=5)

    async def consume() -> None:
        async for _ in session.run("go", config, abort=abort):
            pass

    async def press_stop() -> None:
        await asyncio.sleep(when)
        abort.abort("Stop button")

    task = asyncio.ensure_future(consume())
    stopper = asyncio.ensure_future(press_stop()) if kind == "after" else None
    try:
        await asyncio.wait_for(task, 2)
    finally:
        if stopper is not None:
            stopper.cancel()
            await asyncio.gather(stopper, return_exceptions=True)

    messages = session.messages
    assert check_pairing(normalize_messages_for_api(messages)) == []
    uses = Counter(b["id"] for b in tool_uses(messages))
    assert all(n == 1 for n in uses.values()), uses
    assert set(tool_results(messages)) == set(uses)  # exactly one result each (asserted inside)
    for tag in effects:
        assert policy.allowed[tag] == 1, f"{tag} ran without an allow decision"
    assert len(effects) == len(set(effects)), "a call ran twice"
    assert not set(effects) & scenario.denied
    for body in model.requests:
        assert check_pairing(body["messages"]) == []
    assert session.runs[-1].finish_reason is not None


SETTINGS = dict(derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _property(streaming: bool, spec_strategy: Any, max_examples: int) -> Any:
    """The property as a hypothesis test, plus its counters. A session that does not finish
    within its timeout is counted as hung and ends the search (the test then fails on the
    count), so a hang costs one timeout rather than one per shrinking step."""
    counter = {"sessions": 0, "hung": 0}

    @settings(max_examples=max_examples, **SETTINGS)
    @given(spec=spec_strategy)
    def check(spec: dict[str, Any]) -> None:
        if counter["hung"]:
            return
        counter["sessions"] += 1
        try:
            asyncio.run(play(spec, counter["sessions"], streaming=streaming))
        except TimeoutError:
            counter["hung"] += 1

    return check, counter


def _report(counter: dict[str, int]) -> None:
    print(f"sessions generated: {counter['sessions']}, hung: {counter['hung']}")


def test_runs_after_the_stream_keep_every_invariant_with_aborts() -> None:
    check, counter = _property(False, scenario, 200)
    check()
    _report(counter)
    assert counter["hung"] == 0
    assert counter["sessions"] >= 150


def test_streaming_runs_keep_every_invariant_without_aborts() -> None:
    no_abort = scenario.map(lambda s: {**s, "abort": None})
    check, counter = _property(True, no_abort, 150)
    check()
    _report(counter)
    assert counter["hung"] == 0
    assert counter["sessions"] >= 100


def test_streaming_runs_keep_every_invariant_with_aborts() -> None:
    check, counter = _property(True, scenario, 200)
    check()
    _report(counter)
    assert counter["hung"] == 0
    assert counter["sessions"] >= 150
