"""MCP tools in a real JupyterLab, clicked in a real (headless) Chromium: the approval card of an
MCP tool, Allow, its result in the card; and Stop during a slow MCP call (the call is cancelled
on the server and its result says it was interrupted)."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from lab_page import open_notebook

pytestmark = pytest.mark.browser

LOAD = "%load_ext jupyter_toolagent"
ADD = f"%agent mcp add demo -- {sys.executable} -m jupyter_toolagent.testing.mcp_server"


def tool_use_block(name: str, input: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": input}


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    content = body["messages"][-1]["content"]
    return [b for b in content if isinstance(content, list) and b.get("type") == "tool_result"]


def result_text(result: dict[str, Any]) -> str:
    content = result.get("content")
    return content if isinstance(content, str) else " ".join(b.get("text", "") for b in content or [])


def test_an_mcp_tools_approval_card_allow_and_result(page, jupyter_lab, fake_api):
    def script(body):
        if not tool_results(body):
            return [tool_use_block("mcp__demo__delete_everything", {"target": "/scratch"})]
        return [{"type": "text", "text": "The MCP server answered."}]

    tag = fake_api.script(script)
    nb = open_notebook(page, jupyter_lab, "mcp_allow.ipynb", [LOAD, ADD, f"%%agent\n{tag} clean the scratch area"])
    nb.run_all()
    allow = nb.wait_button(2, "Allow once", timeout=90)
    card = nb.card(2).first
    text = card.inner_text()
    assert "mcp__demo__delete_everything" in text and "/scratch" in text
    assert "DESTRUCTIVE" in text and "OPEN WORLD" in text  # the server's hints, on the card
    nb.click(allow)
    nb.wait_all_done(timeout=90)
    assert "connected: 8 tools" in nb.output_text(1)
    assert nb.card_status(nb.card(2).first) == "done"
    assert "pretended to delete /scratch" in nb.card(2).first.inner_text()
    assert "The MCP server answered." in nb.output_text(2)
    (result,) = tool_results(fake_api.bodies(tag, expected=2)[-1])
    assert not result.get("is_error") and result_text(result) == "pretended to delete /scratch"


def test_stop_during_a_slow_mcp_call(page, jupyter_lab, fake_api):
    def script(body):
        if not tool_results(body):
            return [tool_use_block("mcp__demo__sleep", {"seconds": 60})]
        return [{"type": "text", "text": "never reached"}]

    tag = fake_api.script(script)
    nb = open_notebook(page, jupyter_lab, "mcp_stop.ipynb",
                       [LOAD, ADD, f"%%agent --allow mcp__demo__sleep\n{tag} wait a minute", "%agent mcp log demo"])
    nb.run_all()
    nb.wait_card_status(2, "running", timeout=90)
    nb.click(nb.button(2, "Stop").first)
    nb.wait_cell_done(2, timeout=30)
    card_text = nb.card(2).first.inner_text()
    assert "Interrupted" in card_text or nb.card_status(nb.card(2).first) in ("interrupted", "cancelled")
    nb.run_cell(3)
    nb.wait_cell_done(3, timeout=30)
    assert "sleep(60.0) was cancelled by the client" in nb.output_text(3)  # notifications/cancelled arrived
