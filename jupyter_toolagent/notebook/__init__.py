"""The IPython/Jupyter front end: ``%%agent``, ``%agent``, live display, approvals.

`load_ipython_extension` registers the magics, makes `AgentMagics` configurable through
``%config`` and, in a kernel, installs the input transformer that turns a ``%%agent`` cell
into a top-level ``await`` (so widget clicks reach the running cell), and schedules `preload`:
once the loading execution has finished, the SDK and the rest of what the first cell imports
load in a background thread while the kernel is idle. Loading twice replaces
nothing and adds nothing; `unload_ipython_extension` removes all of it and stops the offline
demo server if one was started.
"""

from __future__ import annotations

import re
from typing import Any

_CELL_START = re.compile(r"%%agent(?=\s|$)")
_HELP = re.compile(r"%%agent\?")


def agent_cell_transformer(lines: list[str]) -> list[str]:
    """IPython cleanup transformer: ``%%agent ARGS`` + body → one awaited call.

    Top-level ``await`` makes IPython run the cell as a coroutine on the kernel's loop, which
    is what lets the kernel deliver comm messages while the agent waits. Only active while
    ``autoawait`` is on; otherwise IPython's own cell-magic path runs the synchronous magic.
    ``%%agent?`` (help) is left alone.
    """
    if not lines or not _CELL_START.match(lines[0]) or _HELP.match(lines[0]):
        return lines
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None or not getattr(shell, "autoawait", False) or not _registered(shell):
        return lines
    first = lines[0].rstrip("\r\n")
    line = first[len("%%agent"):].strip()
    body = "".join(lines[1:])
    return [f"await get_ipython().magics_manager.registry['AgentMagics'].agent_cell_async({line!r}, {body!r})\n"]


def _registered(shell: Any) -> bool:
    return "AgentMagics" in getattr(shell.magics_manager, "registry", {})


def load_ipython_extension(shell: Any) -> None:
    from . import cell_history, preload
    from .kernel_run import kernel_of
    from .magics import AgentMagics

    existing = shell.magics_manager.registry.get("AgentMagics")
    if existing is None:
        magics = AgentMagics(shell=shell)  # Magics.__init__ adds it to shell.configurables
        shell.register_magics(magics)
    if kernel_of(shell) is not None and agent_cell_transformer not in shell.input_transformers_cleanup:
        shell.input_transformers_cleanup.append(agent_cell_transformer)
    cell_history.install(shell)  # NotebookCells and the kernel-change note need each cell's error
    preload.schedule(shell)  # the SDK and the rest of the first cell's imports load once the kernel is idle


def unload_ipython_extension(shell: Any) -> None:
    from . import cell_history, preload
    from .offline import stop_demo_server

    while agent_cell_transformer in shell.input_transformers_cleanup:
        shell.input_transformers_cleanup.remove(agent_cell_transformer)
    magics = shell.magics_manager.registry.pop("AgentMagics", None)
    for kind in ("line", "cell"):
        table = shell.magics_manager.magics[kind]
        if magics is not None and getattr(table.get("agent"), "__self__", None) is magics:
            del table["agent"]
    if magics is not None:
        shell.configurables[:] = [c for c in shell.configurables if c is not magics]
    cell_history.uninstall(shell)
    preload.unschedule(shell)
    stop_demo_server()
    from .mcp_servers import close_servers

    close_servers(shell)  # every MCP server child stops with the extension


__all__ = ["load_ipython_extension", "unload_ipython_extension", "agent_cell_transformer"]
