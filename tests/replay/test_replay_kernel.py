"""Every recorded stream through ``%%agent`` in a real kernel (nbclient, headless), in one
notebook that replays them in sequence in one conversation; and the issue's cut-append
scenario, where the cell must show the automatic continuation.

The fake server runs in this test process; the kernel reaches it through
``ANTHROPIC_BASE_URL`` (see ``tests/kernel/kernel_harness.py``). The tools the recordings call
are the `replay_tools` functions, imported into the kernel's namespace.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from jupyter_toolagent.core.pairing import check_pairing
from jupyter_toolagent.testing import FakeAnthropicServer, RecordedStream
from jupyter_toolagent.testing.validation import request_error

from replay_support import (
    APPEND_TOOL_SOURCE,
    FIXTURES,
    append_then_cut,
    blocks_of,
    expect,
    fixture_id,
    replay_turns,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "kernel"))
from kernel_harness import cell_errors, cell_text, kernel_env, run_notebook  # noqa: E402

pytestmark = pytest.mark.kernel
HERE = Path(__file__).resolve().parent
MARK = "@@replay@@"


def test_every_recorded_stream_through_agent_cells(tmp_path: Path) -> None:
    recordings = {fixture_id(p): RecordedStream.from_file(p) for p in FIXTURES}
    cells = ["%load_ext jupyter_toolagent\n"
             f"import sys\nsys.path.insert(0, {str(HERE)!r})\n"
             "from replay_tools import *\nfrom replay_tools import CALLS"]
    for name in recordings:
        cells += [f"%%agent\nreplay {name}", "%%agent\nnext"]
    cells.append("import json\nfrom jupyter_toolagent import current_session\n"
                 f"print({MARK!r}, json.dumps({{'calls': CALLS, 'pairing': [v.message for v in current_session().check_pairing()]}}))")
    with FakeAnthropicServer(turns=replay_turns(recordings)) as server:
        nb = run_notebook(cells, sys.executable, kernel_env(server.base_url), tmp_path, timeout=120)
        bodies = server.bodies
    for cell in nb.cells:
        assert not cell_errors(cell), cell_text(cell)
    for body in bodies:  # every request the kernel sent was valid, server-tool rule included
        assert request_error(body) is None and check_pairing(body["messages"]) == []
    report = json.loads(cell_text(nb.cells[-1]).split(MARK, 1)[1].strip().splitlines()[0])
    assert report["pairing"] == []
    expected_calls = [[name, value] for p in FIXTURES for _, name, value in expect(recordings[fixture_id(p)]).runs]
    assert sorted(map(json.dumps, report["calls"])) == sorted(map(json.dumps, expected_calls))
    texts = {name: cell_text(nb.cells[1 + 2 * i]) for i, name in enumerate(recordings)}
    assert "This request was refused due to policy." in texts["sdk_streaming/refusal_response.txt"]
    assert "without a stop reason" in texts["sdk_streaming/out_of_order_response.txt"]
    sent = json.dumps(bodies[-1]["messages"])
    assert "replay sdk_streaming/refusal_response.txt" not in sent  # the refused exchange is not sent again
    summaries = {b["content"] for body in bodies for b in blocks_of(body) if b.get("type") == "compaction"}
    assert summaries == {"Earlier conversation summarized.", "Earlier conversation summarized in full."}


def test_a_cut_after_one_append_shows_the_continuation_in_the_cell(tmp_path: Path) -> None:
    target = tmp_path / "log.txt"
    turns = [append_then_cut(str(target)), "Appended the first line; the second was cut."]
    with FakeAnthropicServer(turns=turns) as server:
        nb = run_notebook(["%load_ext jupyter_toolagent", APPEND_TOOL_SOURCE,
                           "%%agent --allow append_line\nappend two lines",
                           "from jupyter_toolagent import current_session\n"
                           "print('PAIRING', current_session().check_pairing())"],
                          sys.executable, kernel_env(server.base_url), tmp_path)
        bodies = server.bodies
    for cell in nb.cells:
        assert not cell_errors(cell), cell_text(cell)
    shown = cell_text(nb.cells[2])
    assert "Continuing automatically" in shown and "continuation 1 of 3" in shown, shown
    assert "Appended the first line" in shown
    assert target.read_text() == "first line\n"
    assert len(bodies) == 2 and request_error(bodies[1]) is None
    results = {b["tool_use_id"]: b for b in blocks_of(bodies[1]) if b.get("type") == "tool_result"}
    assert results["toolu_01AppendTwo0000000000"]["is_error"] is True
    assert "PAIRING []" in cell_text(nb.cells[3])
