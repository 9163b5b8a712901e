"""Hooks (SPEC §5.4): Python callables that look at tool calls and may steer them.

    @agent_hook("PreToolUse", matcher="Bash")
    def no_force_push(event):
        if "--force" in event.tool_input.get("command", ""):
            return {"decision": "deny", "reason": "force pushes are not allowed here"}

A hook receives one `HookEvent` and returns None, a `HookResult`, or a plain dict with the same
field names (``continue`` is accepted for ``continue_``). Results are validated: a typo such as
``{"decison": "deny"}`` is a hook error, never a silently ignored denial.

`RegistryHookRunner` is what the core calls (``core.hook_types.HookRunner``). It reads its
registries at every call, so a hook registered or redefined in a notebook cell applies to the
next tool call. Matching hooks run concurrently — ``def`` hooks in worker threads (user code
never blocks the kernel's loop), ``async def`` hooks awaited — each bounded by its timeout
(``ctx.options.hook_timeout`` unless the hook sets one). Their proposals combine as
deny > ask > allow. A PreToolUse hook that raises, times out or returns an invalid result stops
that call with an error result naming the hook; a failing PostToolUse hook is reported to the
person and changes nothing else (the call already happened).

A hook's *allow* is only a proposal: the rule engine still runs, and only a call that would
otherwise have been asked about by default skips the prompt (see `permissions.engine`).
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Callable, Iterator, Literal, Optional, get_args

from pydantic import ConfigDict, Field, Strict, TypeAdapter, ValidationError

from .core.hook_types import PostToolUseOutcome, PreToolUseOutcome
from .core.timeouts import await_within
from .errors import ConfigError

if TYPE_CHECKING:
    from .core.tool import ToolUseContext
    from .core.tool_call import ToolCall

HookEventName = Literal["PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop"]
HOOK_EVENTS: tuple[HookEventName, ...] = get_args(HookEventName)

__all__ = [
    "HOOK_EVENTS",
    "HookEvent",
    "HookRegistry",
    "HookResult",
    "HookSpec",
    "RegistryHookRunner",
    "agent_hook",
    "default_registry",
]

_PLAIN_NAME = re.compile(r"[A-Za-z0-9_.\-]+")
_RANK = {"allow": 1, "ask": 2, "deny": 3}


@dataclass(kw_only=True)
class HookEvent:
    """What a hook is called with.

    ``tool_input`` is the observable input (a copy: changing it changes nothing — return
    ``updated_input`` instead). ``result`` is the packaged ``tool_result`` for post events;
    ``reason`` why the run stops for ``Stop``."""

    event: HookEventName
    tool_name: str | None = None
    tool_input: dict[str, Any] = field(default_factory=dict)
    tool_use_id: str | None = None
    session: Any = None
    result: dict[str, Any] | None = None
    reason: str = ""

    @property
    def input(self) -> dict[str, Any]:
        return self.tool_input


@dataclass(kw_only=True)
class HookResult:
    """What a hook may return (all optional). ``continue_=False`` ends the run after the
    current batch, with ``stop_reason`` shown to the person.

    One definition serves both ways of answering: a hook may return a `HookResult` or a plain
    dict with the same field names (``continue`` is accepted for ``continue_``), and both are
    validated against these fields (`_RESULT`). Constructing one does not validate it, so a
    mistake such as ``HookResult(decision="dney")`` is reported as that hook's invalid result,
    naming the hook, instead of escaping from the hook as an exception."""

    __pydantic_config__ = ConfigDict(extra="forbid", populate_by_name=True)

    decision: Optional[Literal["allow", "deny", "ask"]] = None
    reason: Annotated[str, Strict()] = ""
    updated_input: Optional[Annotated[dict[str, Any], Strict()]] = None
    additional_context: Optional[Annotated[str, Strict()]] = None
    system_message: Optional[Annotated[str, Strict()]] = None
    continue_: Annotated[bool, Strict(), Field(alias="continue")] = True
    stop_reason: Annotated[str, Strict()] = ""


_RESULT: TypeAdapter[HookResult] = TypeAdapter(HookResult)
"""Validates a returned dict (or a `HookResult`'s fields): unknown keys and wrong types are errors."""


@dataclass
class HookSpec:
    """A registered hook. ``matcher``: None for every tool, a tool name, ``"A|B"``, or a
    regular expression matched against the whole tool name."""

    event: HookEventName
    func: Callable[[HookEvent], Any]
    matcher: str | None = None
    timeout: float | None = None
    _pattern: "re.Pattern[str] | None" = field(default=None, repr=False)
    _is_async: bool = field(default=False, init=False, repr=False, compare=False)
    """``async def``: awaited on the loop; anything else runs in a worker thread."""

    def __post_init__(self) -> None:
        self._is_async = inspect.iscoroutinefunction(self.func)
        if self.event not in HOOK_EVENTS:
            raise ConfigError(f"unknown hook event {self.event!r}; choose one of: {', '.join(HOOK_EVENTS)}")
        if self.timeout is not None and not self.timeout > 0:
            raise ConfigError(f"hook timeout must be a positive number of seconds, not {self.timeout!r}")
        if self.matcher in ("", "*"):
            self.matcher = None
        if self.matcher is not None and not all(_PLAIN_NAME.fullmatch(p) for p in self.matcher.split("|")):
            try:
                self._pattern = re.compile(self.matcher)
            except re.error as exc:
                raise ConfigError(f"hook matcher {self.matcher!r} is not a valid regular expression: {exc}") from None

    @property
    def name(self) -> str:
        return getattr(self.func, "__qualname__", None) or repr(self.func)

    def matches(self, tool_name: str | None) -> bool:
        if self.matcher is None:
            return True
        if tool_name is None:
            return False
        if self._pattern is not None:
            return self._pattern.fullmatch(tool_name) is not None
        return tool_name in self.matcher.split("|")

    def same_function(self, other: "HookSpec") -> bool:
        """A redefinition (a notebook cell run again): same event, matcher and the same
        module-level function name. Lambdas and nested functions are never merged."""
        if (self.event, self.matcher) != (other.event, other.matcher):
            return False
        if self.func is other.func:
            return True
        key = _definition_key(self.func)
        return key is not None and key == _definition_key(other.func)


class HookRegistry:
    """Registered hooks, in registration order."""

    def __init__(self) -> None:
        self._specs: list[HookSpec] = []

    def add(self, event: HookEventName, func: Callable[[HookEvent], Any], matcher: str | None = None, *,
            timeout: float | None = None) -> HookSpec:
        """Register ``func``; a function with the same qualified name, event and matcher (a cell
        run again) replaces the earlier one instead of running twice."""
        if not callable(func):
            raise ConfigError(f"a hook must be callable, not {type(func).__name__}")
        spec = HookSpec(event, func, matcher, timeout)
        for i, existing in enumerate(self._specs):
            if existing.same_function(spec):
                self._specs[i] = spec
                return spec
        self._specs.append(spec)
        return spec

    register = add

    def hook(self, event: HookEventName, matcher: str | None = None, *,
             timeout: float | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator form of `add`; the function is returned unchanged."""

        def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
            self.add(event, func, matcher, timeout=timeout)
            return func

        return decorate

    def unregister(self, func: Callable[..., Any] | HookSpec) -> int:
        """Remove a hook (by function or spec); returns how many registrations were removed."""
        before = len(self._specs)
        self._specs = [s for s in self._specs if not (s is func or s.func is func)]
        return before - len(self._specs)

    def clear(self, event: HookEventName | None = None) -> None:
        self._specs = [s for s in self._specs if event is not None and s.event != event]

    def matching(self, event: HookEventName, tool_name: str | None = None) -> list[HookSpec]:
        return [s for s in self._specs if s.event == event and (event == "Stop" or s.matches(tool_name))]

    def __iter__(self) -> Iterator[HookSpec]:
        return iter(list(self._specs))

    def __len__(self) -> int:
        return len(self._specs)

    def __repr__(self) -> str:
        return f"HookRegistry({[f'{s.event}:{s.name}' for s in self._specs]})"


def _definition_key(func: Any) -> tuple[str, str] | None:
    module, qualname = getattr(func, "__module__", None), getattr(func, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname:
        return None
    return module, qualname


default_registry = HookRegistry()
"""Where `agent_hook` registers: the hooks of this process (the kernel)."""


def agent_hook(event: HookEventName, matcher: str | None = None, *,
               timeout: float | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a hook in `default_registry`: ``@agent_hook("PreToolUse", matcher="Bash")``."""
    return default_registry.hook(event, matcher, timeout=timeout)


@dataclass
class _Ran:
    spec: HookSpec
    result: HookResult | None = None
    error: str | None = None


class RegistryHookRunner:
    """The core's ``HookRunner`` over one or more registries (read at every call)."""

    def __init__(self, *registries: HookRegistry) -> None:
        self.registries = registries or (default_registry,)

    def _matching(self, event: HookEventName, tool_name: str | None) -> list[HookSpec]:
        return [s for r in self.registries for s in r.matching(event, tool_name)]

    async def pre_tool_use(self, call: "ToolCall", ctx: "ToolUseContext") -> PreToolUseOutcome:
        specs = self._matching("PreToolUse", call.name)
        if not specs:
            return PreToolUseOutcome()
        ran = await self._run_all(specs, ctx, lambda: HookEvent(
            event="PreToolUse", tool_name=call.name, tool_input=_copy_json(call.observable),
            tool_use_id=call.tool_use_id, session=ctx.session))
        outcome = PreToolUseOutcome()
        if all(r.result is None and r.error is None for r in ran):
            return outcome  # every hook only looked (returned None): the common case
        errors = [r.error for r in ran if r.error]
        results = [r.result for r in ran if r.result is not None]
        _collect_messages(outcome, results)
        if errors:
            outcome.error = "; ".join(errors)
            return outcome
        decided = [r for r in results if r.decision is not None]
        if decided:
            outcome.decision = max((r.decision for r in decided), key=lambda d: _RANK[d or "allow"])
            outcome.reason = "; ".join(r.reason for r in decided if r.decision == outcome.decision and r.reason)
        replacements = [(r.spec.name, r.result.updated_input) for r in ran
                        if r.result is not None and r.result.updated_input is not None]
        if any(u != replacements[0][1] for _, u in replacements):
            names = ", ".join(n for n, _ in replacements)
            outcome.error = f"hooks {names} replaced the input in different ways"
            return outcome
        if replacements:
            outcome.updated_input = replacements[0][1]
        return outcome

    async def post_tool_use(self, call: "ToolCall", result: dict[str, Any], ctx: "ToolUseContext", *,
                            failed: bool) -> PostToolUseOutcome:
        event: HookEventName = "PostToolUseFailure" if failed else "PostToolUse"
        specs = self._matching(event, call.name)
        if not specs:
            return PostToolUseOutcome()
        ran = await self._run_all(specs, ctx, lambda: HookEvent(
            event=event, tool_name=call.name, tool_input=_copy_json(call.observable),
            tool_use_id=call.tool_use_id, session=ctx.session, result=_copy_json(result)))
        return _post_outcome(ran)

    async def stop(self, ctx: "ToolUseContext", reason: str) -> PostToolUseOutcome:
        specs = self._matching("Stop", None)
        if not specs:
            return PostToolUseOutcome()
        ran = await self._run_all(specs, ctx, lambda: HookEvent(event="Stop", session=ctx.session, reason=reason))
        return _post_outcome(ran)

    async def _run_all(self, specs: list[HookSpec], ctx: "ToolUseContext",
                       make_event: Callable[[], HookEvent]) -> list[_Ran]:
        default_timeout = ctx.options.hook_timeout
        if len(specs) == 1:  # the common case: no gather, no task
            return [await _run_one(specs[0], make_event(), specs[0].timeout or default_timeout)]
        return list(await asyncio.gather(*(_run_one(s, make_event(), s.timeout or default_timeout) for s in specs)))


async def _run_one(spec: HookSpec, event: HookEvent, timeout: float) -> _Ran:
    try:
        if spec._is_async:  # a hook that returns without waiting arms no timer (`await_within`)
            value = await await_within(spec.func(event), timeout)
        else:
            async with asyncio.timeout(timeout):
                value = await asyncio.to_thread(spec.func, event)
                if inspect.isawaitable(value):
                    value = await value
    except asyncio.TimeoutError:
        return _Ran(spec, error=f"hook {spec.name} ({spec.event}) timed out after {timeout:g} s")
    except (Exception, SystemExit) as exc:  # a hook calling exit() stops its call, not the loop
        return _Ran(spec, error=f"hook {spec.name} ({spec.event}) raised {type(exc).__name__}: {exc}")
    try:
        return _Ran(spec, result=_validate(value))
    except (ValidationError, TypeError) as exc:
        return _Ran(spec, error=f"hook {spec.name} ({spec.event}) returned an invalid result: {_problems(exc)}")


_JSON_SCALARS = (str, int, float, bool, type(None))


def _copy_json(value: Any) -> Any:
    """A deep copy of JSON data (what observable inputs and tool results are), several times
    faster than `copy.deepcopy` on the per-call path; anything else is deep-copied."""
    kind = type(value)
    if kind is dict:
        return {k: _copy_json(v) for k, v in value.items()}
    if kind is list:
        return [_copy_json(v) for v in value]
    if kind in _JSON_SCALARS:
        return value
    return copy.deepcopy(value)


def _validate(value: Any) -> HookResult | None:
    if value is None:
        return None
    if isinstance(value, HookResult):
        value = {**vars(value)}
    elif not isinstance(value, dict):
        raise TypeError(f"expected None, a HookResult or a dict, got {type(value).__name__}")
    return _RESULT.validate_python(value)


def _problems(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(result)'}: "
            + ("unknown field" if e["type"] in ("extra_forbidden", "unexpected_keyword_argument") else e["msg"])
            for e in exc.errors(include_url=False)
        )
    return str(exc)


def _collect_messages(outcome: PreToolUseOutcome | PostToolUseOutcome, results: list[HookResult]) -> None:
    for r in results:
        if r.additional_context:
            outcome.additional_context.append(r.additional_context)
        if r.system_message:
            outcome.system_messages.append(r.system_message)
        if not r.continue_:
            outcome.stop = True
            outcome.stop_reason = "; ".join(x for x in (outcome.stop_reason, r.stop_reason) if x)


def _post_outcome(ran: list[_Ran]) -> PostToolUseOutcome:
    outcome = PostToolUseOutcome()
    _collect_messages(outcome, [r.result for r in ran if r.result is not None])
    outcome.system_messages.extend(f"Hook error: {r.error}" for r in ran if r.error)
    return outcome
