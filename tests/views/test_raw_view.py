"""`RawView` (``%agent raw``) and the request diff: what each request newly shows the model."""

from __future__ import annotations

import copy

import pytest
from view_support import SleepTool, config, has_html, run, use

from jupyter_toolagent.core.events import RequestFinishedEvent
from jupyter_toolagent.core.session import RunRecord, Session
from jupyter_toolagent.core.request_body import build_request_body
from jupyter_toolagent.views import RawView
from jupyter_toolagent.views._json import CACHE_MARK, format_json
from jupyter_toolagent.views.request_diff import cache_breakpoints, diff_requests

SYSTEM = "You are a careful assistant. " * 3


async def two_request_run() -> tuple[Session, RunRecord]:
    session = Session()
    turns = [[{"type": "text", "text": "Reading."}, use("Read", "a", "toolu_R1")], "All done."]
    await run(session, "read it", config(turns, [SleepTool("Read", safe=True, delay=0.0, output="file body")]))
    return session, session.runs[-1]


def body(messages: list[dict], *, tools: list[dict] | None = None, **kw: object) -> dict:
    tools = tools if tools is not None else [
        {"name": "Grep", "description": "g", "input_schema": {"type": "object"}},
        {"name": "Read", "description": "r", "input_schema": {"type": "object"}},
    ]
    return build_request_body(model=str(kw.pop("model", "m1")), system=SYSTEM, tools=tools, messages=messages,
                              max_tokens=100, **kw)  # type: ignore[arg-type]


FIRST = [{"role": "user", "content": "hello"}]
SECOND = [*FIRST, {"role": "assistant", "content": [{"type": "text", "text": "hi"}]},
          {"role": "user", "content": "again"}]


def test_no_run_yet() -> None:
    view = RawView(None)
    assert view.to_text() == "Raw requests — No run yet: run a %%agent cell first."
    assert "No run yet" in view.to_html()


@pytest.mark.asyncio
async def test_request_two_of_a_real_run_shows_the_new_tool_result() -> None:
    _, record = await two_request_run()
    view = RawView(record)
    assert len(view.requests) == 2
    out = view.to_text()
    second = out[out.index("=== Request 2 of 2 ==="):]
    changes = second[second.index("Changes since request 1:"):second.index("response:")]
    assert "+ messages[1] added:" in changes and '"id": "toolu_R1"' in changes
    assert "+ messages[2] added:" in changes
    assert '{"type": "tool_result", "tool_use_id": "toolu_R1", "content": "file body"}' in changes
    assert "~ messages[0]" not in changes  # the first message is unchanged (only its marker moved)
    assert "prompt cache: the previous request's prefix is reused unchanged" in changes
    html = view.to_html()
    assert 'data-request-index="1"' in html and '<span class="tav-diff-add">+ messages[2] added:</span>' in html


@pytest.mark.asyncio
async def test_each_request_shows_its_id_stop_reason_and_usage_from_the_events() -> None:
    _, record = await two_request_run()
    finished = [e for e in record.events if isinstance(e, RequestFinishedEvent)]
    out = RawView(record).to_text()
    for event in finished:
        assert f"request id: {event.request_id}" in out
        u = event.usage
        assert (f"usage: input {u.input_tokens}, output {u.output_tokens}, cache write "
                f"{u.cache_creation_input_tokens}, cache read {u.cache_read_input_tokens}") in out
    assert [e.stop_reason for e in finished] == ["tool_use", "end_turn"]
    assert "stop_reason: tool_use" in out and "stop_reason: end_turn" in out


@pytest.mark.asyncio
async def test_cache_breakpoints_are_visible() -> None:
    _, record = await two_request_run()
    view = RawView(record)
    out = view.to_text()
    assert "cache breakpoints: tools[1] (ReadToolOutput), system[0], messages[0].content[0]" in out
    assert "cache breakpoints: tools[1] (ReadToolOutput), system[0], messages[2].content[0]" in out
    first_body = out[out.index("request body:"):out.index("response:")]
    assert first_body.count(CACHE_MARK) == 3
    assert "cache breakpoint moved: messages[0].content[0] → messages[2].content[0]" in out
    html = view.to_html()
    assert html.count('<span class="tav-cache-mark">') == 6  # three per body, two bodies (folded)
    assert '<span class="tav-cache">' in html


async def three_request_run() -> RunRecord:
    session = Session()
    turns = [[use("Read", "a", "toolu_R1")], [use("Read", "b", "toolu_R2")], "All done."]
    await run(session, "read both", config(turns, [SleepTool("Read", safe=True, delay=0.0, output="file body")]))
    return session.runs[-1]


@pytest.mark.asyncio
async def test_the_first_and_last_bodies_are_shown_the_others_as_changes_and_full_shows_all() -> None:
    record = await three_request_run()
    assert len(record.requests) == 3
    system_start = record.requests[0]["system"][0]["text"][:60]
    short = RawView(record).to_text()
    assert short.count(system_start) == 2 and short.count("request body:") == 2
    middle = short[short.index("=== Request 2 of 3 ==="):short.index("=== Request 3 of 3 ===")]
    assert "request body:" not in middle and "Changes since request 1:" in middle
    full = RawView(record, full=True).to_text()
    assert full.count(system_start) == 3 and full.count("request body:") == 3
    assert not has_html(short)
    whole = RawView(record, max_string=None).to_text()
    assert record.requests[0]["system"][0]["text"].replace("\n", "\\n") in whole
    html = RawView(record).to_html()
    assert html.count("request body (") == 2 and "%agent raw --full shows every body" in html
    assert RawView(record, full=True).to_html().count("request body (") == 3


def _long_run(requests: int) -> RunRecord:
    """A run whose every request repeats a conversation that grows by two messages."""
    record = RunRecord(prompt="p")
    messages: list[dict] = [{"role": "user", "content": "start " + "x" * 200}]
    for n in range(requests):
        record.requests.append(body(messages))
        record.responses.append({"role": "assistant", "content": [{"type": "text", "text": f"answer {n} " + "y" * 200}]})
        messages = [*messages, record.responses[-1], {"role": "user", "content": f"question {n} " + "z" * 200}]
    return record


def test_the_output_grows_linearly_with_the_run() -> None:
    """Twice the requests, about twice the output (embedding every body would make it four times)."""
    for form in ("to_text", "to_html"):
        sizes = [len(getattr(RawView(_long_run(n)), form)()) for n in (60, 120)]
        assert sizes[1] / sizes[0] < 2.6, (form, sizes)
    full = [len(RawView(_long_run(n), full=True).to_text()) for n in (60, 120)]
    assert full[1] / full[0] > 3.2  # what --full costs, by contrast


def test_diff_ignores_moved_breakpoints_and_reports_them_separately() -> None:
    diff = diff_requests(body(FIRST), body(SECOND))
    assert [(c.index, c.kind) for c in diff.messages] == [(1, "added"), (2, "added")]
    assert diff.breakpoints_moved
    assert cache_breakpoints(body(SECOND))[-1] == "messages[2].content[0]"
    assert diff.cache.reused
    assert not diff.settings and not diff.tools_reordered and not diff.system_changed


def test_a_changed_message_is_shown_as_a_line_diff_and_breaks_cache_reuse() -> None:
    edited = copy.deepcopy(SECOND)
    edited[0]["content"] = "hello, edited"
    diff = diff_requests(body(SECOND), body([*edited, {"role": "assistant", "content": "ok"}]))
    changed = [c for c in diff.messages if c.kind == "changed"]
    assert [c.index for c in changed] == [0]
    assert '-      "text": "hello"' in changed[0].diff and '+      "text": "hello, edited"' in changed[0].diff
    assert not diff.cache.reused and "breaks at messages[0]" in diff.cache.reason


def test_tool_order_and_settings_changes_break_cache_reuse() -> None:
    tools = body(FIRST)["tools"]
    reordered = diff_requests(body(FIRST), body(SECOND, tools=[dict(tools[1]), dict(tools[0])]))
    assert reordered.tools_reordered and "tools reordered" in reordered.summary_lines()
    assert not reordered.cache.reused and "breaks at tools[0] (Grep)" in reordered.cache.reason
    model = diff_requests(body(FIRST), body(SECOND, model="m2"))
    assert model.settings == {"model": ("m1", "m2")}
    assert not model.cache.reused and "model changed" in model.cache.reason
    thinking = diff_requests(body(FIRST), body(SECOND, thinking={"type": "enabled", "budget_tokens": 2048}))
    assert not thinking.cache.reused and "thinking changed" in thinking.cache.reason
    added = diff_requests(body(FIRST), body(SECOND, tools=[*tools, {"name": "Zed", "input_schema": {}}]))
    assert added.tools_added == ["Zed"] and not added.cache.reused
    tokens = diff_requests(body(FIRST), build_request_body(model="m1", system=SYSTEM, tools=tools, messages=SECOND,
                                                           max_tokens=999))
    assert tokens.settings == {"max_tokens": (100, 999)} and tokens.cache.reused


def test_raw_view_of_a_dry_run_and_of_a_failed_run() -> None:
    record = RunRecord(prompt="x", requests=[body(FIRST)], finish_reason="dry_run")
    out = RawView(record).to_text()
    assert "dry run: this request was not sent" in out and "response:" not in out
    failed = RunRecord(prompt="x", requests=[body(FIRST)], finish_reason="api_error", error="HTTP 529 overloaded_error")
    assert "run error: HTTP 529 overloaded_error" in RawView(failed).to_text()
    assert "no response recorded" in RawView(failed).to_text()


def test_readable_json_keeps_small_objects_on_one_line_and_cuts_long_strings() -> None:
    value = {"a": {"b": 1, "c": [1, 2]}, "long": "x" * 1000, "cache_control": {"type": "ephemeral"}}
    out = format_json(value, max_string=40)
    lines = out.splitlines()
    assert '  "a": {"b": 1, "c": [1, 2]},' in lines
    assert any("… [960 characters cut] …" in line for line in lines)
    assert lines[-2] == f'  "cache_control": {{"type": "ephemeral"}}  {CACHE_MARK}'
    assert format_json({"x": 1}) == '{"x": 1}'
    html = format_json({"t": "<b>"}, html=True)
    assert "&lt;b&gt;" in html and "<b>" not in html
