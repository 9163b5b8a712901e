"""`IPythonRunner`: RunPython inside a kernel — ``%magics``, ``!`` lines and rich outputs.

Code goes through the shell's input transformers (so ``%timeit`` and ``!ls`` work as in a cell)
and is compiled with the shell's ``__future__`` flags (a ``from __future__ import annotations``
run in an earlier cell still applies; one run here applies to later cells). ``display()`` calls
are captured as content blocks instead of being drawn in the agent's cell, and the last
expression's value is formatted by the shell's display formatter (so an object with
``_repr_png_`` comes back as an image).

It deliberately does not call ``shell.run_cell``: that would advance the execution count, add to
``In``/``Out``, fire ``pre/post_run_cell`` events (which make the inline backend draw every open
figure into the agent's cell) and print tracebacks into the cell. The notebook layer passes an
instance as `BuiltinToolOptions.python_runner`, together with its ``hidden_names`` (the shell's
``user_ns_hidden``) for ListVariables.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

from IPython.core.displaypub import DisplayPublisher

from ..tools.images import mimebundle_to_blocks
from ..tools.python_exec import FUTURE_FLAGS, CodeRunner

__all__ = ["IPythonRunner"]


class _CollectingPublisher(DisplayPublisher):
    """Keeps display outputs as content blocks, in order; ``clear_output`` forgets them."""

    def __init__(self, blocks: list[dict[str, Any]], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.blocks = blocks

    def publish(self, data: Any, metadata: Any = None, source: Any = None, *, transient: Any = None,
                update: bool = False, **kwargs: Any) -> None:
        if isinstance(data, dict) and data:
            self.blocks.extend(mimebundle_to_blocks(data))

    def clear_output(self, wait: bool = False) -> None:
        self.blocks.clear()

    def set_parent(self, parent: Any) -> None:
        """ipykernel calls ``shell.display_pub.set_parent`` for every incoming shell message
        (a widget click while RunPython awaits, for one). Without this method the call raises
        and the click is lost; collected outputs have no parent to follow, so nothing to do."""


class IPythonRunner(CodeRunner):
    """A `CodeRunner` that runs code the way the kernel's cells are written."""

    def __init__(self, shell: Any) -> None:
        super().__init__()
        self.shell = shell

    def transform(self, code: str) -> str:
        return self.shell.transform_cell(code)

    def compile_flags(self) -> int:
        return int(getattr(self.shell.compile, "flags", 0)) & FUTURE_FLAGS

    def remember_flags(self, flags: int) -> None:
        self.shell.compile.flags |= flags

    def format_value(self, value: Any) -> list[dict[str, Any]] | None:
        data, _metadata = self.shell.display_formatter.format(value)
        return mimebundle_to_blocks(data) if data else None

    @contextlib.contextmanager
    def displays(self) -> Iterator[list[dict[str, Any]]]:
        blocks: list[dict[str, Any]] = []
        saved = self.shell.display_pub
        self.shell.display_pub = _CollectingPublisher(blocks, shell=self.shell)
        try:
            yield blocks
        finally:
            self.shell.display_pub = saved
