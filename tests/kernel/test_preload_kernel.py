"""Background loading after ``%load_ext`` through real kernels (nbclient), SPEC-neutral: only when
the SDK is imported changes, not what a cell does.

A ``sitecustomize`` on the kernel's path (``preload_site/``) watches or breaks imports of
``anthropic``: it records which thread imported it, poisons it (``sys.modules`` entry None), or
lets it fail only off the main thread. No timing is asserted here (see benchmark B10).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from jupyter_toolagent.testing import FakeAnthropicServer
from kernel_harness import PROJECT, cell_errors, cell_text, kernel_env, run_notebook

pytestmark = pytest.mark.kernel

SITE = Path(__file__).resolve().parent / "preload_site"
ANSWER = "Hello from the fake server."


def env_for(server: FakeAnthropicServer, mode: str) -> dict[str, str]:
    return kernel_env(server.base_url, PYTHONPATH=f"{SITE}{os.pathsep}{PROJECT}", PRELOAD_TEST_MODE=mode)


def test_the_sdk_loads_in_the_background_and_the_next_cell_waits_for_it(kernel_python: str, workdir) -> None:
    with FakeAnthropicServer(when_exhausted=ANSWER) as server:
        nb = run_notebook([
            "%load_ext jupyter_toolagent",
            "import sys, threading, sitecustomize\n"
            "print('THREADS', sitecustomize.THREADS)\n"
            "print('LOADING', [t.name for t in threading.enumerate() if t.name == 'toolagent-preload'])\n"
            "print('LOADED', 'anthropic' in sys.modules)",
            "%%agent\nSay hello.",
            "print('LOOKUPS', len(__import__('sitecustomize').THREADS))",
        ], kernel_python, env_for(server, "record"), workdir)
        requests = [r for r in server.requests if r.path.startswith("/v1/messages")]
    check = cell_text(nb.cells[1])
    assert "THREADS ['toolagent-preload']" in check, check  # imported by the loading thread, before any agent cell
    assert "LOADING []" in check, check  # the cell started only once the loading had finished
    assert "LOADED True" in check, check
    assert not cell_errors(nb.cells[2]), cell_text(nb.cells[2])
    assert ANSWER in cell_text(nb.cells[2])
    assert len(requests) == 1
    assert "LOOKUPS 1" in cell_text(nb.cells[3])  # anthropic was looked up once: the cell found it loaded


def test_an_sdk_that_cannot_be_imported_fails_the_first_agent_cell_clearly(workdir) -> None:
    with FakeAnthropicServer(when_exhausted=ANSWER) as server:
        nb = run_notebook([
            "%load_ext jupyter_toolagent",
            "value = 6 * 7\nprint('VALUE', value)",
            "%%agent\nSay hello.",
            "%%agent\nSay hello again.",
        ], sys.executable, env_for(server, "poison"), workdir)
        sent = list(server.requests)
    assert not cell_errors(nb.cells[0]), cell_text(nb.cells[0])  # %load_ext itself does not need the SDK
    assert "VALUE 42" in cell_text(nb.cells[1])
    for cell in nb.cells[2:]:
        errors = cell_errors(cell)
        assert [e.ename for e in errors] == ["ImportError"], cell_text(cell)
        message = errors[0].evalue
        assert "jupyter_toolagent needs 'anthropic'" in message
        assert "halted; None in sys.modules" in message  # the cause, as Python gives it
        assert "while loading in the background after %load_ext" in message
    assert sent == []  # nothing was sent


def test_a_module_that_only_imports_on_the_main_thread_is_loaded_there(workdir) -> None:
    with FakeAnthropicServer(when_exhausted=ANSWER) as server:
        nb = run_notebook([
            "%load_ext jupyter_toolagent",
            "%%agent\nSay hello.",
            "import sitecustomize\nprint('THREADS', sitecustomize.THREADS)",
        ], sys.executable, env_for(server, "main-only"), workdir)
        requests = [r for r in server.requests if r.path.startswith("/v1/messages")]
    assert not cell_errors(nb.cells[1]), cell_text(nb.cells[1])
    assert ANSWER in cell_text(nb.cells[1])
    assert len(requests) == 1
    assert "THREADS ['toolagent-preload', 'MainThread']" in cell_text(nb.cells[2])
