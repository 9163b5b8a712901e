"""An in-process IPython shell with the extension loaded, for the magics' tests."""

from __future__ import annotations

from typing import Iterator

import pytest


@pytest.fixture
def agent_shell() -> Iterator[object]:
    from IPython.testing.globalipapp import get_ipython

    shell = get_ipython()  # starts the shared test shell once
    shell.run_line_magic("load_ext", "jupyter_toolagent")
    # the shared shell runs in the checkout: saving is switched on by the tests that test it
    shell.run_line_magic("config", "AgentMagics.save_sessions = False")
    try:
        yield shell
    finally:
        shell.run_line_magic("unload_ext", "jupyter_toolagent")
        from jupyter_toolagent.notebook.sessions import registry_for

        registry_for(shell).clear()
