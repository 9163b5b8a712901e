"""Tools from plain Python functions: ``@tool`` and `FunctionTool`.

The schema comes from the type hints through pydantic (the model the API sees is the model
that validates the call), parameter descriptions from the docstring (Google, NumPy or reST,
parsed by `docstring_parser`). Every problem with a function is collected before one
`ToolDefinitionError` is raised, so a person fixes them all at once.

Sync functions run in a worker thread (so the kernel's loop stays free for the Stop button and
approval clicks, and concurrency-safe ones overlap); async functions are awaited.
"""

from __future__ import annotations

import asyncio
import inspect
import typing
from typing import Any, Callable, Literal, Mapping, TypeVar, overload

import docstring_parser
from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.errors import PydanticSchemaGenerationError, PydanticUserError

from ..errors import ToolDefinitionError
from .tool import Progress, Tool, ToolUseContext

F = TypeVar("F", bound=Callable[..., Any])
TOOL_ATTR = "__toolagent_tool__"
_INJECTED = {"ctx", "progress"}


class FunctionTool(Tool):
    """A `Tool` wrapping one Python function."""

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        read_only: bool = False,
        concurrency_safe: bool | None = None,
        interrupt_behavior: Literal["cancel", "block"] | None = None,
    ) -> None:
        self.fn = fn
        self.name = name or getattr(fn, "__name__", "")
        self._read_only = read_only
        self._concurrency_safe = read_only if concurrency_safe is None else concurrency_safe
        self._is_async = inspect.iscoroutinefunction(fn)
        # A thread cannot be cancelled: a sync function always finishes ("block").
        self.interrupt_behavior = interrupt_behavior or ("cancel" if self._is_async else "block")
        self.input_model, doc_description, self._injected = _build_input_model(fn, self.name)
        self.description = description or doc_description or f"Call the Python function {self.name}()."

    def is_concurrency_safe(self, input: BaseModel) -> bool:
        return self._concurrency_safe

    def is_read_only(self, input: BaseModel) -> bool:
        return self._read_only

    async def call(self, input: BaseModel, ctx: ToolUseContext, progress: Progress) -> Any:
        kwargs = {name: getattr(input, name) for name in type(input).model_fields}
        if "ctx" in self._injected:
            kwargs["ctx"] = ctx
        if "progress" in self._injected:
            kwargs["progress"] = progress
        if self._is_async:
            return await self.fn(**kwargs)
        return await asyncio.to_thread(self.fn, **kwargs)

    def map_output(self, output: Any) -> Any:
        try:
            from ..tools.output_mapping import map_return_value
        except ImportError:  # the built-in tools package is optional for the core
            return super().map_output(output)
        return map_return_value(output)


def _build_input_model(fn: Callable[..., Any], tool_name: str) -> tuple[type[BaseModel], str, set[str]]:
    problems: list[str] = []
    if not tool_name or not tool_name.replace("_", "a").replace("-", "a").isalnum() or len(tool_name) > 64:
        problems.append(f"tool name {tool_name!r} must be 1-64 letters, digits, '_' or '-'")
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise ToolDefinitionError(f"cannot make a tool from {fn!r}: {exc}") from exc
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:  # NameError for unresolved forward refs, among others
        problems.append(f"its type hints cannot be resolved ({type(exc).__name__}: {exc})")
        hints = {}
    doc = docstring_parser.parse(inspect.getdoc(fn) or "")
    param_docs = {p.arg_name: (p.description or "") for p in doc.params}
    description = "\n\n".join(part for part in (doc.short_description, doc.long_description) if part)

    fields: dict[str, Any] = {}
    injected: set[str] = set()
    for pname, param in sig.parameters.items():
        if pname in _INJECTED:
            injected.add(pname)
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            problems.append(f"parameter {param}: *args and **kwargs cannot be described to the model")
            continue
        annotation = hints.get(pname, Any)
        default = ... if param.default is param.empty else param.default
        fields[pname] = (annotation, Field(default, description=param_docs.get(pname) or None))
    if problems:
        raise ToolDefinitionError(_problems_text(tool_name, problems))
    try:
        model = create_model(  # type: ignore[call-overload]
            f"{tool_name}_input", __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=False), **fields
        )
        model.model_json_schema()
    except (PydanticSchemaGenerationError, PydanticUserError, TypeError, ValueError) as exc:
        for pname, (annotation, _) in fields.items():
            try:
                create_model("probe", **{pname: (annotation, ...)}).model_json_schema()  # type: ignore[call-overload]
            except Exception:
                problems.append(f"parameter {pname!r}: type {_type_name(annotation)} has no JSON schema")
        if not problems:
            problems.append(str(exc).splitlines()[0])
        raise ToolDefinitionError(_problems_text(tool_name, problems)) from exc
    return model, description, injected


def _type_name(annotation: Any) -> str:
    return getattr(annotation, "__name__", None) or repr(annotation)


def _problems_text(name: str, problems: list[str]) -> str:
    lines = "\n".join(f"  - {p}" for p in problems)
    return f"cannot make a tool from function {name!r}:\n{lines}"


@overload
def tool(fn: F) -> F: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    read_only: bool = False,
    concurrency_safe: bool | None = None,
) -> Callable[[F], F]: ...


def tool(
    fn: F | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    read_only: bool = False,
    concurrency_safe: bool | None = None,
) -> Any:
    """Mark a function as a tool. The function stays a plain function you can call yourself.

    ``read_only=True`` also makes it concurrency-safe unless ``concurrency_safe`` says otherwise.
    Problems with the function (untyped *args, types without a JSON schema) raise
    `ToolDefinitionError` here, at definition time, not when the model calls it.
    """

    def decorate(f: F) -> F:
        setattr(
            f,
            TOOL_ATTR,
            FunctionTool(f, name=name, description=description, read_only=read_only, concurrency_safe=concurrency_safe),
        )
        return f

    if fn is not None:
        return decorate(fn)
    return decorate


def tools_from_namespace(namespace: Mapping[str, Any]) -> list[Tool]:
    """The ``@tool`` functions in a namespace *now* (called before every model request)."""
    found: list[Tool] = []
    for value in list(namespace.values()):
        t = getattr(value, TOOL_ATTR, None) if callable(value) else None
        if isinstance(t, FunctionTool):
            found.append(t)
    return found


def as_tool(value: Any, name: str | None = None) -> Tool:
    """A Tool for ``value``: a Tool as is, a ``@tool`` function's tool, or a new FunctionTool."""
    if isinstance(value, Tool):
        return value
    existing = getattr(value, TOOL_ATTR, None)
    if isinstance(existing, FunctionTool) and (name is None or name == existing.name):
        return existing
    if callable(value):
        return FunctionTool(value, name=name)
    raise ToolDefinitionError(f"{name or value!r} is not callable and cannot be a tool")
