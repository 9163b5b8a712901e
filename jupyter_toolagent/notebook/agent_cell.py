"""One ``%%agent`` cell: everything is prepared and checked first, then the run is driven.

`prepare_cell` does all that can fail because of the person's input — options, rules, the
``--script`` variable, ``--tools`` names, the settings file, the model choice — and raises one
`UsageError`, so a mistake sends nothing and runs nothing. `execute_cell` feeds the run's
events to the display and always finishes it (success, error, interrupt). How the coroutine is
awaited (kernel, ipykernel 6 pump, terminal loop) is `kernel_run`'s business, not this module's.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence, cast

from IPython.core.error import UsageError

from ..core.abort import AbortSignal
from ..core.events import NoticeEvent
from ..core.session import RunConfig, Session
from ..defaults import default_plugins
from ..core.tool import PluginOptions
from ..errors import AgentRunFailed, ConfigError
from ..tools.function_tool import as_tool
from .headless import Approvals, choose_approvals
from .mcp_servers import prepare_servers, servers_for
from .offline import ModelChoice, choose_model, resolve_model_name
from .options import CellOptions, check_mode, check_rule_tools, check_rules, parse_cell_options, rule_sources
from .sessions import registry_for

if TYPE_CHECKING:
    from ..core.deferred_tools import DeferMode
    from ..core.tool import Tool
    from ..tools.options import BuiltinToolOptions
    from .magics import AgentMagics


FAILED_REASONS = frozenset({"api_error", "error"})


@dataclass
class PreparedCell:
    prompt: str
    options: CellOptions
    session: Session
    model: ModelChoice
    approvals: Approvals
    config: RunConfig
    abort: AbortSignal
    view: Any
    notices: list[str]
    shell: Any = None


def prepare_cell(magics: "AgentMagics", line: str, body: str, *, can_await: bool) -> PreparedCell:
    """Check the cell and build its run; raise `UsageError` (one line) on any mistake.

    ``can_await`` is False when the cell runs synchronously inside a kernel (no input
    transformer, e.g. ``%autoawait off``): clicks cannot reach it then, so asks go to policy.
    """
    shell = magics.shell
    options = parse_cell_options(magics.agent_cell, line)
    prompt = body.strip()
    if not prompt:
        raise UsageError("%%agent needs a prompt in the cell body (see %%agent?)")
    mode = options.mode or (check_mode(magics.mode, "AgentMagics.mode") if magics.mode else None)
    check_rules(allow=magics.allow, deny=magics.deny, ask=magics.ask, origin="AgentMagics.")
    tool_provider = make_tool_provider(shell, options.tools)
    if options.tools:
        check_tool_names(tool_provider, options.tools)

    notices: list[str] = []
    requested = options.interactive if options.interactive is not None else magics.interactive
    approvals, note = choose_approvals(shell, requested)
    if approvals == "widgets" and not can_await:
        approvals, note = "policy", ("this cell ran without top-level await (is %autoawait off?), so "
                                     "buttons cannot be clicked: asks are denied by policy")
    if note:
        notices.append(note)

    model = choose_model(resolve_model_name(options.model, magics.model), script_var=options.script,
                         user_ns=shell.user_ns, offline_demo=magics.offline_demo)
    if model.notice:
        notices.insert(0, model.notice)

    session = use_session(magics, options.session, new=options.new, notices=notices)
    load_permissions(session)
    notices.extend(check_rule_tools(tool_names_now(tool_provider), rule_sources(options, magics, session.permissions)))
    abort = AbortSignal()
    timeout = options.approval_timeout if options.approval_timeout is not None else magics.approval_timeout
    view = make_view(abort, approvals=approvals, session=session, timeout=timeout, model=model.model.model_name)
    approver = None
    if approvals == "widgets":
        approver = view.approver
    elif approvals == "terminal":
        from .terminal import TerminalApprover

        approver = TerminalApprover(abort, timeout)

    config = RunConfig(
        model=model.model,
        max_turns=options.max_turns or magics.max_turns,
        system="\n\n".join(s for s in (magics.system, options.system) if s) or None,
        tool_provider=tool_provider,
        tool_names=options.tools,
        mode=mode,  # type: ignore[arg-type]  # one of MODES: the option parser checked it
        allow=[*magics.allow, *options.allow],
        deny=[*magics.deny, *options.deny],
        ask=[*magics.ask, *options.ask],
        approver=approver,
        interactive=approver is not None,
        approval_timeout=timeout,
        cwd=None,  # the kernel's current directory at each request (the permission context follows it)
        namespace=shell.user_ns,
        dry_run=options.dry_run,
        context_window=magics.context_window or None,
        compact_at=magics.compact_at,
        rule_surface="cell",
        defer_tools=cast("DeferMode", magics.defer_tools),  # a traitlets Enum of exactly these values
        plugin_options=PluginOptions(kernel_tool_options(shell)),
        plugins=default_plugins(),
        prompt_note=kernel_change_note(shell, session),
        tool_sources=[servers_for(shell), *subagent_sources(magics, model.model, tool_provider, session)],
    )
    return PreparedCell(prompt, options, session, model, approvals, config, abort, view, notices, shell)


def subagent_sources(magics: Any, model: Any, tool_provider: Any, session: Any) -> list[Any]:
    """The ``Agent`` tool, unless ``%config AgentMagics.subagents = False``."""
    if not magics.subagents:
        return []
    from ..agents import SubagentSource

    return [SubagentSource.for_parent(
        lambda: model, lambda: [as_tool(t) for t in tool_provider()] if tool_provider is not None else [], session)]


async def execute_cell(cell: PreparedCell) -> None:
    """Drive the run, feeding every event to the view; the view is finished whatever happens."""
    view = cell.view
    error: BaseException | None = None
    finished: Any = None
    try:
        view.show()
        for text in cell.notices:
            view.handle(NoticeEvent(level="warning", text=text))
        for text in await prepare_servers(cell, cell.shell):
            view.handle(NoticeEvent(level="warning", text=text))
        async for event in cell.session.run(cell.prompt, cell.config, abort=cell.abort):
            view.handle(event)
            if event.kind == "run_finished":
                finished = event
    except BaseException as exc:
        error = exc
        raise
    finally:
        if not cell.config.dry_run:
            agent_looked(cell.config.namespace, cell.config.plugin_options, cell.session)
        view.finish(error)
        if cell.model.owned:
            close = getattr(cell.model.model, "aclose", None)
            if close is not None:
                try:
                    await close()
                except Exception:  # closing a client must not hide the run's outcome
                    pass
    if finished is not None and finished.reason in FAILED_REASONS:
        raise AgentRunFailed((finished.error or finished.reason).splitlines()[0])


def use_session(magics: "AgentMagics", name: str | None, *, new: bool, notices: list[str]) -> Session:
    """The cell's session; a saved one named by ``--session`` is resumed (its report shown)."""
    from ..errors import SessionFileError

    registry = registry_for(magics.shell)
    registry.save = bool(magics.save_sessions)
    registry.last_resume = None
    try:
        session = registry.use(name, new=new)
    except SessionFileError as exc:
        raise UsageError(str(exc)) from None
    if registry.last_resume is not None:
        notices.append(registry.last_resume.summary())
    return session


def load_permissions(session: Session) -> None:
    """Read the project settings file now, so a broken one is one line before anything runs."""
    if session.permissions is not None:
        return
    from ..permissions import PermissionContext

    try:
        session.permissions = PermissionContext.from_sources(cwd=None)  # follows %cd
    except ConfigError as exc:
        raise UsageError(" ".join(str(exc).split())) from None


def make_view(abort: AbortSignal, *, approvals: Approvals, session: Session, timeout: float, model: str) -> Any:
    """The live display: `RunDisplay` in a kernel, `TextDisplay` in a terminal."""
    if approvals == "terminal":
        from .text_display import TextDisplay

        return TextDisplay(abort, interactive=True, session=session, model=model)
    from .display import RunDisplay

    kwargs: dict[str, Any] = {"interactive": approvals == "widgets", "session": session}
    if "approval_timeout" in inspect.signature(RunDisplay).parameters:
        kwargs["approval_timeout"] = timeout
    return RunDisplay(abort, **kwargs)


def make_tool_provider(shell: Any, tool_names: Sequence[str] | None) -> Callable[[], list["Tool"]]:
    """Tools as they are *now*: built-ins, ``@tool`` functions of the namespace, and plain
    functions named in ``--tools``. Called before every model request, so a function
    redefined in another cell is what the next request sees."""
    from ..tools.pool import tools_now

    def provide() -> list["Tool"]:
        return tools_now(namespace=shell.user_ns, named_functions=tool_names or ())

    return provide


def tool_names_now(provide: Callable[[], list["Tool"]]) -> set[str]:
    """The names of the tools the cell would offer now (``ReadToolOutput`` is always there)."""
    try:
        return {t.name for t in provide()} | {"ReadToolOutput"}
    except ConfigError as exc:  # a --tools function that cannot become a tool
        raise UsageError(f"--tools: {' '.join(str(exc).split())}") from None


def check_tool_names(provide: Callable[[], list["Tool"]], names: Sequence[str]) -> None:
    available = tool_names_now(provide)
    unknown = [n for n in names if n not in available]
    if unknown:
        raise UsageError(f"--tools: unknown tool {', '.join(map(repr, unknown))} "
                         f"(neither a tool nor a function in the notebook; tools: {', '.join(sorted(available))})")


def kernel_tool_options(shell: Any) -> BuiltinToolOptions:
    """The kernel's pieces the built-in tools use: the shell's runner and hidden names, and the
    notebook-awareness pieces (SPEC §15) — cell history, cell inserter, undo store."""
    from ..tools.options import BuiltinToolOptions
    from .cell_history import history_for
    from .cell_inserter import CellInserter
    from .python_runner import IPythonRunner
    from .undo import undo_store_for

    return BuiltinToolOptions(python_runner=IPythonRunner(shell), hidden_names=frozenset(getattr(shell, "user_ns_hidden", {}) or ()),
                              cell_history=history_for(shell), cell_inserter=CellInserter(shell),
                              undo_store=undo_store_for(shell))


def kernel_change_note(shell: Any, session: Session) -> str | None:
    """What changed in the kernel since this session's previous agent cell (None: nothing)."""
    from .cell_history import history_for
    from .kernel_changes import watch_for

    history = history_for(shell)
    previous = history.last_error() if history is not None else None
    hidden = frozenset(getattr(shell, "user_ns_hidden", {}) or ())  # ListVariables' rule (kernel_tool_options)
    return watch_for(session).note(shell.user_ns, hidden, previous_error=previous)


def agent_looked(namespace: Any, plugin_options: PluginOptions, session: Session) -> None:
    """The end of an agent cell: the next note compares with the kernel as it is now."""
    from .kernel_changes import watch_for

    if isinstance(namespace, dict):
        from ..tools.options import BuiltinToolOptions

        watch_for(session).looked(namespace, plugin_options.get(BuiltinToolOptions).hidden_names)
