"""`Agent`: the engine without magics, for scripts, tests and notebooks alike."""

from __future__ import annotations

import dataclasses
import inspect
import os
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Iterable, Mapping, Never, Sequence

from .core.abort import AbortSignal
from .core.continuation import BASE_DELAY, MAX_CONTINUATIONS
from .core.deferred_tools import DeferMode
from .core.events import AgentEvent, RunFinishedEvent
from .core.hook_types import HookRunner
from .core.model import Model
from .core.permission_types import Approver, CanUseTool, PermissionMode
from .core.session import RunConfig, RunRecord, Session
from .core.sync_run import run_to_completion
from .core.tool import PluginOptions, Tool
from .core.usage import Usage
from .defaults import default_plugins
from .tools.function_tool import as_tool
from .errors import UnknownKeywordError

DEFAULT_MODEL = "claude-sonnet-5-5"


def _mcp_servers(servers: Mapping[str, Any] | None, cwd: Path) -> Any:
    """The agent's MCP servers (`McpServers`; the ``mcp`` SDK itself loads only once one starts)."""
    from .mcp import McpServers

    return McpServers.from_mapping(servers or {}, source="agent", cwd=cwd)


def _keywords(function: Callable[..., Any]) -> list[str]:
    """The keyword arguments ``function`` takes by name (for the did-you-mean of a typo)."""
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return [p.name for p in inspect.signature(function).parameters.values() if p.kind in kinds and p.name != "self"]


def default_model_name() -> str:
    return os.environ.get("TOOLAGENT_MODEL") or DEFAULT_MODEL


class Agent:
    """A session plus the settings of its runs.

    ``model`` is a `Model` (``ScriptedModel``, ``AnthropicModel``) or a model name for
    `AnthropicModel`. ``tools`` are `Tool` objects or plain functions; ``tool_provider`` (called
    before every request) can supply tools that change between requests.
    ``context_window`` overrides the model's window in tokens; the conversation is compacted
    before a request would use more than ``compact_at`` of it (SPEC §14).
    ``subagents`` offers the ``Agent`` tool (SPEC §12), as a ``%%agent`` cell does; pass False
    to leave it out. ``streaming_tools``, ``defer_tools``, ``max_continuations`` and ``continuation_delay`` are the `RunConfig` fields
    of the same names; ``plugin_options`` are the plug-ins' option objects (e.g.
    ``tools.options.BuiltinToolOptions(grep_backend="python")``). An unknown keyword raises
    `UnknownKeywordError` naming the one it most likely meant.
    """

    def __init__(
        self,
        model: Model | str | None = None,
        *,
        tools: Iterable[Tool | Callable[..., Any]] = (),
        tool_provider: Callable[[], Sequence[Any]] | None = None,
        builtin_tools: bool = False,
        namespace: dict[str, Any] | None = None,
        mode: PermissionMode | None = None,
        allow: Sequence[str] = (),
        deny: Sequence[str] = (),
        ask: Sequence[str] = (),
        approver: Approver | None = None,
        hooks: HookRunner | None = None,
        can_use_tool: CanUseTool | None = None,
        system: str | None = None,
        max_turns: int = 30,
        max_tokens: int = 8192,
        cwd: str | Path | None = None,
        session: Session | None = None,
        context_window: int | None = None,
        compact_at: float = 0.8,
        mcp_servers: Mapping[str, Any] | None = None,
        subagents: bool = True,
        streaming_tools: bool = True,
        defer_tools: DeferMode = "auto",
        max_continuations: int = MAX_CONTINUATIONS,
        continuation_delay: float = BASE_DELAY,
        plugin_options: Iterable[object] = (),
        **unknown: Never,
    ) -> None:
        if unknown:
            raise UnknownKeywordError("Agent()", list(unknown), _keywords(Agent.__init__))
        if model is None or isinstance(model, str):
            from .models.anthropic import AnthropicModel

            model = AnthropicModel(model=model or default_model_name())
        self.model: Model = model
        self._static_tools = [as_tool(t) for t in tools]
        self._tool_provider = tool_provider
        self._builtin = builtin_tools
        self.namespace = namespace
        self.session = session or Session(cwd=Path(cwd) if cwd else None)
        self.mcp = _mcp_servers(mcp_servers, self.session.cwd)
        """The MCP servers (`jupyter_toolagent.mcp.McpServers`): ``mcp_servers`` and the project's."""
        self.config = RunConfig(
            model=model, max_turns=max_turns, max_tokens=max_tokens, system=system, mode=mode,
            allow=allow, deny=deny, ask=ask, approver=approver, interactive=approver is not None,
            hooks=hooks, can_use_tool=can_use_tool, cwd=Path(cwd) if cwd else None, namespace=namespace,
            tool_provider=self._provide_tools, context_window=context_window, compact_at=compact_at,
            streaming_tools=streaming_tools, defer_tools=defer_tools, max_continuations=max_continuations,
            continuation_delay=continuation_delay, plugin_options=PluginOptions(*plugin_options),
            tool_sources=[self.mcp, *self._subagent_sources(subagents, max_tokens)], plugins=default_plugins(),
        )
        self._check_rule_tools({"allow": allow, "deny": deny, "ask": ask})

    def _subagent_sources(self, enabled: bool, max_tokens: int) -> list[Any]:
        """The ``Agent`` tool (SPEC §12), unless ``subagents=False``."""
        if not enabled:
            return []
        from .agents import SubagentSource

        return [SubagentSource.for_parent(lambda: self.config.model, lambda: [*map(as_tool, self._provide_tools()), *self.mcp.tools()],
                                          self.session, max_tokens=max_tokens)]

    def _check_rule_tools(self, rules: dict[str, Sequence[str]]) -> None:
        """Refuse a rule that names no tool (a misspelled deny rule would never apply). With a
        namespace or a tool provider more tools may appear later, so then only a likely typo
        of a known tool is refused."""
        from .core.read_tool_output import ReadToolOutput
        from .errors import ConfigError
        from .permissions.rules import parse_rule, tool_name_problem

        known = {t.name for t in self._builtin_and_static()} | {ReadToolOutput.name}
        complete = self._tool_provider is None and self.namespace is None
        for behavior, texts in rules.items():
            for text in texts:
                problem = tool_name_problem(parse_rule(text), known)
                if problem is not None and (complete or problem.meant is not None):
                    raise ConfigError(f"{behavior}: {problem.message}")

    def _builtin_and_static(self) -> list[Any]:
        if not self._builtin:
            return list(self._static_tools)
        from .tools import builtin_tools

        return [*builtin_tools(), *self._static_tools]

    def _provide_tools(self) -> list[Any]:
        from .tools.pool import tools_now

        provided = self._tool_provider() if self._tool_provider is not None else ()
        return tools_now(builtin=self._builtin, namespace=self.namespace, also=[*self._static_tools, *provided])

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.session.messages

    @property
    def usage(self) -> Usage:
        total = Usage()
        for run in self.session.runs:
            total = total + run.usage
        return total

    async def stream(self, prompt: str, *, abort: AbortSignal | None = None) -> AsyncIterator[AgentEvent]:
        """Yield the run's events (see `jupyter_toolagent.core.events`)."""
        problems = await self._start_mcp_servers()
        config = dataclasses.replace(self.config, notices=problems) if problems else self.config
        async for event in self.session.run(prompt, config, abort=abort):
            yield event

    async def run(self, prompt: str, *, abort: AbortSignal | None = None,
                  on_event: Callable[[AgentEvent], None] | None = None) -> RunRecord:
        """Run ``prompt`` to the end and return its record (events, usage, finish reason)."""
        async for event in self.stream(prompt, abort=abort):
            if on_event is not None:
                on_event(event)
        return self.session.runs[-1]

    async def _run_on_own_loop(self, prompt: str, **kw: Any) -> RunRecord:
        """`run` on a loop that ends with it: the model's client for this loop is closed before
        the loop is, or its open connections would be closed by the garbage collector on a dead
        loop ("Event loop is closed", unclosed-transport warnings)."""
        try:
            return await self.run(prompt, **kw)
        finally:
            aclose = getattr(self.model, "aclose", None)
            if aclose is not None:
                await aclose()

    async def _start_mcp_servers(self) -> list[str]:
        """MCP servers start lazily, before the first run that can use them; a server that
        cannot start is one notice, and the run goes on without it."""
        from .permissions import PermissionContext

        if self.session.permissions is None:
            self.session.permissions = PermissionContext.from_sources(cwd=self.config.cwd or self.session.cwd)
        problems = await self.mcp.prepare_headless(
            self.config.cwd or self.session.cwd, self.session.permissions.settings,
            [*self.config.allow, *(str(e.rule) for e in self.session.permissions.entries("allow"))])
        return problems

    def close(self) -> None:
        """Stop this agent's MCP servers (their processes, by process group)."""
        self.mcp.close()

    async def aclose(self) -> None:
        await self.mcp.aclose()

    def run_sync(self, prompt: str, *, abort: AbortSignal | None = None,
                 on_event: Callable[[AgentEvent], None] | None = None, **unknown: Never) -> RunRecord:
        """`run` for code that is not async. Inside a running event loop (a notebook cell) the
        run goes to a fresh loop in a worker thread, so it works there too."""
        if unknown:
            raise UnknownKeywordError("Agent.run_sync()", list(unknown), _keywords(Agent.run_sync))
        return run_to_completion(lambda: self._run_on_own_loop(prompt, abort=abort, on_event=on_event))

    @property
    def last_finish(self) -> RunFinishedEvent | None:
        return self.session.runs[-1].finished if self.session.runs else None
