"""R6 — the API key appears nowhere.

A real kernel (ipykernel 7, started the way nbclient starts it, so asks are denied by policy)
runs a notebook with ``ANTHROPIC_API_KEY=sk-ant-api03-TESTSECRET-<random>`` and
``ANTHROPIC_BASE_URL`` pointing at a `FakeAnthropicServer` that only accepts that key. The
conversation tries to get the key out: an allowed ``printenv ANTHROPIC_API_KEY``, a denied
``env`` and ``cat /proc/$PPID/environ``, RunPython printing ``os.environ`` (denied, then
allowed), API errors whose messages echo the key (an HTTP 401 and an error event mid-stream),
then ``%agent transcript``, ``%agent raw``, ``%agent export``, ``%agent config``, a dry run and
a dump of the session's runs.

Then the key — and any 12-character piece of its random part — is searched in: every cell
output (all MIME types, errors and tracebacks), the saved notebook JSON with its metadata
(widget state included), the export file, the runs/transcript dump, every request the fake
server recorded (bodies, raw bytes, headers) and every response it delivered, the kernel's
stdout/stderr, and the log records of this process.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
from pathlib import Path
from typing import Any, Iterator

import nbformat
import pytest
from kernel_harness import kernel_env
from reliability_support import blocks, latest_marker, run_cells_in_kernel, tool_use
from suite_counts import report

from jupyter_toolagent.testing import FakeAnthropicServer, Fault

pytestmark = pytest.mark.kernel

RANDOM = secrets.token_hex(16)
SECRET = f"sk-ant-api03-TESTSECRET-{RANDOM}"
PIECES = [RANDOM[i:i + 12] for i in range(0, len(RANDOM) - 11, 4)]


PRINT_KEY = "import os\nprint(os.environ['ANTHROPIC_API_KEY'])\nos.environ['ANTHROPIC_API_KEY']"
PLAYS: dict[str, list[Any]] = {
    "a": [[tool_use("Bash", command="printenv ANTHROPIC_API_KEY")],
          [tool_use("Bash", command="env"), tool_use("RunPython", code=PRINT_KEY),
           tool_use("Bash", command="cat /proc/$PPID/environ")],
          "Done with a."],
    "b": [[tool_use("RunPython", code=PRINT_KEY)], "Done with b."],
    "c": ["never played: the request fails with 401"],
    "d": [[{"type": "text", "text": "Starting a long answer that will be cut by an error event. " * 3},
           tool_use("ListVariables")], "Done with d."],
    "e": ["Fine again."],
}


def script(body: dict[str, Any]) -> Any:
    marker, rounds = latest_marker(body["messages"], PLAYS, default="e")
    play = PLAYS[marker]
    return play[rounds] if rounds < len(play) else "Done."


CELLS = [
    "%load_ext jupyter_toolagent",
    "import hashlib, os\nprint('key digest', hashlib.sha256(os.environ['ANTHROPIC_API_KEY'].encode()).hexdigest())",
    "%%agent --allow 'Bash(printenv:*)' --deny 'Bash(env:*)'\n[a] Show me every environment variable.",
    "%%agent --allow RunPython\n[b] Print the API key with Python.",
    "%%agent\n[c] This request is refused with a 401 that echoes the key.",
    "%%agent\n[d] This answer is cut by an error event that echoes the key.",
    "%%agent\n[e] Are you still there?",
    "%agent transcript",
    "%agent raw",
    "%agent export exported.json",
    "%agent config",
    "%agent sessions",
    "%agent check",
    "%%agent --dry-run\n[e] What would you send?",
    ("import json\nfrom jupyter_toolagent import current_session\ns = current_session()\n"
     "open('runs.json', 'w').write(json.dumps({'messages': s.messages, 'runs': [vars(r) for r in s.runs], "
     "'permissions': repr(s.permissions)}, default=repr))\nprint(repr(s.runs[-1])[:2000])"),
]
FAULTS_BEFORE = {
    4: (Fault.http_error(401, "authentication_error", f"invalid x-api-key: {SECRET}", should_retry=False), 1),
    5: (Fault.error_event("overloaded_error", after_events=6, message=f"Overloaded while serving key {SECRET}"), 1),
}


class LogRecords(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.lines.append(record.getMessage())
        except Exception:  # a record whose message cannot be formatted still counts as seen
            self.lines.append(repr(record.msg))


@pytest.fixture
def logs() -> Iterator[LogRecords]:
    handler = LogRecords()
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def leaks(where: str, text: str) -> list[str]:
    found = []
    if SECRET in text:
        found.append(f"{where}: the whole key")
    elif any(piece in text for piece in PIECES):
        found.append(f"{where}: a piece of the key")
    return found


def test_the_key_appears_nowhere(tmp_path: Path, logs: LogRecords) -> None:
    workdir = tmp_path / "work"
    workdir.mkdir()
    kernel_log = tmp_path / "kernel-output.log"

    with FakeAnthropicServer(turns=script, api_key=SECRET) as server:
        env = kernel_env(server.base_url)
        env["ANTHROPIC_API_KEY"] = SECRET

        def inject_faults(index: int) -> None:
            if index in FAULTS_BEFORE:
                fault, times = FAULTS_BEFORE[index]
                server.inject(fault, times=times)

        nb = run_cells_in_kernel(CELLS, workdir=workdir, scratch=tmp_path, env=env, log=kernel_log, timeout=90,
                                 before_cell=inject_faults)
        recorded = list(server.requests)
        delivered = list(server.responses)

    saved = tmp_path / "saved.ipynb"
    nbformat.write(nb, saved)
    outputs = {i: json.dumps(cell.get("outputs", [])) for i, cell in enumerate(nb.cells)}

    # the run really had the key and really tried: otherwise "no leak" would prove nothing
    assert hashlib.sha256(SECRET.encode()).hexdigest() in outputs[1], "the kernel did not get the key"
    assert recorded and all({"x-api-key", "authorization"} & set(r.headers) for r in recorded)
    assert "HTTP 401" in outputs[4] and "authentication_error" in outputs[4], outputs[4][:2000]
    assert "overloaded_error" in outputs[5], outputs[5][:2000]
    assert "Fine again." in outputs[6]
    found: list[str] = []
    for i, text in outputs.items():
        found += leaks(f"cell {i} outputs", text)
    found += leaks("saved notebook", saved.read_text())
    found += leaks("notebook metadata", json.dumps(nb.metadata))
    found += leaks("export file", (workdir / "exported.json").read_text())
    found += leaks("runs dump", (workdir / "runs.json").read_text())
    for request in recorded:
        found += leaks(f"request {request.request_id} body", json.dumps(request.body))
        found += leaks(f"request {request.request_id} raw", request.raw.decode("utf-8", "replace"))
        found += leaks(f"request {request.request_id} headers", json.dumps(request.headers))
        found += leaks(f"request {request.request_id} path", request.path)
    found += leaks("delivered responses", json.dumps(delivered))
    found += leaks("kernel stdout/stderr", kernel_log.read_text(errors="replace"))
    found += leaks("log records", "\n".join(logs.lines))
    for path in workdir.rglob("*"):
        if path.is_file():
            found += leaks(f"file {path.name}", path.read_text(errors="replace"))
    report("r6_places_searched", len(outputs) + 6 + 4 * len(recorded), "outputs, files, requests, logs")
    report("r6_requests_recorded", len(recorded))
    assert found == []

    # and the attempts were made and refused or masked, as intended
    transcript = json.loads((workdir / "exported.json").read_text())
    results = {b["tool_use_id"]: b for m in transcript["messages"] for b in blocks(m) if b.get("type") == "tool_result"}
    texts = [json.dumps(r) for r in results.values()]
    assert any("printenv" not in t and "Exit code 1" in t for t in texts), "printenv ran and found no key"
    assert any("[secret]" in t for t in texts), "RunPython's printed key was masked"
    assert sum("not allowed" in t or "denied" in t for t in texts) >= 3, "env, RunPython and /proc were refused"

