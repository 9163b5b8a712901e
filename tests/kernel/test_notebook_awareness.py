"""Notebook awareness (SPEC §15) through real kernels: nbclient notebooks and a kernel client.

The model is a `FakeAnthropicServer` in this process (real SDK, real HTTP+SSE); what the kernel
sent is read from the request bodies the server received. The fake model obeys its prompt:
each line ``call NAME {json}`` becomes a tool_use of NAME with that input; tool results are
answered with a short text.
"""

from __future__ import annotations

import copy
import json
import re
import sys
from typing import Any

import pytest

from jupyter_toolagent.testing import FakeAnthropicServer
from jupyter_toolagent.models import text_block, tool_use_block
from kernel_harness import cell_errors, cell_text, execute_and_wait, kernel_env, run_notebook, running_kernel

pytestmark = pytest.mark.kernel

LOAD = "%load_ext jupyter_toolagent"
CALL_LINE = re.compile(r"^call (\w+)\s*(\{.*\})?\s*$", re.MULTILINE)
NOTE_TITLE = "[Kernel changes since the agent last looked"


def prompt_blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message["content"]
    return content if isinstance(content, list) else [{"type": "text", "text": content}]


def answer(body: dict[str, Any]) -> list[dict[str, Any]]:
    last = body["messages"][-1]
    blocks = prompt_blocks(last)
    if any(b.get("type") == "tool_result" for b in blocks):
        return [text_block("done")]
    prompt = blocks[0].get("text", "")
    calls = [tool_use_block(name, json.loads(raw) if raw else {}) for name, raw in CALL_LINE.findall(prompt)]
    return calls or [text_block("hello")]


def messages_bodies(server: FakeAnthropicServer) -> list[dict[str, Any]]:
    return [r.body for r in server.requests if r.path == "/v1/messages"]


def first_request_of(bodies: list[dict[str, Any]], prompt: str) -> dict[str, Any]:
    """The first request whose last message starts with ``prompt`` (a cell's first request)."""
    return next(b for b in bodies if prompt_blocks(b["messages"][-1])[0].get("text") == prompt)


def without_cache_control(value: Any) -> Any:
    """The body as the cache sees it: breakpoints move to the last message, content does not."""
    value = copy.deepcopy(value)

    def strip(node: Any) -> None:
        if isinstance(node, dict):
            node.pop("cache_control", None)
            for child in node.values():
                strip(child)
        elif isinstance(node, list):
            for child in node:
                strip(child)

    strip(value)
    return value


def result_texts(body: dict[str, Any]) -> list[str]:
    texts = []
    for message in body["messages"]:
        for block in prompt_blocks(message):
            if block.get("type") == "tool_result":
                content = block.get("content")
                texts.append(content if isinstance(content, str) else
                             "".join(b.get("text", "") for b in content or [] if b.get("type") == "text"))
    return texts


def test_the_kernel_change_note_reports_rebinding_deleting_and_a_failed_cell(kernel_python: str, workdir) -> None:
    with FakeAnthropicServer(turns=answer) as server:
        nb = run_notebook([
            LOAD,                                                                          # In[1]
            "import json\ndata = [1, 2, 3]\ntmp = 5\nkeep = [1]",                       # In[2]
            "%%agent\nhello",                                                              # In[3]
            "%%agent\nhello again",                                                        # In[4]
            "data = data[1:]\ndel tmp\nnew_var = {'x': 1}\nkeep.append(2)",                # In[5]
            "1 / 0",                                                                       # In[6]
            "%%agent\nwhat changed?",                                                      # In[7]
            "%%agent\ncall NotebookCells {}",                                              # In[8]
            "%%agent\ncall NotebookCells {\"search\": \"keep.append\"}",                   # In[9]
        ], kernel_python, kernel_env(server.base_url), workdir)
        bodies = messages_bodies(server)
    assert [i for i, c in enumerate(nb.cells) if cell_errors(c)] == [5], [cell_text(c) for c in nb.cells]

    first = first_request_of(bodies, "hello")
    assert prompt_blocks(first["messages"][-1]) [1:] == []  # the first agent cell: nothing to compare with

    # nothing changed between the two cells: no note, and the cached prefix is the previous request
    quiet = first_request_of(bodies, "hello again")
    assert [b["text"] for b in prompt_blocks(quiet["messages"][-1])] == ["hello again"]
    previous = bodies[bodies.index(quiet) - 1]
    assert quiet["system"] == previous["system"] and quiet["tools"] == previous["tools"]
    prefix = without_cache_control(previous["messages"])
    assert without_cache_control(quiet["messages"])[: len(prefix)] == prefix
    assert len(quiet["messages"]) == len(prefix) + 2  # the model's answer, then the new prompt alone

    changed = first_request_of(bodies, "what changed?")
    blocks = prompt_blocks(changed["messages"][-1])
    assert blocks[0]["text"] == "what changed?" and len(blocks) == 2
    note = blocks[1]["text"]
    assert NOTE_TITLE in note
    assert "Added: new_var (dict len 1)" in note
    assert "Rebound: data (list len 3 → list len 2)" in note
    assert "Changed in place: keep (list len 1 → list len 2)" in note
    assert "Removed: tmp (int)" in note
    assert "The cell before this one (In[6]) raised ZeroDivisionError: division by zero" in note
    for hidden in ("json", "In ", "Out ", "_", "get_ipython"):
        assert f" {hidden}" not in note.replace(NOTE_TITLE, ""), (hidden, note)
    assert len(note.encode()) < 1024
    assert NOTE_TITLE not in json.dumps(changed["system"])  # never in the cacheable system prompt

    # the next cell: the agent has looked since, so no note
    cells_request = first_request_of(bodies, "call NotebookCells {}")
    assert len(prompt_blocks(cells_request["messages"][-1])) == 1

    listing = result_texts(bodies[-1])
    everything = next(t for t in listing if "In [6]:" in t)
    assert "In [5]:\ndata = data[1:]" in everything
    assert "In [6]:\n1 / 0\n→ raised ZeroDivisionError: division by zero" in everything
    assert "Last exception (In[6]):\nTraceback (most recent call last):" in everything
    assert everything.rstrip().endswith("ZeroDivisionError: division by zero")
    assert "interactiveshell.py" not in everything  # IPython's own frames are left out
    searched = listing[-1]
    assert "In [5]:" in searched and "In [2]:" not in searched and "showing 1 (containing 'keep.append')" in searched


def test_run_python_lists_its_names_and_undo_restores_them_once(workdir) -> None:
    code = json.dumps({"code": "x = 10\ndel y\nw = 5\nkeep.append(3)"})
    with FakeAnthropicServer(turns=answer) as server:
        nb = run_notebook([
            LOAD,
            "x = 1\ny = 2\nz = 3\nkeep = [1]\noriginal_x = x",
            f"%%agent --allow RunPython\ncall RunPython {code}",
            "print('after call:', x, 'y' in dir(), w, keep)",
            "%agent undo",
            "print('after undo:', x is original_x, y, 'w' in dir(), keep)",
            "%agent undo",
        ], sys.executable, kernel_env(server.base_url), workdir)
        bodies = messages_bodies(server)
    for cell in nb.cells:
        assert not cell_errors(cell), cell_text(cell)
    result = result_texts(bodies[-1])[-1]
    assert result.startswith("Names: bound w; rebound x; deleted y")
    assert "rebound x" in cell_text(nb.cells[2])  # the card shows it too
    assert "after call: 10 False 5 [1, 3]" in cell_text(nb.cells[3])
    undone = cell_text(nb.cells[4])
    assert "restored x, y" in undone and "removed w" in undone and "In-place changes" in undone
    assert "after undo: True 2 False [1, 3]" in cell_text(nb.cells[5])  # the append stays: in place
    assert "nothing to undo" in cell_text(nb.cells[6])


def test_insert_cell_headless_shows_the_code_and_says_it_was_not_inserted(workdir) -> None:
    code = json.dumps({"code": "print('proposed fix')"})
    with FakeAnthropicServer(turns=answer) as server:
        nb = run_notebook([
            LOAD,
            f"%%agent --allow InsertCell\ncall InsertCell {code}",
            f"%%agent\ncall InsertCell {code}",
            f"%%agent --mode plan\ncall InsertCell {code}",
        ], sys.executable, kernel_env(server.base_url), workdir)
        bodies = messages_bodies(server)
    assert len(nb.cells) == 4  # nbclient never inserts a cell
    shown = cell_text(nb.cells[1])
    assert "the proposed cell was not inserted" in shown and "print('proposed fix')" in shown
    results = result_texts(bodies[-1])
    assert results[0].startswith("Not inserted: this notebook is being run without an interactive front end")
    assert "needs approval and nobody can approve" in results[1] and "--allow 'InsertCell'" in results[1]
    assert "plan mode" in results[2].lower() or "plan" in results[2]


def test_insert_cell_writes_one_set_next_input_payload_with_the_proposals_in_order(workdir) -> None:
    """A front end that can click (``allow_stdin=True``, as JupyterLab and Notebook send) gets the
    proposals as one ``set_next_input`` payload (front ends honour only the first one)."""
    first, second = json.dumps({"code": "a = 1"}), json.dumps({"code": "b = 2"})
    with FakeAnthropicServer(turns=answer) as server:
        with running_kernel(sys.executable, kernel_env(server.base_url), workdir) as (_km, kc):
            execute_and_wait(kc, LOAD, allow_stdin=True)
            reply, _ = execute_and_wait(kc, f"%%agent --mode acceptEdits\ncall InsertCell {first}", allow_stdin=True)
            assert reply["status"] == "ok"
            assert reply["payload"] == [{"source": "set_next_input", "text": "a = 1", "replace": False}]
            reply, shown = execute_and_wait(
                kc, f"%%agent --allow InsertCell\ncall InsertCell {first}\ncall InsertCell {second}", allow_stdin=True)
            payloads = [p for p in reply["payload"] if p["source"] == "set_next_input"]
            assert len(payloads) == 1 and payloads[0]["replace"] is False
            text = payloads[0]["text"]
            assert text.index("a = 1") < text.index("b = 2")
            assert "(1 of 2)" in text and "(2 of 2)" in text
            reply, _ = execute_and_wait(kc, "1 + 1", allow_stdin=True)
            assert reply["payload"] == []  # nothing lingers into the next cell
        bodies = messages_bodies(server)
    results = result_texts(bodies[-1])
    assert results[-1].startswith("Proposed: a new code cell") and "proposal 2 of this agent cell" in results[-1]
