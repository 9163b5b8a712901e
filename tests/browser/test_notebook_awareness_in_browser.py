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


def test_undo_after_a_rebinding_run_python_and_the_note_after_a_failed_cell_in_jupyterlab(
        page, jupyter_lab, fake_api) -> None:
    """Allow a RunPython that rebinds ``x``; ``%agent undo`` puts the old object back; a cell
    fails; the next agent cell's first request carries the note (rebinding, deletion, error)."""
    def script(body: dict[str, Any]) -> Any:
        if tool_results(body):
            return [{"type": "text", "text": "ok"}]
        if "rebind" in body["messages"][-1]["content"][0]["text"]:
            return [{"type": "tool_use", "name": "RunPython", "input": {"code": "x = 2\ndel y"}}]
        return [{"type": "text", "text": "noted"}]

    tag = fake_api.script(script)
    nb = open_notebook(page, jupyter_lab, "undo_note.ipynb", [
        LOAD + "\nx = [1]\ny = 'why'\noriginal = x",            # 0
        f"%%agent\n{tag} rebind x",                             # 1
        "print('after call:', x)",                              # 2
        "%agent undo",                                          # 3
        "print('after undo:', x is original, y)",               # 4
        "x = x * 3\ndel original\nraise ValueError('bad input')",  # 5
        "%%agent\nwhat changed?",                               # 6
    ])
    nb.run_all()
    nb.click(nb.wait_button(1, "Allow once"))
    for index in range(6):
        nb.wait_cell_done(index)
    assert "rebound x; deleted y" in nb.output_text(1)  # the card lists the names
    assert "after call: 2" in nb.output_text(2)
    assert "restored x, y" in nb.output_text(3) and "In-place changes" in nb.output_text(3)
    assert "after undo: True why" in nb.output_text(4)
    assert "ValueError" in (nb.error_text(5) or nb.output_text(5))
    assert nb.prompt(6).replace(" ", "") in ("[]:", "[]")  # Run All stopped at the error
    nb.run_cell(6)
    nb.wait_cell_done(6)
    bodies = fake_api.bodies(tag)
    prompt = bodies[-1]["messages"][-1]["content"]
    assert prompt[0]["text"] == "what changed?"
    note = prompt[1]["text"]
    # compared with the kernel as the agent left it (x = 2, no y), so the undo shows up too
    assert "Added: y (str len 3)" in note and "Rebound: x (int → list len 3)" in note
    assert "Removed: original (list len 1)" in note
    assert f"(In[{nb.execution_count(5)}]) raised ValueError: bad input" in note
