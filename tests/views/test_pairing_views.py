"""`PairingCheckView` (``%agent check``) and `RepairView`: the verdict and what a repair did."""

from __future__ import annotations

from typing import Any

from view_support import has_html

from jupyter_toolagent.core.pairing import check_pairing, repair_pairing
from jupyter_toolagent.views import PairingCheckView, RepairView

BROKEN: list[dict[str, Any]] = [
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_Z", "content": "?"}]},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_A", "name": "Read", "input": {}}]},
    {"role": "user", "content": [{"type": "text", "text": "no result here"}]},
]
ORPHAN_0 = (
    "messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_Z. "
    "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
)
MISSING_1 = (
    "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_A. "
    "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
)


def test_check_view_of_a_valid_transcript() -> None:
    view = PairingCheckView.of([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}])
    assert view.valid
    assert view.to_text() == "Pairing check (2 messages): valid — every tool_use has exactly one tool_result."
    assert 'class="tav-ok"' in view.to_html()


def test_check_view_lists_every_violation_in_api_order_and_marks_the_first() -> None:
    view = PairingCheckView(check_pairing(BROKEN), message_count=len(BROKEN))
    lines = view.to_text().splitlines()
    assert lines[0].startswith("Pairing check (3 messages): 2 violation(s). The API would reject")
    assert lines[1] == f"1. [orphan_result at messages.0.content.0] {ORPHAN_0}"
    assert lines[2] == f"2. [missing_result at messages.1] {MISSING_1}"
    html = view.to_html()
    assert html.index(ORPHAN_0) < html.index("(the API answers with this one)") < html.index(MISSING_1)
    assert not has_html(view.to_text())


def test_check_view_of_a_malformed_transcript_reports_instead_of_raising() -> None:
    view = PairingCheckView.of([{"role": "user", "content": None}])
    assert not view.valid
    assert "not checked — check_pairing cannot read this transcript: messages[0].content is a NoneType" in view.to_text()


def test_repair_view_shows_each_change_and_the_check_before_and_after() -> None:
    view = RepairView.of(BROKEN)
    out = view.to_text()
    assert "Before repair: 2 violation(s):" in out
    assert f"  ✗ {ORPHAN_0}" in out and f"  ✗ {MISSING_1}" in out
    assert repair_pairing(BROKEN).summary() in out
    assert out.splitlines()[-1] == "After repair: check_pairing finds no violation; the transcript can be sent."
    html = view.to_html()
    for kind in ("removed_orphan_result", "replaced_emptied_message", "added_missing_result"):
        assert f'<tr data-kind="{kind}">' in html
    assert BROKEN[0]["content"][0]["tool_use_id"] == "toolu_Z"  # the input is untouched


def test_repair_view_of_a_valid_transcript_says_nothing_was_needed() -> None:
    view = RepairView.of([{"role": "user", "content": "hi"}])
    assert "Before repair: valid." in view.to_text()
    assert "No repair needed" in view.to_text()
    assert "No repair needed" in view.to_html()


def test_repair_view_from_a_report_alone() -> None:
    view = RepairView(repair_pairing(BROKEN))
    assert view.violations is None
    assert "Before repair" not in view.to_text()
    assert "repair_pairing made" in view.to_text()
