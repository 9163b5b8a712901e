"""The built-in tools in a whole run: Agent + scripted model, real scheduling and pairing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tool_support import PNG_SIGNATURE, allow_all

pytest.importorskip("jupyter_toolagent.permissions")

from jupyter_toolagent import Agent, check_pairing  # noqa: E402
from jupyter_toolagent.models import ScriptedModel, text_block, tool_use_block  # noqa: E402


def results_by_id(messages: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {
        block["tool_use_id"]: block
        for message in messages if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"] if block.get("type") == "tool_result"
    }


@pytest.mark.asyncio
async def test_a_run_uses_notebook_file_and_shell_tools(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib").use("Agg")
    (tmp_path / "notes.txt").write_text("revenue is up\n")
    namespace: dict[str, Any] = {}
    model = ScriptedModel([
        [text_block("Let me compute."),
         tool_use_block("RunPython", {"code": "import matplotlib.pyplot as plt\nsales = [3, 5, 4]\nplt.figure()\n"
                                              "plt.plot(sales)\nsum(sales)"}, id="toolu_py")],
        [tool_use_block("InspectVariable", {"path": "sales"}, id="toolu_inspect"),
         tool_use_block("Grep", {"pattern": "revenue", "output_mode": "content"}, id="toolu_grep"),
         tool_use_block("Read", {"file_path": "notes.txt"}, id="toolu_read"),
         tool_use_block("ListVariables", {}, id="toolu_list")],
        [tool_use_block("Bash", {"command": "echo done > flag.txt && cat flag.txt"}, id="toolu_bash")],
        "Sales total 12; notes say revenue is up.",
    ])
    agent = Agent(model, builtin_tools=True, namespace=namespace, can_use_tool=allow_all, cwd=tmp_path)
    record = await agent.run("Summarise sales")
    assert record.finish_reason == "end_turn", record.error
    assert check_pairing(agent.messages) == []
    results = results_by_id(agent.messages)
    python = results["toolu_py"]["content"]
    assert python[0] == {"type": "text", "text": "Names: bound plt, sales\nOut: 12"} and python[1]["type"] == "image"
    import base64

    assert base64.b64decode(python[1]["source"]["data"]).startswith(PNG_SIGNATURE)
    assert "list with 3 items" in results["toolu_inspect"]["content"]
    assert results["toolu_grep"]["content"] == "notes.txt:1:revenue is up"
    assert results["toolu_read"]["content"] == "     1\trevenue is up"
    assert "sales: list, 3 items" in results["toolu_list"]["content"]
    assert results["toolu_bash"]["content"] == "done" and (tmp_path / "flag.txt").read_text() == "done\n"
    assert not any(r.get("is_error") for r in results.values())
