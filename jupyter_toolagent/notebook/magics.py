"""``%%agent`` and ``%agent``: thin magics over `agent_cell`, `subcommands` and `kernel_run`.

`AgentMagics` is also the traitlets `Configurable` that holds the defaults, so
``%config AgentMagics.model = "..."`` and ``c.AgentMagics.mode = "plan"`` in
``ipython_config.py`` work (IPython's `Magics` adds it to ``shell.configurables``).

In a kernel the cell is run by `agent_cell_async`, which an input transformer makes the
cell's top-level ``await`` (see `agent_cell_transformer`); the ``agent_cell`` magic itself is
the synchronous path (terminal IPython, or a kernel with ``%autoawait off``).
"""

from __future__ import annotations

from typing import Any

from IPython.core.interactiveshell import InteractiveShell
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from traitlets import Bool, Enum, Float, Int, List, TraitError, Unicode, validate
from traitlets.config import Configurable

from . import kernel_run, preload
from .agent_cell import execute_cell, prepare_cell
from .options import MODES, agent_cell_arguments


@magics_class
class AgentMagics(Magics, Configurable):
    """Defaults for ``%%agent`` cells; every one can be overridden by a cell option."""

    shell: InteractiveShell  # IPython registers the magics with the running shell (never None here)

    model = Unicode("", help="Model id (empty: $TOOLAGENT_MODEL, else a current Sonnet).").tag(config=True)
    mode = Unicode("", help=f"Permission mode: one of {', '.join(MODES)} (empty: the project settings "
                            "file's mode, else default).").tag(config=True)
    max_turns = Int(30, help="Most model requests per cell.").tag(config=True)
    approval_timeout = Float(600.0, help="Seconds to wait for an approval before denying.").tag(config=True)
    system = Unicode("", help="Extra instructions appended to the system prompt.").tag(config=True)
    allow = List(Unicode(), help="Allow rules for every cell, e.g. ['Read', 'Bash(git log:*)'].").tag(config=True)
    deny = List(Unicode(), help="Deny rules for every cell.").tag(config=True)
    ask = List(Unicode(), help="Ask rules for every cell.").tag(config=True)
    interactive = Bool(None, allow_none=True,
                       help="Approval buttons: True forces, False forbids, None detects the front end.").tag(config=True)
    defer_tools = Enum(["auto", "always", "never"], "auto", help="Deferred tools (sent by name until ToolSearch loads them): 'auto' "
                                       "(MCP tools past 20), 'always' (every MCP tool) or 'never'.").tag(config=True)
    subagents = Bool(True, help="Offer the Agent tool (sub-agents, SPEC §12).").tag(config=True)
    offline_demo = Bool(True, help="With no API key, run the built-in offline demo instead of failing.").tag(config=True)
    context_window = Int(0, help="The model's context window in tokens (0: the API's answer, else the "
                                 "model's table entry).").tag(config=True)
    compact_at = Float(0.8, help="Compact the conversation before a request would use more than this "
                                 "share of the context window.").tag(config=True)
    save_sessions = Bool(True, help="Save conversations under .toolagent/sessions/ as they run, so "
                                    "%agent resume can continue them after a kernel restart.").tag(config=True)

    # @validate, not @observe: a refused value must never be stored (an observer runs after).
    @validate("mode")
    def _check_mode(self, proposal: dict[str, Any]) -> str:
        value = proposal["value"]
        if value and value not in MODES:
            raise TraitError(f"AgentMagics.mode must be one of {', '.join(MODES)}, not {value!r}")
        return value

    @validate("compact_at")
    def _check_compact_at(self, proposal: dict[str, Any]) -> float:
        if not 0 < proposal["value"] <= 1:
            raise TraitError(f"AgentMagics.compact_at must be a share of the window in (0, 1], not {proposal['value']}")
        return proposal["value"]

    @validate("context_window")
    def _check_context_window(self, proposal: dict[str, Any]) -> int:
        if proposal["value"] < 0:
            raise TraitError(f"AgentMagics.context_window must be 0 (automatic) or a number of tokens, "
                             f"not {proposal['value']}")
        return proposal["value"]

    @validate("max_turns")
    def _check_max_turns(self, proposal: dict[str, Any]) -> int:
        if proposal["value"] < 1:
            raise TraitError(f"AgentMagics.max_turns must be at least 1, not {proposal['value']}")
        return proposal["value"]

    @validate("approval_timeout")
    def _check_approval_timeout(self, proposal: dict[str, Any]) -> float:
        if proposal["value"] <= 0:
            raise TraitError(f"AgentMagics.approval_timeout must be a positive number of seconds, "
                             f"not {proposal['value']}")
        return proposal["value"]

    # --- %%agent ---------------------------------------------------------------------------
    @agent_cell_arguments
    # IPython types `cell_magic` as "a decorated function or, given a name, a decorator"
    @cell_magic("agent")  # type: ignore[arg-type]
    def agent_cell(self, line: str, cell: str) -> None:
        """Run a Claude tool-use loop in this kernel on the prompt in the cell body.

        The conversation continues across cells (``--new`` starts afresh). The model sees the
        built-in tools, your ``@tool`` functions and the functions named in ``--tools``; the
        runtime checks every call and asks you before anything with side effects.
        """
        preload.ready(self.shell)  # what %load_ext started loading, or why it could not
        prepared = prepare_cell(self, line, cell, can_await=False)
        kernel_run.run_blocking(lambda: execute_cell(prepared), prepared.abort)

    async def agent_cell_async(self, line: str, cell: str) -> None:
        """The kernel path: awaited as the cell's top-level ``await`` (see the transformer)."""
        __tracebackhide__ = True  # noqa: F841 - IPython hides this frame in tracebacks
        preload.ready(self.shell)
        prepared = prepare_cell(self, line, cell, can_await=True)
        await kernel_run.run_in_kernel(self.shell, execute_cell(prepared), prepared.abort)

    # --- %agent ------------------------------------------------------------------------------
    @line_magic("agent")  # type: ignore[arg-type]  # the same union as `cell_magic` above
    def agent_line(self, line: str) -> Any:
        """Inspect and manage conversations: %agent transcript | raw | schedule | check | reset
        | sessions | config | rules [remove RULE] | export PATH | help."""
        from .subcommands import run_subcommand

        return run_subcommand(self, line)
