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
import concurrent.futures
import contextvars
import functools
import inspect
import re
import typing
from typing import Any, Callable, Literal, Mapping, TypeVar, overload

import docstring_parser
from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.errors import PydanticSchemaGenerationError, PydanticUserError

from ..errors import ToolDefinitionError
from ..core.tool import TOOL_ATTR, Progress, Tool, ToolUseContext
from .output_mapping import map_return_value

F = TypeVar("F", bound=Callable[..., Any])
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
        self.name = name or str(getattr(fn, "__name__", ""))
        self._read_only = read_only
        self._concurrency_safe = read_only if concurrency_safe is None else concurrency_safe
        self._is_async = inspect.iscoroutinefunction(fn)
        # A thread cannot be cancelled: a sync function always finishes ("block").
        self.interrupt_behavior = interrupt_behavior or ("cancel" if self._is_async else "block")
        self.input_model, doc_description, self._injected, self._positional = _build_input_model(fn, self.name)
        self.description = description or doc_description or f"Call the Python function {self.name}()."

    def is_concurrency_safe(self, input: BaseModel) -> bool:
        return self._concurrency_safe

    def is_read_only(self, input: BaseModel) -> bool:
        return self._read_only

    async def call(self, input: BaseModel, ctx: ToolUseContext, progress: Progress) -> Any:
        kwargs = {name: getattr(input, name) for name in type(input).model_fields}
        for pname, kind in self._injected.items():
            kwargs[pname] = ctx if kind == "ctx" else progress
        args = [kwargs.pop(name) for name in self._positional]
        if self._is_async:
            return await self.fn(*args, **kwargs)
        # Like asyncio.to_thread (the context is copied, so captured prints follow the call),
        # but on a pool wide enough that a full batch of concurrency-safe calls overlaps: the
        # default executor has only cores + 4 threads.
        call = functools.partial(contextvars.copy_context().run, self.fn, *args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(_tool_threads(), call)

    def map_output(self, output: Any) -> Any:
        return map_return_value(output)


_POOL: concurrent.futures.ThreadPoolExecutor | None = None


def _tool_threads() -> concurrent.futures.ThreadPoolExecutor:
    global _POOL
    if _POOL is None:
        _POOL = concurrent.futures.ThreadPoolExecutor(max_workers=64, thread_name_prefix="toolagent-tool")
    return _POOL


_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def _is_injected(pname: str, annotation: Any) -> bool:
    """``ctx`` / ``progress`` are supplied by the runtime, not by the model — when annotated
    with their types, or left unannotated under those names."""
    if annotation is ToolUseContext or annotation is Progress:
        return True
    return pname in _INJECTED and annotation is inspect.Parameter.empty


def _build_input_model(
    fn: Callable[..., Any], tool_name: str
) -> tuple[type[BaseModel], str, dict[str, str], list[str]]:
    """The input model, the description, injected parameters (name → kind) and the names of
    positional-only parameters. Collects every problem before raising one error."""
    problems: list[str] = []
    if not _TOOL_NAME.match(tool_name or ""):
        problems.append(f"tool name {tool_name!r} must be 1-64 ASCII letters, digits, '_' or '-'")
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
    injected: dict[str, str] = {}
    positional: list[str] = []
    for pname, param in sig.parameters.items():
        annotation = hints.get(pname, param.annotation)
        if _is_injected(pname, annotation):
            injected[pname] = "progress" if annotation is Progress or (pname == "progress" and annotation is param.empty) else "ctx"
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            problems.append(f"parameter {param}: *args and **kwargs cannot be described to the model")
            continue
        if param.kind is param.POSITIONAL_ONLY:
            positional.append(pname)
        if annotation is param.empty:
            annotation = Any
        try:
            # pydantic's overloads of create_model do not cover field definitions passed as **dict
            create_model("probe", **{pname: (annotation, ...)}).model_json_schema()  # type: ignore[call-overload]
        except Exception:
            problems.append(f"parameter {pname!r}: type {_type_name(annotation)} has no JSON schema")
            continue
        default = ... if param.default is param.empty else param.default
        fields[pname] = (annotation, Field(default, description=param_docs.get(pname) or None))
    if problems:
        raise ToolDefinitionError(_problems_text(tool_name, problems))
    try:
        model = create_model(
            f"{tool_name}_input", __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=False), **fields
        )
        model.model_json_schema()
    except (PydanticSchemaGenerationError, PydanticUserError, TypeError, ValueError) as exc:
        raise ToolDefinitionError(_problems_text(tool_name, [str(exc).splitlines()[0]])) from exc
    return model, description, injected, positional


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
    """The ``@tool`` functions in a namespace *now* (called before every model request).

    ``_``-names (IPython's ``_5``, ``_``) are skipped, and a function bound under its tool's own
    name wins over other references, so a stale object kept elsewhere never shadows a
    redefinition.
    """
    by_name: dict[str, FunctionTool] = {}
    for key, value in list(namespace.items()):
        if not isinstance(key, str) or key.startswith("_") or not callable(value):
            continue
        t = getattr(value, TOOL_ATTR, None)
        if not isinstance(t, FunctionTool):
            continue
        if t.name not in by_name or key == t.name:
            by_name[t.name] = t
    return list(by_name.values())


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
