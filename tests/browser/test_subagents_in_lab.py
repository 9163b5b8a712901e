"""Two explore sub-agents in parallel in a real JupyterLab (headless Chromium): each one's
tool card is drawn, live, inside the card of the ``Agent`` call that started it, and both are
seen running at the same moment (SPEC §12)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from lab_page import open_notebook

pytestmark = pytest.mark.browser

TOOLS = '''import asyncio
from jupyter_toolagent import tool

@tool(read_only=True)
async def slow_count(table: str) -> int:
    """Count a table's rows (slowly)."""
    await asyncio.sleep(4)
    return {"orders": 1200, "customers": 310}[table]
'''


def _first_user(body: dict[str, Any]) -> str:
    content = body["messages"][0]["content"]
    return content if isinstance(content, str) else " ".join(b.get("text", "") for b in content if b.get("type") == "text")


def _has_results(body: dict[str, Any]) -> bool:
    return any(b.get("type") == "tool_result" for m in body["messages"] if m["role"] == "user"
               and isinstance(m["content"], list) for b in m["content"])


def _call(name: str, input: dict[str, Any], id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": id, "name": name, "input": input}


def test_two_parallel_explore_agents_each_show_their_live_nested_card(page, jupyter_lab, fake_api):
    tags: dict[str, str] = {}

    def script(body):
        first = _first_user(body)
        for table in ("orders", "customers"):
            if f"SUB {table}" in first:
                if not _has_results(body):
                    return [_call("slow_count", {"table": table}, f"toolu_lab_count_{table}")]
                return [{"type": "text", "text": f"{table} counted."}]
        if not _has_results(body):
            return [_call("Agent", {"description": table, "prompt": f"{tags['tag']} SUB {table}", "subagent_type": "explore"},
                          f"toolu_lab_explore_{table}") for table in ("orders", "customers")]
        return [{"type": "text", "text": "Both tables counted."}]

    tag = tags["tag"] = fake_api.script(script)
    nb = open_notebook(page, jupyter_lab, "subagents_parallel.ipynb",
                       ["%load_ext jupyter_toolagent", TOOLS, f"%%agent\n{tag} count both tables"])
    nb.run_all()
    cell = nb.cell(2)

    def inner(table: str) -> Any:
        return cell.locator(f".jp-toolagent-card-toolu_lab_explore_{table} .jp-toolagent-nested "
                            f".jp-toolagent-card-toolu_lab_count_{table}")

    # both inner cards running at once, each inside its own Agent card
    deadline = time.monotonic() + 60
    while not all(inner(t).count() == 1 and nb.card_status(inner(t)) == "running" for t in ("orders", "customers")):
        assert time.monotonic() < deadline, f"the two nested cards were never seen running together:\n{nb.output_text(2)}"
        assert nb.error_text(2) is None, nb.error_text(2)
        time.sleep(0.05)
    assert cell.locator(".jp-toolagent-card-toolu_lab_explore_orders .jp-toolagent-card-toolu_lab_count_customers").count() == 0
    assert cell.locator(".jp-toolagent-card-toolu_lab_explore_customers .jp-toolagent-card-toolu_lab_count_orders").count() == 0
    nb.wait_all_done()
    for table in ("orders", "customers"):
        assert nb.card_status(inner(table)) == "done"
        nested = cell.locator(f".jp-toolagent-card-toolu_lab_explore_{table} .jp-toolagent-nested").first
        text = nested.inner_text()
        assert f"sub-agent explore: {table}" in text and f"{table} counted." in text
    assert "Both tables counted." in nb.output_text(2)
    bodies = fake_api.bodies(tag, expected=6)  # the cell's two requests and two for each sub-agent
    assert "Agent" in {t["name"] for t in bodies[0]["tools"]}
