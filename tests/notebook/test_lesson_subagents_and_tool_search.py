"""``notebooks/subagents_and_tool_search.ipynb``: two explore sub-agents in parallel (their cards in
the cell, valid sub-transcripts, usage rolled up, ``%agent agents`` / ``transcript --agent``), and
deferred tools loaded by ``ToolSearch``."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup

from lesson_support import ExecutedLesson, execute_lesson

pytestmark = pytest.mark.kernel


@pytest.fixture(scope="module")
def lesson(tmp_path_factory: pytest.TempPathFactory) -> ExecutedLesson:
    return execute_lesson("subagents_and_tool_search", tmp_path_factory.mktemp("subagents_and_tool_search"))


def test_runs_offline_without_errors(lesson: ExecutedLesson) -> None:
    assert lesson.errors() == []


def test_explore_agents_report_and_their_cards_appear(lesson: ExecutedLesson) -> None:
    shown = lesson.text("explore-run") + lesson.html("explore-run")
    assert "explore: orders" in shown and "explore: customers" in shown
    assert "orders: 1,200 rows" in shown


def test_each_explore_agents_cards_and_text_are_nested_in_its_own_agent_card(lesson: ExecutedLesson) -> None:
    soup = BeautifulSoup(lesson.html("explore-run"), "html.parser")
    for own, other in (("orders", "customers"), ("customers", "orders")):
        nested = soup.select_one(f'[data-tool-use-id="toolu_explore_{own}"] > .jp-toolagent-nested')
        assert nested is not None and nested["data-agent"] == f"explore: {own}"
        inner = nested.select("[data-tool-use-id]")
        assert len(inner) == 1 and "row_count" in inner[0].get_text() and inner[0]["data-status"] == "done"
        text = nested.get_text()
        assert f"{own} has" in text and f"{other} has" not in text
    top = [c["data-tool-use-id"] for c in soup.select(".jp-toolagent-run > [data-tool-use-id]")]
    assert top == ["toolu_explore_orders", "toolu_explore_customers"]  # the inner cards are not at the top


def test_sub_runs_are_valid_and_counted(lesson: ExecutedLesson) -> None:
    text = lesson.text("subruns")
    assert "toolu_explore_orders explore valid | orders has 1200 rows." in text
    assert "toolu_explore_customers explore valid | customers has 310 rows." in text
    assert "requests in this cell, sub-agents included: 6" in text


def test_agents_listing_and_sub_transcript(lesson: ExecutedLesson) -> None:
    listing = lesson.text("agents")
    assert "general-purpose" in listing and "explore" in listing and "toolu_explore_customers" in listing
    transcript = lesson.text("sub-transcript")
    assert "Describe the orders table." in transcript and "row_count" in transcript


def test_deferred_tool_loaded_by_search(lesson: ExecutedLesson) -> None:
    text = lesson.text("search-requests")
    lines = [line for line in text.splitlines() if line.startswith("request ")]
    assert len(lines) == 4
    assert "mcp__crm__archive_record" not in lines[0] and "ToolSearch" in lines[0]
    assert "mcp__crm__archive_record" not in lines[1]
    assert "mcp__crm__archive_record" in lines[2]
    assert "select:mcp__crm__archive_record" in text  # the hint of the call made too early
