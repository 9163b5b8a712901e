"""The tool abstraction (SPEC §3) and the context every call sees.

A `Tool` describes itself (name, schema, safety) and performs a call. Everything that decides
*whether* a call happens — lookup, validation, hooks, permissions — lives in `run_tool_use`, not
in tools. Defaults fail closed: a tool is not concurrency-safe and not read-only unless it says so.

`ToolUseContext` is rebuilt for every model request (see `query`), so a function defined or
redefined between requests is exactly what the next request sees.
"""

from __future__ import annotations

import copy
import dataclasses
import weakref
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import (TYPE_CHECKING, Any, Awaitable, Callable, Generic, Iterable, Iterator, Literal, Mapping,
                    Protocol, Sequence, TypeVar, cast, runtime_checkable)

from pydantic import BaseModel, ConfigDict

from .abort import AbortSignal
from .secrets import SecretScrubber, environment_scrubber
from .file_state import FileReadState
from .permission_types import PermissionDecision, PermissionSubject, RuleSurface

if TYPE_CHECKING:
    from .events import AgentEvent
    from .hook_types import HookRunner
    from .permission_types import CanUseTool, PermissionState
    from .results import ToolOutputStore
    from .session import Session
    from .session import RunConfig

Content = str | list[dict[str, Any]]
_SCHEMAS: "weakref.WeakKeyDictionary[type[BaseModel], dict[str, Any]]" = weakref.WeakKeyDictionary()
ContextModifier = Callable[["ToolUseContext"], "ToolUseContext"]
InputT = TypeVar("InputT", bound=BaseModel)
"""A tool's input model: `parse_input` returns it and every method that sees the call takes it."""
ModelT = TypeVar("ModelT", bound=BaseModel)


@dataclass
class ToolResult:
    """What a tool's `call` returns when plain output is not enough.

    ``content`` is a string or a list of API content blocks (text / image). ``context_modifier``
    changes the context seen by later calls (applied per SPEC §4.1 ordering).
    """

    content: Any = ""
    is_error: bool = False
    context_modifier: ContextModifier | None = None


class Progress:
    """Handed to `Tool.call`; reports progress that is displayed, never sent to the model."""

    def __init__(self, emit: Callable[[str, str, float | None], None] | None = None,
                 label: Callable[[str], None] | None = None, *, tool_use_id: str = "") -> None:
        self._emit = emit
        self._label = label
        self.tool_use_id = tool_use_id
        """The id of the call being run (a sub-agent tags its forwarded events with it)."""

    def label(self, text: str) -> None:
        """A short line about how the call runs (e.g. its sandbox), shown on its card."""
        if self._label is not None:
            self._label(text)

    def __call__(self, message: str = "", fraction: float | None = None, *, output: str = "") -> None:
        if self._emit is not None:
            self._emit(message, output, fraction)


class Tool(ABC, Generic[InputT]):
    """Base class of every tool. Subclasses set the class attributes and implement `call`.

    Generic over the input model (``class Read(Tool[ReadInput])``): `run_tool_use` hands each
    method the instance `parse_input` produced, so a tool's methods take its own model."""

    name: str = ""
    aliases: tuple[str, ...] = ()
    description: str = ""
    input_model: type[InputT]
    interrupt_behavior: Literal["cancel", "block"] = "cancel"
    max_result_chars: int | None = None
    """Per-tool override of the result size budget (None: the session's budget)."""
    rule_group: str | None = None
    """A second name whole-tool rules match (``mcp__server`` for every tool of an MCP server)."""

    # --- schema -----------------------------------------------------------------------
    def input_schema(self) -> dict[str, Any]:
        """The JSON schema of the input model, built once per model class (every request sends
        every tool's schema; rebuilding them cost milliseconds per request)."""
        schema = _SCHEMAS.get(self.input_model)
        if schema is None:
            schema = _SCHEMAS[self.input_model] = self.input_model.model_json_schema()
        return copy.deepcopy(schema)

    def to_api_schema(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema()}

    def parse_input(self, raw: Any) -> InputT:
        """Stage 3 (schema validation): the raw input as this tool's input model. Raises
        pydantic's ``ValidationError`` — or `validation.InputSchemaError`, for a tool whose
        schema is plain JSON Schema (an MCP server's) — and both become field-level errors."""
        return strict_model(self.input_model).model_validate(raw)

    # --- safety (fail closed) -----------------------------------------------------------
    def is_concurrency_safe(self, input: InputT) -> bool:
        return False

    def is_read_only(self, input: InputT) -> bool:
        return False

    # --- checks -------------------------------------------------------------------------
    async def validate_input(self, input: InputT, ctx: "ToolUseContext") -> str | None:
        """Semantic checks beyond the schema. Return an error message for the model, or None."""
        return None

    async def check_permissions(self, input: InputT, ctx: "ToolUseContext") -> PermissionDecision:
        """The tool's own opinion (§5.3 step 3). Raising counts as passthrough."""
        return PermissionDecision.passthrough()

    def observable_input(self, input: InputT, ctx: "ToolUseContext") -> dict[str, Any]:
        """What hooks and permission checks see: a copy with derived fields filled in."""
        return input.model_dump(mode="json")

    def permission_subject(self, input: InputT, ctx: "ToolUseContext") -> PermissionSubject | None:
        """What the call touches, for content-specific rules (files, shell commands)."""
        return None

    # --- the call -----------------------------------------------------------------------
    @abstractmethod
    async def call(self, input: InputT, ctx: "ToolUseContext", progress: Progress) -> Any:
        """Perform the call. Return a `ToolResult`, a string, content blocks, or any object
        (mapped by `map_output`). Raise to fail: the exception becomes an error result."""

    def map_output(self, output: Any) -> Content:
        """Map a plain return value to content; see `results.to_content` for the default."""
        from .results import to_content

        return to_content(output)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


TOOL_ATTR = "__toolagent_tool__"
"""Where a decorated function carries its `Tool` (``@tool`` sets it), so the function itself
can be given wherever a tool is, and the core finds the tool without knowing the decorator."""


def carried_tool(value: Any) -> "Tool | None":
    """``value`` if it is a `Tool`, the `Tool` it carries under `TOOL_ATTR`, else None."""
    if isinstance(value, Tool):
        return value
    carried = getattr(value, TOOL_ATTR, None)
    return carried if isinstance(carried, Tool) else None


_STRICT_MODELS: "weakref.WeakKeyDictionary[type[BaseModel], type[BaseModel]]" = weakref.WeakKeyDictionary()


def strict_model(model: type[ModelT]) -> type[ModelT]:
    """The same input model with unexpected parameters refused: a parameter the model made up
    must be reported to it, not silently dropped (pydantic's default is to ignore extras)."""
    if model.model_config.get("extra") == "forbid":
        return model
    strict = _STRICT_MODELS.get(model)
    if strict is None:
        config = ConfigDict(**{**model.model_config, "extra": "forbid"})
        strict = type(model.__name__, (model,), {"model_config": config, "__module__": model.__module__})
        _STRICT_MODELS[model] = strict
    return cast("type[ModelT]", strict)  # built above as a subclass of `model`


@runtime_checkable
class ToolSource(Protocol):
    """Something that supplies tools, asked afresh before every model request (the user's
    ``@tool`` functions, each MCP server …): what it returns *now* is what the next request
    carries, so a server connected since the last request is not missed and one that exited
    is not offered."""

    def tools(self) -> Sequence[Tool]: ...


class ToolPool:
    """The tools visible to the model for one request, in a deterministic order (sorted by
    name: the tools prefix of the prompt must be byte-identical between requests)."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        by_name: dict[str, Tool] = {}
        for t in tools:
            by_name[t.name] = t  # a later definition replaces an earlier one
        self._tools = [by_name[n] for n in sorted(by_name)]
        self._lookup: dict[str, Tool] = {}
        for t in self._tools:
            for alias in t.aliases:
                self._lookup.setdefault(alias, t)
        for t in self._tools:
            self._lookup[t.name] = t

    def find(self, name: str) -> Tool | None:
        return self._lookup.get(name)

    def canonical_names(self) -> dict[str, str]:
        """alias -> canonical name, for `normalize_messages_for_api`."""
        return {a: t.name for t in self._tools for a in t.aliases}

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools)

    def __len__(self) -> int:
        return len(self._tools)

    def names(self) -> list[str]:
        return [t.name for t in self._tools]

    def without(self, names: Iterable[str]) -> "ToolPool":
        drop = set(names)
        return ToolPool(t for t in self._tools if t.name not in drop)


_Options = TypeVar("_Options")


class PluginOptions:
    """The options of plug-ins, one object per type, carried by the core without reading them.

    A plug-in that needs settings (the built-in tools' Python runner, a sub-agent's depth …)
    defines a small dataclass whose fields all have defaults, and reads it back by its type:
    ``ctx.options.plugins.get(BuiltinToolOptions).grep_backend``. The type is the key, so a
    misspelled option is an ``AttributeError`` (and a mypy error), not a silent default, and the
    core never imports the plug-in that defined it. An absent type reads as its defaults.
    Immutable: `with_options` returns a new one, so a sub-run can change its copy only.
    """

    __slots__ = ("_by_type",)

    def __init__(self, *options: object) -> None:
        self._by_type: dict[type[Any], object] = {type(o): o for o in options}

    def get(self, kind: type[_Options]) -> _Options:
        """The ``kind`` object given, else ``kind()`` (its defaults)."""
        found = self._by_type.get(kind)
        return cast(_Options, found) if found is not None else kind()

    def find(self, kind: type[_Options]) -> _Options | None:
        """The ``kind`` object given, or None when nobody gave one."""
        return cast("_Options | None", self._by_type.get(kind))

    def with_options(self, *options: object) -> "PluginOptions":
        """A copy where each of ``options`` replaces the object of its type."""
        return PluginOptions(*self._by_type.values(), *options)

    def __iter__(self) -> Iterator[object]:
        return iter(self._by_type.values())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PluginOptions) and other._by_type == self._by_type

    def __hash__(self) -> int:
        return hash(tuple(self._by_type))

    def __repr__(self) -> str:
        return f"PluginOptions({', '.join(map(repr, self._by_type.values()))})"


@dataclass
class ToolOptions:
    """Per-run settings the tools and the pipeline read."""

    cwd: Path = field(default_factory=Path.cwd)
    namespace: Mapping[str, Any] | None = None
    """The user's live variables (an IPython ``user_ns``, or any dict)."""
    max_result_chars: int = 50_000
    max_message_chars: int = 200_000
    hook_timeout: float = 60.0
    rule_surface: "RuleSurface" = "python"
    """Where rules are given (``Agent(allow=...)`` or ``%%agent --allow``), for the hints in denials."""
    agent_label: str | None = None
    """The sub-agent making these calls (None: the run's own agent). A permission engine puts it
    in `ApprovalRequest.agent`, so the person knows who asks."""
    plugins: PluginOptions = field(default_factory=PluginOptions)
    """The plug-ins' own options (`PluginOptions`), from `RunConfig.plugin_options`."""
    run: "RunConfig | None" = None
    """The settings of the run these calls belong to: a nested run (a sub-agent's) takes its
    loop settings from it."""


def _drop_event(event: "AgentEvent") -> None:
    return None


async def _nothing_to_flush() -> None:
    return None


@dataclass
class ToolUseContext:
    """Everything a call may consult. Immutable by convention: modifiers return a new one."""

    tools: ToolPool
    can_use_tool: "CanUseTool"
    abort: AbortSignal = field(default_factory=AbortSignal)
    messages: list[dict[str, Any]] = field(default_factory=list)
    permissions: "PermissionState | None" = None
    """The rule engine's state (`permissions.PermissionContext`): to the core, a decision log."""
    hooks: "HookRunner | None" = None
    options: ToolOptions = field(default_factory=ToolOptions)
    outputs: "ToolOutputStore | None" = None
    emit: Callable[["AgentEvent"], None] = _drop_event
    session: "Session | None" = None
    """The conversation this call belongs to (its runs, for sub-agent records and hooks)."""
    flush_events: Callable[[], Awaitable[None]] = _nothing_to_flush
    deferred: Any = None
    """The deferred tools of this request (`deferred_tools.DeferredTools`), or None."""
    """Wait until the front end has handled every event emitted so far (bounded: it returns
    anyway after a short while). A tool about to block the loop's thread awaits it first, so
    its running card is on screen while it blocks."""
    decision: PermissionDecision | None = None
    """The permission decision that allowed this call (set for `Tool.call` only): a tool whose
    confinement depends on *why* it was allowed reads it instead of deciding again."""
    scrubber: SecretScrubber = field(default_factory=environment_scrubber)
    """Replaces runs of protected values in every result, error and progress line
    (`run_tool_use` applies it); the session's, built when the session started."""
    file_reads: FileReadState = field(default_factory=FileReadState)
    """What the session has read of each file (the session's own object: Edit and Write refuse
    to change a file it has not read, or that changed since, SPEC §10)."""

    def replace(self, **changes: Any) -> "ToolUseContext":
        """A copy with ``changes`` (fields only). Every tool call makes one or two, so this is
        a shallow copy rather than `dataclasses.replace`, which re-runs ``__init__`` and was a
        tenth of the per-call cost; there is no ``__post_init__`` to skip."""
        unknown = changes.keys() - _CONTEXT_FIELDS
        if unknown:
            raise TypeError(f"ToolUseContext has no field(s) {', '.join(sorted(unknown))}")
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__, **changes)
        return new


_CONTEXT_FIELDS = frozenset(f.name for f in dataclasses.fields(ToolUseContext))
