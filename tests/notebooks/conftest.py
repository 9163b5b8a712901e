"""An in-process IPython shell with the extension loaded, for the ``%agent`` subcommand tests.
(Each lesson module executes its notebook once, in a module-scoped fixture.)"""

from __future__ import annotations

from typing import Any, Iterator

import pytest


@pytest.fixture
def agent_shell() -> Iterator[Any]:
    from IPython.testing.globalipapp import get_ipython

    shell = get_ipython()  # the shared test shell, started once
    shell.run_line_magic("load_ext", "jupyter_toolagent")
    try:
        yield shell
    finally:
        shell.run_line_magic("unload_ext", "jupyter_toolagent")
        from jupyter_toolagent.notebook.sessions import registry_for

        registry_for(shell).clear()
