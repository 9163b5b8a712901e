"""InsertCell in real JupyterLab 4 and Notebook 7, clicked in a real (headless) Chromium.

The agent asks to insert two cells in one run; the person answers the first ask with "Always
allow" (so the second is allowed by the session rule it added). When the agent cell finishes,
one new code cell appears right below it — not executed, with both proposals in order — and the
cell that Run All had queued behind the agent cell still runs.
"""

from __future__ import annotations

from typing import Any

import pytest
from lab_page import cell_source, open_in_notebook7, open_notebook

pytestmark = pytest.mark.browser

LOAD = "%load_ext jupyter_toolagent"
FIRST = "fixed = sales_total * 2\nfixed"
SECOND = "print('second proposal')"


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    content = body["messages"][-1]["content"]
    return [b for b in content if isinstance(content, list) and b.get("type") == "tool_result"]


def result_text(result: dict[str, Any]) -> str:
    content = result.get("content")
    return content if isinstance(content, str) else " ".join(b.get("text", "") for b in content or [])


@pytest.mark.parametrize("front_end", ["jupyterlab", "notebook7"])
def test_insert_cell_asks_then_the_cells_appear_below_unexecuted_in_order(
        front_end: str, page, fake_api, request: pytest.FixtureRequest) -> None:
    def script(body: dict[str, Any]) -> Any:
        if not tool_results(body):
            return [{"type": "text", "text": "I propose two cells."},
                    {"type": "tool_use", "name": "InsertCell", "input": {"code": FIRST}},
                    {"type": "tool_use", "name": "InsertCell", "input": {"code": SECOND}}]
        return [{"type": "text", "text": "Both cells are proposed below."}]

    tag = fake_api.script(script)
    cells = [LOAD + "\nsales_total = 21", f"%%agent\n{tag} propose cells", "print('queued cell ran')"]
    name = f"insert_{front_end}.ipynb"
    if front_end == "jupyterlab":
        nb = open_notebook(page, request.getfixturevalue("jupyter_lab"), name, cells)
    else:
        nb = open_in_notebook7(page, request.getfixturevalue("jupyter_notebook7"), name, cells)
    nb.run_all()
    always = nb.wait_button(1, "Always allow")
    assert "InsertCell" in nb.card(1).first.inner_text()
    nb.click(always)
    page.wait_for_function("() => document.querySelectorAll('.jp-Notebook .jp-Cell').length === 4", timeout=60_000)
    nb.wait_cell_done(1)
    nb.wait_cell_done(3)

    inserted = nb.cell(2)
    assert "jp-CodeCell" in (inserted.get_attribute("class") or "")
    source = cell_source(nb, 2)
    assert "fixed = sales_total * 2" in source and "print('second proposal')" in source
    assert source.index("sales_total * 2") < source.index("second proposal")
    assert "(1 of 2)" in source and "(2 of 2)" in source
    assert nb.prompt(2).replace(" ", "") in ("[]:", "[]"), nb.prompt(2)  # proposed, not run
    assert nb.output_text(2).strip() == ""
    assert "queued cell ran" in nb.output_text(3)
    assert nb.execution_count(3) == nb.execution_count(1) + 1

    bodies = fake_api.bodies(tag, expected=2)
    results = [result_text(r) for r in tool_results(bodies[-1])]
    assert len(results) == 2 and all(r.startswith("Proposed: a new code cell") for r in results), results
    assert "proposal 2 of this agent cell" in results[1]
