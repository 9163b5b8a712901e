"""Incremental request building through the real path: `Agent` → `AnthropicModel` → the SDK
over HTTP+SSE → `FakeAnthropicServer`, across cells with the transcript edited between them.

Every request the server receives carries exactly the messages a from-scratch normalisation
of the transcript at that moment gives, whatever was done to ``session.messages`` before.
"""

from __future__ import annotations

import json
from typing import Any, AsyncIterator

import pytest
from model_support import make_model

from jupyter_toolagent import Agent
from jupyter_toolagent.core.abort import AbortSignal
from jupyter_toolagent.tools.function_tool import FunctionTool
from jupyter_toolagent.core.pairing import normalize_messages_for_api
from jupyter_toolagent.core.request_body import build_request_body
from jupyter_toolagent.models import text_block, tool_use_block
from jupyter_toolagent.testing import FakeAnthropicServer


def wire(messages: list[dict[str, Any]]) -> str:
    return json.dumps(messages, ensure_ascii=False, sort_keys=True)


class FromScratchWitness:
    """Delegates to the real model; at each request notes the messages sent and those a
    from-scratch normalisation of the session's transcript gives at that moment."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.agent: Agent | None = None
        self.sent: list[tuple[str, str]] = []

    @property
    def model_name(self) -> str:
        return str(self.inner.model_name)

    async def stream(self, body: dict[str, Any], *, abort: AbortSignal) -> AsyncIterator[dict[str, Any]]:
        assert self.agent is not None
        scratch = normalize_messages_for_api(self.agent.session.messages)
        expected = build_request_body(model="m", system="", tools=[], messages=scratch, max_tokens=1)["messages"]
        self.sent.append((wire(body["messages"]), wire(expected)))
        async for event in self.inner.stream(body, abort=abort):
            yield event


def lookup_tool() -> FunctionTool:
    async def lookup(key: str) -> str:
        """Look a key up.

        Args:
            key: The key.
        """
        return f"value of {key}"

    return FunctionTool(lookup, read_only=True)


@pytest.mark.asyncio
async def test_requests_after_edits_of_the_transcript_send_what_a_from_scratch_build_sends(
    server: FakeAnthropicServer,
) -> None:
    def chain(body: dict[str, Any]) -> Any:
        last = body["messages"][-1]["content"]
        if any(b.get("type") == "tool_result" for b in last) and sum(
                1 for m in body["messages"] if m["role"] == "assistant") % 3 == 2:
            return "Done."
        n = len(body["messages"])
        return [text_block(f"Step {n}."), tool_use_block("lookup", {"key": f"k{n}"})]

    server.set_turns(chain)
    witness = FromScratchWitness(make_model(server))
    agent = Agent(witness, tools=[lookup_tool()], allow=["lookup"])
    witness.agent = agent
    messages = agent.session.messages

    record = await agent.run("Look up some keys.")
    assert record.finish_reason == "end_turn", record.error
    first_cell = len(witness.sent)
    assert first_cell >= 3

    # a person edits the transcript between cells, in place and by replacement
    messages[0] = {"role": "user", "content": [{"type": "text", "text": "Look up some keys, please."}]}
    messages[-1]["content"] = [{"type": "text", "text": "All done (edited)."}]
    messages[1]["content"].append({"type": "text", "text": "(a note added in place)"})
    record = await agent.run("Again.")
    assert record.finish_reason == "end_turn", record.error

    del messages[-3:]  # the last exchange is taken back; the transcript ends with tool results
    messages[:] = [dict(m) for m in messages]  # and comes back as new objects, as a resumed session does
    record = await agent.run("Once more.")
    assert record.finish_reason == "end_turn", record.error

    # the prompt of that cell was sent merged into the results before it (a new message in the
    # request, not the transcript's object): replacing its content in place must still be seen
    prompt_at = next(i for i, m in enumerate(messages) if m["content"] == [{"type": "text", "text": "Once more."}])
    assert messages[prompt_at - 1]["role"] == "user"
    messages[prompt_at]["content"] = [{"type": "text", "text": "Once more, edited."}]
    fourth_cell = len(witness.sent)
    record = await agent.run("And again.")
    assert record.finish_reason == "end_turn", record.error
    assert "Once more, edited." in witness.sent[fourth_cell][0] and "Once more.\"" not in witness.sent[fourth_cell][0]

    agent.session.reset()  # %agent reset
    record = await agent.run("From the start.")
    assert record.finish_reason == "end_turn", record.error

    assert len(witness.sent) == len(server.bodies) > first_cell + 6
    for (sent, expected), received in zip(witness.sent, server.bodies):
        assert sent == expected
        assert wire(received["messages"]) == sent  # what went over the wire
    assert json.loads(witness.sent[first_cell][0])[0]["content"][0]["text"] == "Look up some keys, please."
    assert "(a note added in place)" in witness.sent[first_cell][0]
    assert json.loads(witness.sent[-1][0])[0]["content"][0]["text"] == "From the start."
