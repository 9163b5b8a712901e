"""The built-in tools (SPEC §10): notebook, file and shell tools.

`builtin_tools()` returns fresh instances in a fixed order, so the tools section of every request
is byte-identical (prompt caching) and no state is shared between sessions. Nothing here imports
IPython, pandas, numpy, polars or matplotlib at import time: they are looked up only if the user
already imported them.
"""

from __future__ import annotations

from typing import Callable, Iterable

from ..core.tool import Tool
from ..errors import ConfigError
from .bash import Bash
from .edit import Edit
from .glob_files import Glob
from .grep import Grep
from .insert_cell import InsertCell
from .inspect_variable import InspectVariable
from .notebook_cells import NotebookCells
from .output_mapping import map_return_value
from .read import Read
from .run_python import RunPython
from .summarize import summarize
from .variables import ListVariables
from .write import Write

__all__ = [
    "BUILTIN_TOOL_NAMES",
    "Bash",
    "Edit",
    "Glob",
    "Grep",
    "InsertCell",
    "InspectVariable",
    "ListVariables",
    "NotebookCells",
    "Read",
    "RunPython",
    "Write",
    "builtin_tools",
    "map_return_value",
    "summarize",
]

_FACTORIES: dict[str, Callable[[], Tool]] = {
    "ListVariables": ListVariables,
    "InspectVariable": InspectVariable,
    "RunPython": RunPython,
    "NotebookCells": NotebookCells,
    "InsertCell": InsertCell,
    "Read": Read,
    "Glob": Glob,
    "Grep": Grep,
    "Edit": Edit,
    "Write": Write,
    "Bash": Bash,
}
BUILTIN_TOOL_NAMES: tuple[str, ...] = tuple(_FACTORIES)


def builtin_tools(*, include: Iterable[str] | None = None) -> list[Tool]:
    """Fresh instances of the built-in tools, in a fixed order; ``include`` keeps only those names.

    An unknown name in ``include`` raises `ConfigError` listing the valid ones (a typo must not
    silently hide a tool).
    """
    if include is None:
        return [factory() for factory in _FACTORIES.values()]
    wanted = list(include)
    unknown = [name for name in wanted if name not in _FACTORIES]
    if unknown:
        raise ConfigError(
            f"unknown built-in tool{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
            f"the built-in tools are {', '.join(BUILTIN_TOOL_NAMES)}"
        )
    keep = set(wanted)
    return [factory() for name, factory in _FACTORIES.items() if name in keep]
