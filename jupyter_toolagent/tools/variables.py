"""`ListVariables`: the user's variables, each with its type and a one-line description.

What is hidden and why: modules and ``__future__`` features (imports, not data), IPython's own names (``In``, ``Out``,
``get_ipython``, ``exit``, ``quit`` and the ``_``-prefixed history), every ``_``-name, the
names the front end declares hidden (`BuiltinToolOptions.hidden_names`, e.g. IPython's
``user_ns_hidden``), and the product's own objects (``Agent``, ``tool``). ``@tool`` functions
are listed apart: the model should call them as tools, not through RunPython. Descriptions come
from `brief`, which runs no user code.
"""

from __future__ import annotations

import fnmatch
import types
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..core.tool import TOOL_ATTR, Progress, Tool, ToolResult, ToolUseContext
from .bounded import TextBudget
from .brief import brief
from .function_tool import FunctionTool
from .options import builtin_options

__all__ = ["ListVariables", "ListVariablesInput", "is_hidden", "namespace_of", "user_tool_of"]

IPYTHON_NAMES = frozenset({"In", "Out", "get_ipython", "exit", "quit"})
PRODUCT_PACKAGE = __name__.split(".")[0]
MAX_CHARS = 20_000


class ListVariablesInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    pattern: str | None = Field(None, description="Only names matching this shell-style pattern, e.g. 'df*'.")


def namespace_of(ctx: ToolUseContext) -> Mapping[str, Any] | None:
    return ctx.options.namespace


def user_tool_of(value: Any) -> FunctionTool | None:
    """The `FunctionTool` of a ``@tool`` function (read from the function's ``__dict__``)."""
    if not isinstance(value, types.FunctionType):
        return None
    found = value.__dict__.get(TOOL_ATTR)
    return found if isinstance(found, FunctionTool) else None


def _is_product_object(value: Any) -> bool:
    if isinstance(value, (type, types.FunctionType, types.BuiltinFunctionType)):
        module = value.__dict__.get("__module__") if isinstance(value, type) else getattr(value, "__module__", None)
    else:
        module = type(value).__module__
    return isinstance(module, str) and (module == PRODUCT_PACKAGE or module.startswith(PRODUCT_PACKAGE + "."))


def is_hidden(name: str, value: Any, hidden: Any) -> bool:
    """Whether ``name`` is kept out of the listing (see the module docstring for why)."""
    if name.startswith("_") or name in IPYTHON_NAMES or isinstance(value, types.ModuleType):
        return True
    if type(value).__module__ == "__future__":  # what `from __future__ import annotations` leaves behind
        return True
    if isinstance(hidden, Mapping):
        # IPython's rule: a startup name stays hidden only while it still holds its startup value.
        if name in hidden and hidden[name] is value:
            return True
    elif hidden is not None and name in hidden:
        return True
    return _is_product_object(value)


class ListVariables(Tool[ListVariablesInput]):
    name = "ListVariables"
    description = (
        "List the user's Python variables in the live notebook namespace, each with its type and a short "
        "description (shape, length, value of small scalars). Runs no user code. Use InspectVariable for "
        "details of one variable. Functions the user marked as tools are listed separately: call them as tools."
    )
    input_model = ListVariablesInput

    def is_concurrency_safe(self, input: ListVariablesInput) -> bool:
        return True

    def is_read_only(self, input: ListVariablesInput) -> bool:
        return True

    async def call(self, input: ListVariablesInput, ctx: ToolUseContext, progress: Progress) -> ToolResult:
        namespace = namespace_of(ctx)
        if namespace is None:
            return ToolResult("No Python namespace is attached to this session, so there are no variables to list.",
                              is_error=True)
        hidden = builtin_options(ctx).hidden_names
        variables: list[str] = []
        tools: list[str] = []
        for name, value in list(namespace.items()):
            if not isinstance(name, str) or (input.pattern and not fnmatch.fnmatchcase(name, input.pattern)):
                continue
            user_tool = user_tool_of(value)
            if user_tool is not None:
                tools.append(f"  {user_tool.name}({_parameters(user_tool)}) — {_first_line(user_tool.description)}")
            elif not is_hidden(name, value, hidden):
                variables.append(f"  {name}: {brief(value)}")
        return ToolResult(_render(variables, tools, input.pattern))


def _render(variables: list[str], tools: list[str], pattern: str | None) -> str:
    where = f" matching {pattern!r}" if pattern else ""
    out = TextBudget(MAX_CHARS)
    out.add(f"Variables{where} ({len(variables)}):\n" if variables else f"No user variables{where}.\n")
    for line in variables:
        if not out.add(line + "\n"):
            break
    if tools:
        out.add(f"\nTools defined in the notebook ({len(tools)}) — call them as tools, not through RunPython:\n")
        for line in tools:
            if not out.add(line + "\n"):
                break
    return out.text().rstrip("\n")


def _parameters(user_tool: FunctionTool) -> str:
    """The parameters the model passes (from the tool's input model: hints resolved, no ctx)."""
    parts = []
    for name, info in user_tool.input_model.model_fields.items():
        annotation = info.annotation
        kind = getattr(annotation, "__name__", None) or str(annotation).replace("typing.", "")
        parts.append(f"{name}: {kind}" if info.is_required() else f"{name}: {kind} = {info.default!r}")
    return ", ".join(parts)


def _first_line(text: str) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= 150 else line[:147] + "..."
