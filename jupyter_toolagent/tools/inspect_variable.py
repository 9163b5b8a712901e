"""`InspectVariable`: a type-aware, size-bounded summary of one variable or a path into it.

The work runs in a daemon thread (`run_in_daemon_thread`): the kernel's event loop stays free
for the Stop button and approval clicks, and a ``__repr__`` that never returns is abandoned
rather than waited for. A path starts only at a name `ListVariables` shows, and never lands
on a module, the runtime's own objects or protected text (`inspect_guard`). The character budget is, in order of precedence, the call's
``max_chars``, `BuiltinToolOptions.inspect_max_chars`, then 4,000.
"""

from __future__ import annotations

import difflib
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..core.tool import Progress, Tool, ToolResult, ToolUseContext
from ..errors import InspectPathError, TimedOut
from .bounded import DEFAULT_TIMEOUT, run_in_daemon_thread
from .inspect_guard import refusal
from .options import builtin_options
from .inspect_path import follow_path, parse_path
from .summarize import DEFAULT_BUDGET, summarize
from .variables import is_hidden, user_tool_of

__all__ = ["InspectVariable", "InspectVariableInput"]

MAX_BUDGET = 50_000
OVERALL_TIMEOUT = 10.0
"""Seconds a whole inspection may take (user reprs are bounded separately, and more tightly)."""


class InspectVariableInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(
        description="A variable name, optionally followed by .attributes, [constant keys] or [start:stop] "
        "slices: df, df['price'], arr[10:20], text[5000:9000], obj.items[3]. Never evaluated as code."
    )
    max_chars: int | None = Field(
        None, ge=200, le=MAX_BUDGET, description="Longest summary to return (default 4,000 characters)."
    )


class InspectVariable(Tool[InspectVariableInput]):
    name = "InspectVariable"
    description = (
        "Summarise one of the user's live Python variables, or a path into it, within a size budget: a DataFrame's "
        "shape, dtypes, first rows and statistics on a sample; an array's shape, dtype and statistics; the length "
        "and first items of dicts and lists; the length and a window of text. Iterators are never consumed. Prefer "
        "this to printing whole objects with RunPython."
    )
    input_model = InspectVariableInput

    def is_concurrency_safe(self, input: InspectVariableInput) -> bool:
        return True

    def is_read_only(self, input: InspectVariableInput) -> bool:
        return True

    async def validate_input(self, input: InspectVariableInput, ctx: ToolUseContext) -> str | None:
        try:
            parse_path(input.path)
        except InspectPathError as exc:
            return str(exc)
        return None

    async def call(self, input: InspectVariableInput, ctx: ToolUseContext, progress: Progress) -> ToolResult:
        namespace = ctx.options.namespace
        if namespace is None:
            return ToolResult("No Python namespace is attached to this session, so there is nothing to inspect.",
                              is_error=True)
        path = parse_path(input.path)
        hidden = builtin_options(ctx).hidden_names
        if path.root not in namespace:
            return ToolResult(_unknown_name(path.root, namespace, hidden), is_error=True)
        if is_hidden(path.root, namespace[path.root], hidden) and user_tool_of(namespace[path.root]) is None:
            return ToolResult(
                f"Cannot inspect {input.path!r}: {path.root!r} is not one of the user's variables (ListVariables does "
                "not show modules, IPython's objects, '_' names or the runtime's own objects). Paths start only at "
                "names ListVariables shows.", is_error=True)
        budget = input.max_chars or _configured_budget(ctx)

        def guard(value: Any, next_key: Any) -> str | None:
            return refusal(value, namespace=namespace, scrubber=ctx.scrubber, next_key=next_key)

        try:
            text = await run_in_daemon_thread(_inspect, path, namespace, budget, guard, timeout=OVERALL_TIMEOUT)
        except InspectPathError as exc:
            return ToolResult(f"Cannot inspect {input.path!r}: {exc}", is_error=True)
        except TimedOut:
            return ToolResult(f"Inspecting {input.path!r} did not finish within {OVERALL_TIMEOUT:g} s "
                              "(the object's own code is slow); try a narrower path.", is_error=True)
        if ctx.scrubber.finds(text):
            return ToolResult(
                f"Cannot inspect {input.path!r}: its summary would show a protected value (an API key, token or "
                "password from the environment). Inspect the parts that hold none of it by path, e.g. d['other'].",
                is_error=True)
        return ToolResult(text)


def _inspect(path: Any, namespace: Any, budget: int, guard: Any) -> str:
    from .bounded import call_with_timeout

    try:
        value = call_with_timeout(follow_path, path, namespace, guard, timeout=2 * DEFAULT_TIMEOUT)
    except TimedOut as exc:
        raise InspectPathError(f"following the path {exc}") from None
    header = f"{path.text()}: " if path.steps else f"{path.root}: "
    return header + summarize(value, max(budget - len(header), 100))


def _configured_budget(ctx: ToolUseContext) -> int:
    value = builtin_options(ctx).inspect_max_chars
    if value is None:
        return DEFAULT_BUDGET
    return min(max(value, 200), MAX_BUDGET)


def _unknown_name(name: str, namespace: Any, hidden: Any) -> str:
    candidates = [k for k, v in list(namespace.items()) if isinstance(k, str) and not is_hidden(k, v, hidden)]
    close = difflib.get_close_matches(name, candidates, n=5)
    hint = f" Similar names: {', '.join(close)}." if close else ""
    return f"No variable named {name!r} in the notebook namespace.{hint} Use ListVariables to see what exists."
