"""``notebooks/tool_use_protocol.ipynb``: hand-written tool_use blocks through the real runtime —
schema errors in the model's terms, a policy denial, one concurrent group of safe calls with the
unsafe call after it, the dry-run request, and what the second request adds."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from lesson_support import ExecutedLesson, execute_lesson, probe

pytestmark = pytest.mark.kernel

PROBES = [
    probe("ORDERS"),
    probe("None if offline._server is None else [r.path for r in offline._server.requests]",
          setup="from jupyter_toolagent.notebook import offline"),
]
TOOLS = ["ReadToolOutput", "list_orders", "lookup_price", "place_order"]
SCHEMA_ERRORS = [
    "InputValidationError: the input for tool lookup_price does not match its schema:\n"
    "- `item`: expected string, got integer 3\n"
    "Parameters of lookup_price: item (string, required). Fix the input and call the tool again.",
    "InputValidationError: the input for tool place_order does not match its schema:\n"
    "- missing required parameter `quantity`\n"
    "Parameters of place_order: item (string, required), quantity (integer, required). "
    "Fix the input and call the tool again.",
    "InputValidationError: the input for tool lookup_price does not match its schema:\n"
    "- unexpected parameter `currency`\n"
    "Parameters of lookup_price: item (string, required). Fix the input and call the tool again.",
]
DENIED = ("place_order was not run: place_order is not allowed by any rule. It needs approval and nobody can "
          "approve in this run. To allow it, add `--allow 'place_order'`.")
ROW = re.compile(r"^\s+\S.*?\s(?P<tool>lookup_price|place_order|list_orders)\s+(?P<status>\w+)\s+(?P<times>[\d.\s-]+?)\s+\|")


@pytest.fixture(scope="module")
def lesson(tmp_path_factory: pytest.TempPathFactory) -> ExecutedLesson:
    return execute_lesson("tool_use_protocol", tmp_path_factory.mktemp("tool_use_protocol"), probes=PROBES)


def test_runs_offline_without_errors_in_time(lesson: ExecutedLesson) -> None:
    assert lesson.errors() == []
    assert lesson.seconds < 30, lesson.seconds


def test_dry_run_shows_the_exact_request_and_sends_nothing(lesson: ExecutedLesson) -> None:
    text = lesson.text("dry-run")
    assert "Agent ended (dry_run)" in text
    body = json.loads(text[text.index("{"): text.rindex("}") + 1])
    assert [t["name"] for t in body["tools"]] == TOOLS  # --tools, in the deterministic order sent
    assert body["tools"][2]["input_schema"]["properties"]["item"]["description"] == 'Item name, e.g. "apple".'
    assert body["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "What does an apple cost?", "cache_control": {"type": "ephemeral"}}]}]
    assert lesson.probes[1] == []  # the demo server was started for the dry run and received nothing


def test_schema_errors_come_back_as_results_in_the_models_terms(lesson: ExecutedLesson) -> None:
    shown = lesson.text("invalid-run")
    for error in SCHEMA_ERRORS:
        for line in error.splitlines():
            assert line in shown, line
    transcript = lesson.text("invalid-transcript")
    assert "3 tool call(s): valid" in transcript
    for k, error in enumerate(SCHEMA_ERRORS):
        assert f"→ result messages.2.content.{k} · is_error: true · {error.replace(chr(10), '⏎ ')}" in transcript


def test_a_denial_is_the_calls_result_and_nothing_runs(lesson: ExecutedLesson) -> None:
    text = lesson.text("denied-run")
    assert "Denied by policy (no interactive front end)" in text
    assert f"error result:\n    {DENIED}" in text
    assert lesson.text("denied-orders").strip() == "orders: []"


def schedule_rows(text: str) -> list[tuple[str, list[tuple[str, str, list[float]]]]]:
    """(group header, [(tool, status, [queued, start, end])]) from the schedule view's text."""
    groups: list[tuple[str, list[tuple[str, str, list[float]]]]] = []
    for line in text.splitlines():
        if re.match(r"^  response \d+ · ", line):
            groups.append((line.strip(), []))
            continue
        match = ROW.match(line)
        if match:
            numbers = [float(n) for n in match["times"].split() if n != "-"]
            queued, start, end = numbers[0], numbers[-2], numbers[-1]
            groups[-1][1].append((match["tool"], match["status"], [queued, start, end]))
    return groups


def test_schedule_shows_the_safe_pair_together_then_the_unsafe_call_then_the_last_read(lesson: ExecutedLesson) -> None:
    text = lesson.text("schedule")
    assert "4 tool call(s) in 3 group(s)" in text
    groups = schedule_rows(text)
    assert [header for header, _ in groups] == [
        "response 1 · group 0 (2 call(s), concurrent)",
        "response 1 · group 1 (1 call(s), alone)",
        "response 1 · group 2 (1 call(s), alone)",
    ]
    assert [[(tool, status) for tool, status, _ in rows] for _, rows in groups] == [
        [("lookup_price", "done"), ("lookup_price", "done")], [("place_order", "done")], [("list_orders", "done")]]
    (apple, pear), (order,), (listing,) = [[times for _, _, times in rows] for _, rows in groups]
    assert pear[1] < apple[2] and apple[1] < pear[2]  # the two lookups overlapped
    assert apple[2] - apple[1] >= 0.45 and pear[2] - pear[1] >= 0.45  # each slept 0.5 s
    assert order[0] < apple[2]  # queued while the lookups ran ...
    assert order[1] >= max(apple[2], pear[2]) - 0.0015  # ... started only after both ended (ms rounding)
    assert listing[1] >= order[2] - 0.0015
    assert lesson.probes[0] == [["apple", 3]]
    assert 'list_orders] done' in lesson.text("shopping-run") and '[["apple", 3]]' in lesson.text("shopping-run")
    assert 'data-group="0.0"' in lesson.html("schedule")  # the drawn form carries the same grouping


def added_message(text: str, index: int) -> Any:
    """The JSON printed under ``+ messages[index] added:`` in the raw view's text."""
    lines = text.splitlines()
    start = lines.index(f"+ messages[{index}] added:") + 1
    body = []
    for line in lines[start:]:
        if not line.startswith("  "):
            break
        body.append(line[2:])
    return json.loads("\n".join(body))


def test_transcript_pairs_in_block_order_and_raw_shows_what_the_model_newly_sees(lesson: ExecutedLesson) -> None:
    transcript = lesson.text("shopping-transcript")
    assert "4 message(s), 4 tool call(s): valid" in transcript
    for k, preview in enumerate(["0.4", "0.55", "ordered 3 x apple", '[["apple", 3]]']):
        assert f"→ result messages.2.content.{k} · is_error: false · {preview}" in transcript
    raw = lesson.text("raw")
    assert "Raw requests of the last run in session 'default' — 2 request(s) in this run" in raw
    changes = raw[raw.index("Changes since request 1:"):]
    assert [line for line in changes.splitlines() if line[:1] in "+-~"] == [
        "+ messages[1] added:", "+ messages[2] added:",
        "~ cache breakpoint moved: messages[0].content[0] → messages[2].content[3] "
        "(where a marker sits is not content: the diff above ignores it)"]
    uses = [b for b in added_message(changes, 1)["content"] if b["type"] == "tool_use"]
    results = added_message(changes, 2)["content"]
    assert [b["name"] for b in uses] == ["lookup_price", "lookup_price", "place_order", "list_orders"]
    assert [r["type"] for r in results] == ["tool_result"] * 4
    assert [r["tool_use_id"] for r in results] == [u["id"] for u in uses]


def test_a_script_function_reads_the_results_it_was_sent(lesson: ExecutedLesson) -> None:
    assert "A plum costs 0.3 euros." in lesson.text("reader-run")
    assert "valid — every tool_use has exactly one tool_result" in lesson.text("check")
