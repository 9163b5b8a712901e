"""Is there someone who can click? (SPEC §8.3)

JupyterLab and Notebook send ``allow_stdin=True`` with every execute request; nbclient,
nbconvert and papermill send ``False`` because nothing can answer. That flag is the signal: with
no clickable front end an approval would only wait until nbclient's cell timeout interrupts the
kernel and abandons the rest of the notebook, so asks are decided at once by policy (denied,
naming the ``--allow`` rule) and the cell gets a static rendering that a saved notebook keeps.
"""

from __future__ import annotations

import sys
from typing import Any, Literal

from .kernel_run import kernel_can_deliver_clicks, kernel_of

Approvals = Literal["widgets", "terminal", "policy"]
"""How asks are answered: buttons in the cell, a ``[y/N]`` prompt, or denied by policy."""


def execute_request_allows_stdin(kernel: Any) -> bool | None:
    """``allow_stdin`` of the execute request being run, or None when it cannot be read."""
    try:
        parent = kernel.get_parent("shell")
        value = parent["content"]["allow_stdin"]
    except Exception:
        value = getattr(kernel, "_allow_stdin", None)
    return None if value is None else bool(value)


def stdin_is_terminal() -> bool:
    try:
        return bool(sys.stdin and sys.stdin.isatty())
    except (AttributeError, ValueError):
        return False


def choose_approvals(shell: Any, requested: bool | None) -> tuple[Approvals, str | None]:
    """How this cell answers asks, and a note for the person when it cannot ask them.

    ``requested`` is ``--interactive`` (True), ``--no-interactive`` (False), or the configured
    default (None: detect).
    """
    kernel = kernel_of(shell)
    if requested is False:
        return "policy", None
    if kernel is None:
        if stdin_is_terminal():
            return "terminal", None
        return "policy", "stdin is not a terminal: asks are denied by policy"
    if not kernel_can_deliver_clicks(shell):
        import ipykernel

        return "policy", (
            f"ipykernel {ipykernel.__version__} cannot deliver button clicks to a running cell "
            "(6.x and >= 7.4 can): asks are denied by policy"
        )
    if requested:
        return "widgets", None
    if execute_request_allows_stdin(kernel) is False:
        return "policy", None
    return "widgets", None
