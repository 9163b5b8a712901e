"""Request bodies share the transcript's blocks instead of deep-copying them, so nothing may
change either after a request is built. These tests hold the guarantee the copies used to give:

* a body, once built, stays as it was sent while the run goes on (results committed, the next
  request's breakpoint placed, a repair written back, a hook changing its copy of an input);
* what `RunRecord.requests` shows does not change when the transcript is edited afterwards;
* building and sending a body (through the SDK too) leaves the transcript as it was: no
  breakpoint, alias or dropped key leaks back;
* each request still starts with the previous request's cached prefix (SPEC §7.1).
"""

from __future__ import annotations

import copy
import json
from typing import Any, AsyncIterator

import pytest

from jupyter_toolagent.core.abort import AbortSignal
from jupyter_toolagent.core.session import Session
from jupyter_toolagent.hooks import HookRegistry, RegistryHookRunner
from jupyter_toolagent.models.anthropic import AnthropicModel
from jupyter_toolagent.core.request_body import cache_prefix_bytes
from jupyter_toolagent.models import ScriptedModel, text_block, tool_use_block
from jupyter_toolagent.testing import FakeAnthropicServer

from runtime_support import Probe, assert_valid_transcript, finished, run, run_config


class Recording:
    """Wraps a model: keeps every body object it is given and a deep copy taken at that moment."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.sent: list[tuple[dict[str, Any], dict[str, Any]]] = []

    @property
    def model_name(self) -> str:
        return self.model.model_name

    async def stream(self, body: dict[str, Any], *, abort: AbortSignal) -> AsyncIterator[dict[str, Any]]:
        self.sent.append((body, copy.deepcopy(body)))
        async for event in self.model.stream(body, abort=abort):
            yield event

    def snapshots(self) -> list[dict[str, Any]]:
        return [snapshot for _, snapshot in self.sent]

    def assert_unchanged(self) -> None:
        for n, (body, snapshot) in enumerate(self.sent):
            assert body == snapshot, f"request {n} changed after it was sent"


def three_steps(body: dict[str, Any]) -> Any:
    done = sum(1 for m in body["messages"] if m["role"] == "assistant"
               for b in m["content"] if b.get("type") == "text" and b["text"].startswith("Step"))
    if done >= 4:
        return "All done."
    return [text_block(f"Step {done}."), tool_use_block("Read", {"tag": f"step-{done}"})]


def earlier_conversation(*, broken: bool) -> list[dict[str, Any]]:
    """A transcript from an earlier cell, with what normalisation removes or rewrites: private
    keys, a progress block, a UI-only note, a tool called by its alias, and — when ``broken`` —
    a tool_use whose result is missing (repaired and written back before the first request)."""
    results = [] if broken else [{"type": "tool_result", "tool_use_id": "toolu_old", "content": "old rows",
                                  "_duration": 0.2}]
    return [
        {"role": "user", "content": [{"type": "text", "text": "first question", "_shown_at": 1.0}], "_cell": 1},
        {"role": "assistant", "content": [
            {"type": "text", "text": "looking"},
            {"type": "progress", "message": "50%"},
            {"type": "tool_use", "id": "toolu_old", "name": "Peek", "input": {"tag": "old", "_kept": {"x": [1]}}}]},
        {"role": "user", "content": [*results, {"type": "text", "text": "and then?"}]},
        {"role": "user", "content": [{"type": "text", "text": "(approved by you)"}], "ui_only": True},
    ]


def has_key(value: Any, key: str) -> bool:
    if isinstance(value, dict):
        return key in value or any(has_key(v, key) for v in value.values())
    if isinstance(value, list):
        return any(has_key(v, key) for v in value)
    return False


def hook_that_edits_its_input() -> RegistryHookRunner:
    registry = HookRegistry()

    def scribble(event: Any) -> None:
        event.tool_input["tag"] = "scribbled"  # its own copy: changes nothing

    registry.add("PreToolUse", scribble)
    return RegistryHookRunner(registry)


@pytest.mark.asyncio
@pytest.mark.parametrize("broken", [False, True], ids=["clean", "repaired"])
async def test_a_sent_body_stays_as_sent_and_the_transcript_keeps_its_own_form(broken: bool) -> None:
    read = Probe("Read")
    read.aliases = ("Peek",)
    model = Recording(ScriptedModel(three_steps))
    session = Session()
    session.messages.extend(earlier_conversation(broken=broken))
    seeded = copy.deepcopy(session.messages)
    events = await run(session, "take three steps", run_config(model, read, hooks=hook_that_edits_its_input()))
    assert finished(events).reason == "end_turn"
    assert read.calls == ["step-0", "step-1", "step-2", "step-3"]
    assert len(model.sent) == 5

    model.assert_unchanged()  # nothing of the run touched a body after it was built
    record = session.runs[-1]
    assert record.requests == model.snapshots()
    first = model.snapshots()[0]["messages"]
    assert first[1]["content"][1]["name"] == "Read" and not has_key(first, "_cell") and not has_key(first, "_duration")
    assert first[1]["content"][1]["input"] == {"tag": "old", "_kept": {"x": [1]}}  # nested data kept as is

    # the transcript kept its own form: no breakpoint, the alias and private keys as stored
    assert not has_key(session.messages, "cache_control")
    if broken:  # the repair was written back (normalised); the run went on from it
        assert session.messages[1]["content"][-1]["name"] == "Read"
    else:
        assert session.messages[:4] == seeded
    assert_valid_transcript(session.messages)
    assert [u["input"]["tag"] for m in session.messages if m["role"] == "assistant"
            for u in m["content"] if u.get("type") == "tool_use"][-4:] == [f"step-{n}" for n in range(4)]


@pytest.mark.asyncio
async def test_the_recorded_requests_do_not_follow_later_edits_of_the_transcript() -> None:
    read = Probe("Read")
    model = Recording(ScriptedModel(three_steps))
    session = Session()
    await run(session, "take three steps", run_config(model, read))
    sent = model.snapshots()
    assert session.runs[-1].requests == sent

    for message in session.messages:  # a person edits the conversation in place
        for block in message["content"]:
            if block.get("type") == "text":
                block["text"] = "edited"
            elif block.get("type") == "tool_use":
                block["input"]["tag"] = "edited"
        message["content"].append({"type": "text", "text": "appended"})
    session.messages.append({"role": "user", "content": "one more"})
    assert session.runs[-1].requests == sent
    assert as_json(session.runs[-1].requests) == as_json(sent)


def as_json(bodies: Any) -> list[str]:
    return [json.dumps(b, ensure_ascii=False) for b in bodies]


@pytest.mark.asyncio
async def test_a_dry_run_records_the_body_it_showed() -> None:
    session = Session()
    session.messages.extend(earlier_conversation(broken=False))
    before = copy.deepcopy(session.messages)
    model = Recording(ScriptedModel(["never asked"]))
    events = await run(session, "what would be sent?", run_config(model, dry_run=True))
    assert finished(events).reason == "dry_run" and model.sent == []
    (body,) = session.runs[-1].requests
    assert body["messages"][-1]["content"][-1] == {  # merged with the earlier user message
        "type": "text", "text": "what would be sent?", "cache_control": {"type": "ephemeral"}}
    assert session.messages == before  # the prompt was taken back; nothing else changed


@pytest.mark.asyncio
async def test_sending_through_the_sdk_changes_neither_the_body_nor_the_transcript() -> None:
    read = Probe("Read")
    with FakeAnthropicServer(turns=three_steps) as server:
        anthropic = AnthropicModel("claude-test", api_key="test-key", base_url=server.base_url, max_retries=0)
        model = Recording(anthropic)
        session = Session()
        events = await run(session, "take three steps", run_config(model, read))
        received = server.bodies
        await anthropic.aclose()
    assert finished(events).reason == "end_turn" and len(model.sent) == 5
    model.assert_unchanged()
    assert [b["messages"] for b in received] == [s["messages"] for s in model.snapshots()]
    assert session.runs[-1].requests == model.snapshots()
    assert not has_key(session.messages, "cache_control")


@pytest.mark.asyncio
async def test_each_request_reuses_the_previous_requests_cached_prefix() -> None:
    read = Probe("Read")
    model = Recording(ScriptedModel(three_steps))
    session = Session()
    session.messages.extend(earlier_conversation(broken=False))
    await run(session, "take three steps", run_config(model, read))
    for bodies in (model.snapshots(), list(session.runs[-1].requests)):
        prefixes = [cache_prefix_bytes(b) for b in bodies]
        assert len(prefixes) == 5
        for prev, nxt in zip(prefixes, prefixes[1:]):
            assert nxt.startswith(prev) and len(nxt) > len(prev)
