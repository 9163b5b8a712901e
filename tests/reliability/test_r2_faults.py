"""R2 — API faults through `Session.run` with the real SDK (`AnthropicModel`) and the fake server.

Each scenario injects a fault (429 with a retry delay, 529 bursts, 5xx, an error event in the
middle of the stream, the connection cut inside a tool's JSON, a stall past the client's
timeout, a stream without ``message_stop`` …) into a conversation whose first answer asks for
two tool calls. The run must either retry and succeed or end with one clear error: reason
``api_error`` and an error text that names the HTTP status (for HTTP errors), the API's error
type and the request id the server gave that response — or, for a stream that breaks after the
response began (error event, connection cut, stall past the timeout), continue by itself with a
visible notice naming the failure (SPEC §7.1). In every case no tool runs twice, the
calls that ran keep their real results in the transcript, and a second run in the same session
is accepted by the server (no 400) and ends normally.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import pytest
from reliability_support import (
    RecordingPolicy,
    assert_bodies_valid,
    assert_every_tool_use_paired_once,
    blocks,
    empty_hooks,
)
from runtime_support import probe_tools
from suite_counts import report

from jupyter_toolagent.core.events import NoticeEvent, RunFinishedEvent
from jupyter_toolagent.core.session import RunConfig, Session
from jupyter_toolagent.models.anthropic import AnthropicModel
from jupyter_toolagent.models.stream_events import message_stream_events
from jupyter_toolagent.testing import FakeAnthropicServer, Fault

SURVIVED: list[str] = []


class Conversation:
    """The model's side: a new prompt gets "Working." + two tool calls (a safe Look, an unsafe
    Change) with tags unique to this answer; tool results get "Finished."."""

    def __init__(self) -> None:
        self.answers = 0
        self.inject_after_first: tuple[Fault, int] | None = None
        self.server: FakeAnthropicServer | None = None

    def content(self, n: int) -> list[dict[str, Any]]:
        return [
            {"type": "text", "text": "Working on it now."},
            {"type": "tool_use", "id": f"toolu_look_{n}", "name": "Look", "input": {"tag": f"look-{n}"}},
            {"type": "tool_use", "id": f"toolu_change_{n}", "name": "Change", "input": {"tag": f"change-{n}"}},
        ]

    def __call__(self, body: dict[str, Any]) -> Any:
        n = self.answers
        self.answers += 1
        if n == 0 and self.inject_after_first is not None and self.server is not None:
            fault, times = self.inject_after_first
            self.server.inject(fault, times=times)
        last = blocks(body["messages"][-1])
        if any(b.get("type") == "tool_result" for b in last):
            return "Finished."
        return self.content(n)


def events_before_second_tool_input() -> int:
    """How many events the server sends before the second tool_use's first JSON chunk: an error
    event placed there comes after the first tool_use block is complete."""
    message = {"id": "msg_x", "model": "m", "content": Conversation().content(0), "stop_reason": "tool_use",
               "usage": {"input_tokens": 1, "output_tokens": 1}}
    events = message_stream_events(message)  # the server's defaults: pings, 24/16 chunks
    return next(i for i, e in enumerate(events)
                if e["type"] == "content_block_delta" and e["index"] == 2 and e["delta"].get("partial_json"))


@dataclass
class Case:
    name: str
    fault: Fault
    times: int = 1
    expect: str = "api_error"
    """``retried`` (the run succeeds after the SDK retried), ``api_error``, ``ok`` (no error and
    no retry), ``continued`` (the stream broke; the run went on by itself) or ``truncated``."""
    status: int | None = None
    error_type: str | None = None
    words: tuple[str, ...] = ()
    max_retries: int = 2
    timeout: float | None = None
    on_second_request: bool = False
    ran_before_error: tuple[str, ...] = ()
    min_gap: float = 0.0
    """Seconds the SDK must have waited before its retry (the retry-after honoured)."""

    def __str__(self) -> str:
        return self.name


CASES = [
    Case("429 retry-after-ms, retried", Fault.rate_limit(retry_after_ms=60), expect="retried", min_gap=0.05),
    Case("429 retry-after seconds, retried", Fault.rate_limit(retry_after=1), expect="retried", min_gap=0.9),
    Case("429 beyond the retries", Fault.rate_limit(retry_after_ms=10), times=3, status=429,
         error_type="rate_limit_error", words=("rate limited", "retries")),
    Case("429 with retries off", Fault.rate_limit(retry_after_ms=10), status=429, error_type="rate_limit_error",
         max_retries=0),
    Case("529 burst of 2, retried", Fault.overloaded(retry_after_ms=10), times=2, expect="retried"),
    Case("529 burst beyond the retries", Fault.overloaded(retry_after_ms=10), times=3, status=529,
         error_type="overloaded_error", words=("overloaded",)),
    Case("500 once, retried", Fault.server_error(500, retry_after_ms=10), expect="retried"),
    Case("500 beyond the retries", Fault.server_error(500, retry_after_ms=10), times=3, status=500,
         error_type="api_error", words=("server error",)),
    Case("503 marked not retryable", Fault.http_error(503, "api_error", "Service unavailable", should_retry=False),
         status=503, error_type="api_error"),
    Case("401 bad key", Fault.http_error(401, "authentication_error", "invalid x-api-key"), status=401,
         error_type="authentication_error", words=("ANTHROPIC_API_KEY",)),
    Case("413 too large", Fault.http_error(413, "request_too_large", "Request exceeds the maximum size"),
         status=413, error_type="request_too_large"),
    Case("529 on the request after the tools ran", Fault.overloaded(retry_after_ms=10), times=3, status=529,
         error_type="overloaded_error", on_second_request=True, ran_before_error=("look-0", "change-0")),
    Case("error event after the first tool block", Fault.error_event("overloaded_error",
         after_events=events_before_second_tool_input()), expect="continued", error_type="overloaded_error",
         words=("incomplete",), ran_before_error=("look-0",)),
    Case("error event before any block", Fault.error_event("api_error", after_events=1), expect="continued",
         error_type="api_error"),
    Case("connection cut inside a tool's JSON", Fault.cut_in_tool_use(after_json_deltas=2), expect="continued",
         error_type="connection_error", words=("connection dropped",)),
    Case("stall past the client timeout", Fault.stall(3.0, after_events=4), expect="continued", error_type="timeout",
         words=("timed out",), timeout=0.5),
    Case("stall shorter than the timeout", Fault.stall(0.3, after_events=4), expect="ok", timeout=3.0),
    Case("stream without message_stop", Fault.missing_message_stop(), expect="ok"),
]


def fault_id(case: Case) -> str:
    return case.name.replace(" ", "_")


@pytest.mark.asyncio
@pytest.mark.parametrize("streaming", [True, False], ids=["while_streaming", "after_the_stream"])
@pytest.mark.parametrize("case", CASES, ids=fault_id)
async def test_fault_is_survived(case: Case, streaming: bool) -> None:
    conversation = Conversation()
    effects: list[str] = []
    policy = RecordingPolicy()
    with FakeAnthropicServer(turns=conversation) as server:
        conversation.server = server
        model = AnthropicModel("claude-faults", api_key="test-key", base_url=server.base_url,
                               max_retries=case.max_retries, timeout=case.timeout)
        session = Session()
        config = RunConfig(model=model, tool_provider=lambda: probe_tools(effects), can_use_tool=policy,
                           hooks=empty_hooks(), max_turns=4,
                           streaming_tools=streaming, continuation_delay=0.01)
        if case.on_second_request:
            conversation.inject_after_first = (case.fault, case.times)
        else:
            server.inject(case.fault, times=case.times)
        started = time.monotonic()
        first = [e async for e in session.run("first question", config)]
        elapsed = time.monotonic() - started
        finished = first[-1]
        assert isinstance(finished, RunFinishedEvent)
        failed_request = server.requests[-1]

        if case.expect in ("retried", "ok"):
            assert finished.reason == "end_turn", (finished.reason, finished.error)
            assert finished.error is None
            extra = case.times if case.expect == "retried" else 0
            assert len(server.requests) == 2 + extra, [r.request_id for r in server.requests]
            if case.min_gap:
                gap = server.requests[1].received_at - server.requests[0].received_at
                assert gap >= case.min_gap, f"the SDK retried after {gap:.3f} s, before the retry-after"
            assert effects == ["look-0", "change-0"]
        elif case.expect == "continued":
            assert finished.reason == "end_turn" and finished.error is None, (finished.reason, finished.error)
            notices = [e.text for e in first if isinstance(e, NoticeEvent) and "Continuing automatically" in e.text]
            assert len(notices) == 1, notices
            assert case.error_type in notices[0] and "request id" in notices[0], notices[0]
            for word in case.words:
                assert word.lower() in notices[0].lower(), (word, notices[0])
            expected = list(case.ran_before_error) if streaming else []
            assert effects[:len(expected)] == expected, effects
        else:
            assert finished.reason == "api_error", (finished.reason, finished.error)
            error = finished.error or ""
            assert "\n" not in error, "one line"
            if case.status is not None:
                assert f"HTTP {case.status}" in error, error
            if case.error_type is not None:
                assert case.error_type in error, error
            assert f"request id {failed_request.request_id}" in error, (error, failed_request.request_id)
            for word in case.words:
                assert word.lower() in error.lower(), (word, error)
            notices = [e.text for e in first if isinstance(e, NoticeEvent) and e.level == "error"]
            assert notices == [error], "the error is shown once"
            stream_broke = case.fault.kind != "http"
            expected = case.ran_before_error if streaming or not stream_broke else ()
            assert effects == list(expected), effects
            expected_requests = (1 if not case.on_second_request else 2) + (
                case.max_retries if case.fault.kind == "http" and case.times > case.max_retries
                and dict(case.fault.headers).get("x-should-retry") != "false" else 0)
            assert len(server.requests) == expected_requests, len(server.requests)
        if case.fault.kind == "stall" and case.expect == "api_error":
            assert elapsed < 2.5, f"the stall was not cut by the timeout ({elapsed:.1f} s)"

        # what ran keeps its real result; the conversation goes on, and the server accepts it
        for tag in effects:
            results = [b for m in session.messages for b in blocks(m)
                       if b.get("type") == "tool_result" and f"did {tag}" in str(b.get("content"))]
            assert len(results) == 1 and not results[0].get("is_error"), (tag, results)
        assert_every_tool_use_paired_once(session.messages)
        server.clear_faults()
        second = [e async for e in session.run("second question", config)]
        assert isinstance(second[-1], RunFinishedEvent) and second[-1].reason == "end_turn", second[-1]
        assert_bodies_valid(server.bodies)
        assert_every_tool_use_paired_once(session.messages)
        assert len(effects) == len(set(effects)), f"a call ran twice: {effects}"
        for tag in effects:
            assert policy.allowed[tag] == 1
        await model.aclose()
    SURVIVED.append(f"{case.name} ({'streaming' if streaming else 'after the stream'})")
    report("r2_faults_survived", len(SURVIVED), f"of {2 * len(CASES)} fault scenarios x scheduling paths")
