"""``notebooks/quickstart.ipynb`` run headless with no key and no base URL: the offline demo
(fake server in the kernel, real SDK path) answers, RunPython is denied by policy, then runs
with ``--allow RunPython`` and returns its figure as an image block in the tool_result; a cell
fails and ``%%agent --allow InsertCell`` "fix the cell above" is told so, reads the cell with
NotebookCells and proposes the fix (shown, not inserted: nbclient cannot insert cells)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from lesson_support import ExecutedLesson, execute_lesson, probe

pytestmark = pytest.mark.kernel

PROBES = [
    probe("current_session().messages"),
    probe("[len(r.requests) for r in current_session().runs]"),
    probe("offline._server is not None and len(offline._server.bodies)",
          setup="from jupyter_toolagent.notebook import offline"),
    probe("[os.environ.get('ANTHROPIC_API_KEY'), os.environ.get('ANTHROPIC_BASE_URL')]", setup="import os"),
    probe("list(current_session().runs[-1].requests)"),
]
DEMO_TOOLS = ["ListVariables", "InspectVariable", "RunPython"]
DENIED = ("RunPython was not run: RunPython is not allowed by any rule. It needs approval and nobody can approve "
          "in this run. To allow it, add `--allow 'RunPython'`.")


@pytest.fixture(scope="module")
def lesson(tmp_path_factory: pytest.TempPathFactory) -> ExecutedLesson:
    return execute_lesson("quickstart", tmp_path_factory.mktemp("quickstart"), probes=PROBES)


def blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message["content"]
    return content if isinstance(content, list) else [{"type": "text", "text": content}]


def calls_after_prompt(messages: list[dict[str, Any]], prompt_start: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(tool_use, tool_result) pairs of the run started by the prompt, each result taken from the
    start of the message right after its tool_use's message."""
    start = next(i for i, m in enumerate(messages)
                 if m["role"] == "user" and blocks(m)[0].get("text", "").startswith(prompt_start))
    end = next((i for i, m in enumerate(messages) if i > start and m["role"] == "user"
                and blocks(m)[0]["type"] == "text"), len(messages))
    pairs = []
    for i in range(start, end):
        uses = [b for b in blocks(messages[i]) if b["type"] == "tool_use"]
        if not uses:
            continue
        following = blocks(messages[i + 1])
        assert [b["type"] for b in following[: len(uses)]] == ["tool_result"] * len(uses)
        for use, result in zip(uses, following):
            assert result["tool_use_id"] == use["id"]
            pairs.append((use, result))
    return pairs


def test_runs_offline_without_errors_in_time(lesson: ExecutedLesson) -> None:
    typo = lesson.notebook.cells.index(lesson.tagged("typo"))
    assert lesson.errors() == [(typo, "NameError: name 'sale' is not defined")]  # the lesson's deliberate error
    assert lesson.probes[3] == [None, None]  # the kernel had no key and no base URL
    assert lesson.seconds < 30, lesson.seconds


def test_agent_cells_say_they_are_the_offline_demo(lesson: ExecutedLesson) -> None:
    for tag in ("ask", "allowed"):
        text = lesson.text(tag)
        assert "offline demo: scripted turns from the built-in fake server; set ANTHROPIC_API_KEY to use Claude" in text
        assert "Offline demo" in text
    assert "offline demo server: not running" in lesson.text("load")


def test_every_request_went_through_the_fake_server(lesson: ExecutedLesson) -> None:
    requests_per_run = lesson.probes[1]
    assert len(requests_per_run) == 3 and all(n >= 4 for n in requests_per_run[:2]) and requests_per_run[2] == 3
    assert lesson.probes[2] == sum(requests_per_run)


def test_headless_run_denies_run_python_and_tells_the_model(lesson: ExecutedLesson) -> None:
    messages = lesson.probes[0]
    pairs = calls_after_prompt(messages, "Which columns of `sales`")
    assert [use["name"] for use, _ in pairs] == DEMO_TOOLS
    assert [bool(result.get("is_error")) for _, result in pairs] == [False, False, True]
    denied = pairs[2][1]
    assert [b["text"] for b in blocks(denied)] == [DENIED]
    assert DENIED in lesson.text("ask")
    assert "sales: pandas DataFrame 36×4" in blocks(pairs[0][1])[0]["text"]


def test_allowed_run_pairs_list_inspect_run_and_returns_the_plot_as_an_image(lesson: ExecutedLesson) -> None:
    messages = lesson.probes[0]
    pairs = calls_after_prompt(messages, "Go ahead")
    assert [use["name"] for use, _ in pairs] == DEMO_TOOLS
    assert not any(result.get("is_error") for _, result in pairs)
    assert pairs[1][0]["input"] == {"path": "sales"}
    assert "Missing values:" in blocks(pairs[1][1])[0]["text"]
    content = pairs[2][1]["content"]
    assert [b["type"] for b in content] == ["text", "image"]
    image = content[1]["source"]
    assert image["type"] == "base64" and image["media_type"] == "image/png"
    assert base64.b64decode(image["data"]).startswith(b"\x89PNG\r\n\x1a\n")
    assert "sales.describe()" in pairs[2][0]["input"]["code"]  # the code ran on the lesson's DataFrame


def test_the_card_and_the_lesson_show_the_image(lesson: ExecutedLesson) -> None:
    assert "data:image/png;base64," in lesson.html("allowed")
    shown = [o for o in lesson.tagged("image").outputs if o.output_type == "display_data" and "image/png" in o.data]
    assert len(shown) == 1
    assert "is_error=False  content=['text', 'image']" in lesson.text("image")


def test_transcript_and_check_cells_show_a_valid_paired_transcript(lesson: ExecutedLesson) -> None:
    text = lesson.text("transcript")
    assert "Transcript of session 'default' — 16 message(s), 6 tool call(s): valid" in text
    for name in DEMO_TOOLS:
        assert text.count(f" {name} ") >= 2
    assert text.count("→ result messages.") == 6
    assert "NO RESULT" not in text
    assert lesson.text("check").startswith("Pairing check of session 'default' (16 messages): valid")


def test_fix_the_cell_above_is_told_the_error_reads_the_cell_and_proposes_the_fix(lesson: ExecutedLesson) -> None:
    typo = lesson.notebook.cells.index(lesson.tagged("typo"))
    typo_number = sum(c.cell_type == "code" for c in lesson.notebook.cells[: typo + 1])  # each code cell ran once
    first, second, _third = lesson.probes[4]
    prompt = first["messages"][-1]["content"]
    assert prompt[0]["text"] == "Fix the cell above."
    note = prompt[1]["text"]
    assert f"The cell before this one (In[{typo_number}]) raised NameError: name 'sale' is not defined" in note
    assert "Added: " in note and "blocks (function)" in note  # the image cell's helper, defined since
    assert "Kernel changes" not in json.dumps(first["system"])  # never in the cacheable system prompt
    pairs = calls_after_prompt(lesson.probes[0], "Fix the cell above.")
    assert [use["name"] for use, _ in pairs] == ["NotebookCells", "ListVariables", "InsertCell"]
    cells = blocks(pairs[0][1])[0]["text"]
    assert f'In [{typo_number}]:\nrevenue_by_region = sale.groupby("region")["revenue"].sum()' in cells
    assert f"Last exception (In[{typo_number}]):" in cells
    proposed = pairs[2][0]["input"]["code"]
    assert proposed == 'revenue_by_region = sales.groupby("region")["revenue"].sum()\nrevenue_by_region'
    assert blocks(pairs[2][1])[0]["text"].startswith("Not inserted: this notebook is being run without an interactive")
    assert second["messages"][-1]["content"][0]["type"] == "tool_result"
    shown = lesson.text("fix")
    assert "the proposed cell was not inserted" in shown and proposed.splitlines()[0] in shown
    assert "code is shown above instead" in shown
