"""A conversation that continues across cells, and the record of each run.

`Session.run` is the one entry point front ends use: it yields `AgentEvent`s while the run
goes on and leaves the transcript valid whatever happens (success, denial, abort, API error).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, AsyncIterator, Awaitable, Callable, Sequence

from ..errors import ConfigError
from .abort import AbortSignal
from .continuation import BASE_DELAY, MAX_CONTINUATIONS
from .events import AgentEvent, NoticeEvent, RunFinishedEvent
from .event_scrub import scrub_event
from .request_log import RequestLog
from .tool import PluginOptions
from .secrets import environment_scrubber
from .usage import Usage

if TYPE_CHECKING:
    from .deferred_tools import DeferMode
    from .hook_types import HookRunner
    from .model import Model
    from .permission_types import Approver, CanUseTool, RuleSurface
    from .run_plugins import RunPlugins
    from .tool import Tool

from .permission_types import PermissionMode

FLUSH_TIMEOUT = 0.5
"""Longest wait of ``ctx.flush_events()`` (seconds): a consumer that is busy elsewhere, or does
not draw anything, delays a tool by this much at most."""


@dataclass
class RunConfig:
    """Everything one run needs besides the transcript. Built by the magic or by `Agent`."""

    model: "Model"
    max_turns: int = 30
    max_tokens: int = 8192
    system: str | None = None
    """Extra instructions appended to the built-in system prompt (stable across requests)."""
    tool_provider: Callable[[], Sequence[Any]] | None = None
    """Called before *every* model request: the tools that exist right now (`Tool` objects,
    ``@tool`` functions; plain functions too when ``plugins`` can make tools of them)."""
    tool_sources: Sequence[Any] = ()
    """`ToolSource`s (e.g. MCP servers), each asked for its tools before *every* request."""
    tool_names: Sequence[str] | None = None
    """If set, only these tools are visible (``--tools``)."""
    mode: PermissionMode | None = None
    allow: Sequence[str] = ()
    deny: Sequence[str] = ()
    ask: Sequence[str] = ()
    approver: "Approver | None" = None
    interactive: bool = False
    approval_timeout: float = 600.0
    can_use_tool: "CanUseTool | None" = None
    """Replaces the rule engine entirely (tests, custom policies)."""
    hooks: "HookRunner | None" = None
    """None: the plug-ins' hooks (the ``@agent_hook`` functions registered in this process)."""
    plugins: "RunPlugins | None" = None
    """The rule engine, the hook registry and function tools, for what this config leaves unset
    (`core.run_plugins`); `Agent` and the magic pass `defaults.default_plugins()`. None: the
    bare core, which needs ``can_use_tool``, takes no rules or mode and runs no plain functions."""
    cwd: Path | None = None
    namespace: Any = None
    thinking: dict[str, Any] | None = None
    dry_run: bool = False
    max_result_chars: int = 50_000
    max_message_chars: int = 200_000
    context_window: int | None = None
    """Override of the model's context window in tokens (SPEC §14); None: the API's own answer,
    else the model's table entry."""
    compact_at: float = 0.8
    """Compact before a request that would use more than this share of the window."""
    compact_target: float = 0.5
    """Clearing old results is enough when it brings the request under this share."""
    compact_keep: int = 4
    """Assistant turns kept as they are by a compaction."""
    auto_compact: bool = True
    rule_surface: "RuleSurface" = "python"
    """``"cell"`` when the run comes from a ``%%agent`` cell: hints then name ``--allow``."""
    streaming_tools: bool = True
    """Run each tool call as soon as its input has streamed (`StreamingToolExecutor`); False:
    run the calls once the whole response has arrived."""
    defer_tools: "DeferMode" = "auto"
    """Which tools are sent by name only until ``ToolSearch`` loads them (SPEC §13)."""
    max_continuations: int = MAX_CONTINUATIONS
    """Automatic continuations after a response stream broke off, per run."""
    continuation_delay: float = BASE_DELAY
    """Seconds before the first continuation (doubled for each further one); tests lower it."""
    plugin_options: PluginOptions = field(default_factory=PluginOptions)
    """The plug-ins' own option objects (the built-in tools', a sub-agent's …), handed to every
    call as ``ctx.options.plugins``; the core carries them without reading them."""
    prompt_note: str | None = None
    """Facts about the world since the last run (e.g. what changed in the kernel), sent after the
    prompt in the same user message: per-cell facts never go into the system prompt, which must
    stay byte-identical for prompt caching. None or empty: the message is the prompt alone."""
    notices: Sequence[str] = ()
    """Problems found while preparing this run (a tool source that could not start …): shown
    as warnings at its start, recorded with its events."""


@dataclass
class RunRecord:
    """What one run did, for the teaching and debugging views."""

    prompt: str
    started_at: float = field(default_factory=time.time)
    finished_at: float | None = None
    events: list[AgentEvent] = field(default_factory=list)
    requests: RequestLog = field(default_factory=RequestLog)
    """Request bodies exactly as sent (JSON-ready once listed: ``list(record.requests)``); stored
    without repeating the transcript in every body (see `RequestLog`)."""
    responses: list[dict[str, Any]] = field(default_factory=list)
    """Assistant messages as received (after accumulation)."""
    request_ids: list[str | None] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    error: str | None = None
    subruns: list[Any] = field(default_factory=list)
    """Sub-agent runs started by this run's ``Agent`` calls (`agents.SubRun`), in start order."""

    def subrun_usage(self) -> Usage:
        """The usage of every sub-agent run below this one (their own sub-runs included)."""
        total = Usage()
        for sub in self.subruns:
            total = total + sub.record.usage
        return total

    @property
    def finished(self) -> RunFinishedEvent | None:
        for ev in reversed(self.events):
            if isinstance(ev, RunFinishedEvent):
                return ev
        return None


class Session:
    """A conversation: the transcript, the runs that built it, and session-scoped state
    (rules added by "Always allow", full outputs of cut results)."""

    def __init__(self, name: str = "default", *, cwd: Path | None = None, permissions: Any = None) -> None:
        from .file_state import FileReadState
        from .results import ToolOutputStore

        self.name = name
        self.cwd = Path(cwd) if cwd is not None else Path.cwd()
        self.messages: list[dict[str, Any]] = []
        self.runs: list[RunRecord] = []
        self.outputs = ToolOutputStore()
        self.permissions = permissions
        """The `permissions.PermissionContext`: rules by source, session grants, decisions."""
        from .context_window import ContextState

        self.context = ContextState()
        """The context window meter and the compactions (SPEC §14)."""
        self.store: Any = None
        """A `session_store.SessionStore` that saves the conversation as it goes (None: not saved)."""
        self.resumed: Any = None
        """How this session was loaded from a saved file (`sessions.ResumeReport`), or None."""
        self._store_failed = False
        self.scrubber = environment_scrubber()
        """The protected values (SPEC §5.6), read from the environment now; each run adds the
        credential its model uses. Every tool result and emitted event passes through it."""
        self.file_reads = FileReadState()
        """Files this conversation has read, for the read-before-edit rule (SPEC §10)."""
        self.loaded_tools: set[str] = set()
        """Deferred tools loaded by ``ToolSearch``: sent with their schemas from then on (SPEC §13)."""
        from .pairing import IncrementalNormalizer

        self.normalizer = IncrementalNormalizer()
        """Normalises and checks the transcript for each request, redoing only what was appended
        since the last one; it notices any edit of ``messages`` by itself (`pairing.incremental`)."""

    # --- views ---------------------------------------------------------------------------
    def check_pairing(self) -> list[Any]:
        from .pairing import check_pairing, normalize_messages_for_api

        return check_pairing(normalize_messages_for_api(self.messages))

    def export(self, path: str | Path) -> Path:
        """Write the transcript and the runs' summaries as JSON. Holds no API key: request
        bodies and messages never contain one (the key travels only in HTTP headers)."""
        path = Path(path)
        data = {
            "session": self.name,
            "messages": self.messages,
            "runs": [
                {
                    "prompt": r.prompt,
                    "started_at": r.started_at,
                    "finished_at": r.finished_at,
                    "finish_reason": r.finish_reason,
                    "error": r.error,
                    "request_ids": r.request_ids,
                    "usage": vars(r.usage),
                }
                for r in self.runs
            ],
        }
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=repr))
        return path

    def reset(self) -> None:
        from .context_window import ContextState

        self.messages.clear()
        self.runs.clear()
        self.context = ContextState()
        self.file_reads.clear()  # a model that forgot the conversation has read nothing
        if self.store is not None:
            self.store.reset(self)

    # --- saving --------------------------------------------------------------------------
    def save(self) -> str | None:
        """Hand the session to its store; the text of a first failure (then saving stops)."""
        if self.store is None or self._store_failed:
            return None
        try:
            self.store.sync(self)
        except Exception as exc:  # a failing disk must not end the run
            self._store_failed = True
            return f"The session could not be saved ({type(exc).__name__}: {exc}); saving is off for it now."
        return None

    def store_compaction(self, compaction: Any) -> None:
        if self.store is not None and not self._store_failed:
            try:
                self.store.sync(self)
                self.store.compacted(self, compaction)
            except Exception:
                self._store_failed = True

    # --- running -------------------------------------------------------------------------
    async def run(self, prompt: str, config: RunConfig, *, abort: AbortSignal | None = None) -> AsyncIterator[AgentEvent]:
        """Run ``prompt``; yield events as they happen; the last one is `RunFinishedEvent`.

        Rule syntax and settings-file errors are raised before anything is sent.

        An event counts as handled when the consumer asks for the next one (its ``async for``
        body has run for it: that is where a front end draws it). ``ctx.flush_events()`` waits
        for that, so a tool that is about to block the loop's thread can let the front end show
        its card first; every consumer gets this without doing anything.
        """
        import asyncio

        from .query import drive_run

        abort = abort or AbortSignal()
        perms, flag_rules, mode = self._run_permissions(config)
        can_use_tool = self._can_use_tool(config)
        hooks = config.hooks
        if hooks is None and config.plugins is not None:
            hooks = config.plugins.hooks()
        record = RunRecord(prompt=prompt)
        self.runs.append(record)
        queue: asyncio.Queue[AgentEvent] = asyncio.Queue()

        self.scrubber = self.scrubber.with_values(_model_credentials(config.model))

        def emit(event: AgentEvent) -> None:
            event = scrub_event(event, self.scrubber)
            if event.kind in ("request_finished", "run_finished"):  # saved as the run goes
                problem = self.save()
                if problem:
                    notice = NoticeEvent(level="warning", text=problem)
                    record.events.append(notice)
                    queue.put_nowait(notice)
            record.events.append(event)
            queue.put_nowait(event)

        async def flush_events() -> None:
            try:
                await asyncio.wait_for(queue.join(), FLUSH_TIMEOUT)
            except asyncio.TimeoutError:
                pass

        # e.g. a project settings file that widens permissions; a tool source that could not start
        for text in [*_take_notices(perms), *config.notices]:
            emit(NoticeEvent(level="warning", text=text))
        base_mode = perms.base_mode if perms is not None else None
        if mode is not None:
            perms.base_mode = mode
        driver = asyncio.ensure_future(drive_run(
            self, prompt, config, abort, emit,
            lambda: self._build_context(config, abort, emit, can_use_tool, hooks, flush_events),
        ))
        getter: asyncio.Future[AgentEvent] | None = None
        try:
            while True:
                getter = asyncio.ensure_future(queue.get())
                await asyncio.wait({getter, driver}, return_when=asyncio.FIRST_COMPLETED)
                if getter.done():
                    event = getter.result()
                    yield event
                    queue.task_done()
                    if isinstance(event, RunFinishedEvent):
                        break
                    continue
                getter.cancel()
                while not queue.empty():
                    event = queue.get_nowait()
                    yield event
                    queue.task_done()
                    if isinstance(event, RunFinishedEvent):
                        return
                driver.result()  # re-raise a crash of the driver itself
                return
        finally:
            if getter is not None and not getter.done():
                getter.cancel()
            if not driver.done():
                abort.abort("interrupted")
                driver.cancel()
                try:
                    await asyncio.shield(asyncio.gather(driver, return_exceptions=True))
                except BaseException:
                    pass
            if perms is not None:
                for entry in flag_rules:  # a cell's --allow/--deny/--ask last for that cell only
                    if entry in perms.rules:
                        perms.rules.remove(entry)
                perms.base_mode = base_mode

    def _run_permissions(self, config: RunConfig) -> Any:
        """The session's rule state with this run's flags on top.

        Created on first use (so an invalid ``.toolagent/settings.json`` is reported when a run
        starts, before anything is sent). Raises `RuleSyntaxError` / `SettingsFileError`.
        Without plug-ins there is no rule engine to give rules or a mode to (`ConfigError`).
        """
        plugins = config.plugins
        if plugins is None:
            if config.mode or config.allow or config.deny or config.ask:
                raise ConfigError("rules and a permission mode need the permission plug-in: "
                                  "pass RunConfig(plugins=...) (Agent does)")
            return self.permissions, [], None
        if self.permissions is None:
            self.permissions = plugins.permission_state(Path(config.cwd or self.cwd))
        perms = self.permissions
        mode = plugins.parse_mode(config.mode) if config.mode else None
        added = perms.add_rules({"allow": config.allow, "deny": config.deny, "ask": config.ask}, source="flag")
        return perms, added, mode

    def _can_use_tool(self, config: RunConfig) -> "CanUseTool":
        if config.can_use_tool is not None:
            return config.can_use_tool
        if config.plugins is None:
            raise ConfigError("a run needs a permission callable: pass RunConfig(can_use_tool=...) "
                              "or RunConfig(plugins=...) (Agent does)")
        return config.plugins.can_use_tool(config)

    def _build_context(self, config: RunConfig, abort: AbortSignal, emit: Callable[[AgentEvent], None],
                       can_use_tool: "CanUseTool", hooks: "HookRunner | None",
                       flush_events: Callable[[], Awaitable[None]]) -> Any:
        from .read_tool_output import ReadToolOutput
        from .tool import ToolOptions, ToolPool, ToolUseContext, carried_tool

        provided = config.tool_provider() if config.tool_provider is not None else []
        tools = [carried_tool(t) or _as_tool(t, config) for t in provided]
        for source in config.tool_sources:
            tools.extend(source.tools())
        pool = ToolPool([*tools, ReadToolOutput()])
        if config.tool_names is not None:
            keep = set(config.tool_names) | {"ReadToolOutput"}
            pool = ToolPool(t for t in pool if t.name in keep)
        if config.plugins is not None:
            pool = config.plugins.visible_tools(pool, self.permissions)
        from .deferred_tools import split_deferred

        pool, deferred = split_deferred(pool, config.defer_tools, self.loaded_tools)
        options = ToolOptions(
            cwd=Path(config.cwd) if config.cwd is not None else Path(getattr(self.permissions, "cwd", None) or self.cwd),
            namespace=config.namespace,
            max_result_chars=config.max_result_chars,
            max_message_chars=config.max_message_chars,
            rule_surface=config.rule_surface,
            plugins=config.plugin_options,
            run=config,
        )
        return ToolUseContext(
            tools=pool, can_use_tool=can_use_tool, abort=abort, messages=list(self.messages),
            permissions=self.permissions, hooks=hooks, options=options, outputs=self.outputs,
            emit=emit, session=self, flush_events=flush_events, scrubber=self.scrubber, file_reads=self.file_reads,
            deferred=deferred,
        )


def _as_tool(value: Any, config: RunConfig) -> "Tool":
    """A plain function as a tool: the tools plug-in knows how (the bare core does not)."""
    if config.plugins is None:
        raise ConfigError(f"{value!r} is not a Tool; without RunConfig(plugins=...) a tool provider "
                          "must return Tool objects or @tool functions")
    return config.plugins.as_tool(value)


def _take_notices(perms: Any) -> list[str]:
    """Announcements the permission state holds for the person (shown once per session)."""
    take = getattr(perms, "take_notices", None)
    return list(take()) if callable(take) else []
def _model_credentials(model: Any) -> tuple[str | None, ...]:
    """The credential a model authenticates with, if it says (``protected_values()``)."""
    values = getattr(model, "protected_values", None)
    try:
        return tuple(values()) if callable(values) else ()
    except Exception:  # a model that cannot tell still has the environment's values protected
        return ()

