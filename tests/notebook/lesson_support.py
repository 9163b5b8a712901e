"""Executing the lesson notebooks as a reader's "Run All" would, but headless (nbclient).

Each notebook runs in a fresh ipykernel of this interpreter, from a private kernelspec (the
user's kernels are never used), in a temporary working directory, with no Anthropic settings
in its environment: no key and no base URL, so the offline demo and ``--script`` turns are
all that can answer. Extra cells may be appended after the lesson's own cells to read what the
kernel holds (the stored notebook is not changed).
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import nbformat
from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpecManager
from nbclient import NotebookClient

PROJECT = Path(__file__).resolve().parents[2]
NOTEBOOKS = PROJECT / "notebooks"
LESSONS = ("quickstart", "tool_use_protocol", "debugging_pairing", "permissions_and_hooks", "long_sessions", "mcp_tools",
           "subagents_and_tool_search")
PROBE_MARK = "@@probe@@"


def lesson_path(name: str) -> Path:
    return NOTEBOOKS / f"{name}.ipynb"


def offline_env() -> dict[str, str]:
    """This process's environment without any Anthropic or project setting."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "TOOLAGENT_")) and k not in ("PYTHONPATH", "JPY_PARENT_PID", "MPLBACKEND")}
    env["PYTHONPATH"] = str(PROJECT)
    return env


def _kernel_spec_manager(workdir: Path) -> tuple[KernelSpecManager, str]:
    name = "toolagent-lessons"
    spec_dir = workdir / "kernels" / name
    spec_dir.mkdir(parents=True, exist_ok=True)
    (spec_dir / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "toolagent lessons", "language": "python",
    }))
    ksm = KernelSpecManager()
    ksm.kernel_dirs = [str(workdir / "kernels")]
    ksm.ensure_native_kernel = False
    return ksm, name


@dataclass
class ExecutedLesson:
    """A lesson after "Run All": its cells with outputs, what the probe cells printed, and how
    long the lesson's own cells took."""

    name: str
    workdir: Path
    notebook: Any
    lesson_cells: int
    probes: list[Any]
    seconds: float

    def tagged(self, tag: str) -> Any:
        found = [c for c in self.notebook.cells[: self.lesson_cells] if tag in c.get("metadata", {}).get("tags", [])]
        assert len(found) == 1, f"{self.name}: expected one cell tagged {tag!r}, found {len(found)}"
        return found[0]

    def text(self, tag: str) -> str:
        return cell_text(self.tagged(tag))

    def html(self, tag: str) -> str:
        return "\n".join(str(o.get("data", {}).get("text/html", "")) for o in self.tagged(tag).get("outputs", [])
                         if o.output_type in ("execute_result", "display_data"))

    def errors(self) -> list[tuple[int, str]]:
        return [(i, f"{o.ename}: {o.evalue}") for i, c in enumerate(self.notebook.cells[: self.lesson_cells])
                for o in c.get("outputs", []) if o.output_type == "error"]


def execute_lesson(name: str, workdir: Path, *, probes: Sequence[str] = (), timeout: float = 60) -> ExecutedLesson:
    """Run every cell of the stored lesson, then the ``probes``; a probe prints one JSON value
    after `PROBE_MARK`. Errors stop nothing (they are collected and asserted by the tests)."""
    nb = nbformat.read(lesson_path(name), as_version=4)
    lesson_cells = len(nb.cells)
    nb.cells += [nbformat.v4.new_code_cell(src) for src in probes]
    ksm, kernel = _kernel_spec_manager(workdir)
    km = KernelManager(kernel_name=kernel, kernel_spec_manager=ksm)
    client = NotebookClient(nb, km=km, timeout=timeout, allow_errors=True, kernel_name=kernel,
                            resources={"metadata": {"path": str(workdir)}})
    seconds = 0.0
    with client.setup_kernel(env=offline_env(), cwd=str(workdir)):
        for index, cell in enumerate(nb.cells):
            started = time.perf_counter()
            client.execute_cell(cell, index)
            if index < lesson_cells:
                seconds += time.perf_counter() - started
    values = [_probe_value(cell) for cell in nb.cells[lesson_cells:]]
    return ExecutedLesson(name, workdir, nb, lesson_cells, values, seconds)


def _probe_value(cell: Any) -> Any:
    text = cell_text(cell)
    if PROBE_MARK not in text:
        raise AssertionError(f"probe printed no value:\n{text[-3000:]}")
    return json.loads(text.split(PROBE_MARK, 1)[1].strip().splitlines()[0])


def probe(expression: str, *, setup: str = "") -> str:
    """A probe cell: run ``setup``, then print ``expression`` as JSON on one line."""
    return f"{setup}\nimport json as _json\nprint({PROBE_MARK!r}, _json.dumps({expression}, default=repr))"


def cell_text(cell: Any) -> str:
    """Everything a cell showed as text: streams, text/plain results, error name and value."""
    parts: list[str] = []
    for out in cell.get("outputs", []):
        if out.output_type == "stream":
            parts.append(out.text)
        elif out.output_type in ("execute_result", "display_data"):
            parts.append(str(out.get("data", {}).get("text/plain", "")))
        elif out.output_type == "error":
            parts.append(f"{out.ename}: {out.evalue}")
    return "\n".join(parts)
