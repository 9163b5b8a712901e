"""`@tool` / `FunctionTool`: schemas from type hints, descriptions from docstrings, sync and
async calls, context injection, definition errors, and tools found fresh before each request."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any, Literal

import pytest

from jupyter_toolagent import tool
from jupyter_toolagent.core.tool import TOOL_ATTR
from jupyter_toolagent.tools.function_tool import FunctionTool, as_tool, tools_from_namespace
from jupyter_toolagent.core.run_tool_use import run_tool_use
from jupyter_toolagent.core.scheduling import run_tools
from jupyter_toolagent.core.session import RunConfig, Session
from jupyter_toolagent.core.tool import ToolPool, ToolUseContext
from jupyter_toolagent.errors import ToolDefinitionError
from jupyter_toolagent.models import ScriptedModel, tool_use_block

from runtime_support import StubHooks, allow_all, assert_valid_transcript, ctx_for, finished, result_text, run, tool_results


def use(name: str, input: dict[str, Any], id: str = "toolu_1") -> dict[str, Any]:
    return {"type": "tool_use", "id": id, "name": name, "input": input}


def namespace_config(model: Any, ns: dict[str, Any]) -> RunConfig:
    return RunConfig(model=model, tool_provider=lambda: tools_from_namespace(ns), can_use_tool=allow_all,
                     hooks=StubHooks())


# --- schema and descriptions ---------------------------------------------------------------

def test_schema_comes_from_type_hints() -> None:
    def scale(values: list[float], factor: float = 2.0, mode: Literal["mul", "add"] = "mul",
              label: str | None = None) -> list[float]:
        return values

    schema = FunctionTool(scale).input_schema()
    props = schema["properties"]
    assert schema["required"] == ["values"]
    assert props["values"]["type"] == "array" and props["values"]["items"]["type"] == "number"
    assert props["factor"]["type"] == "number" and props["factor"]["default"] == 2.0
    assert props["mode"]["enum"] == ["mul", "add"]
    assert {t.get("type") for t in props["label"]["anyOf"]} == {"string", "null"}
    assert schema["additionalProperties"] is False
    api = FunctionTool(scale).to_api_schema()
    assert api["name"] == "scale" and api["input_schema"] == schema


def google(path: str, limit: int = 10) -> str:
    """Read the start of a file.

    Longer explanation of why.

    Args:
        path: Where the file is.
        limit: How many lines to read.
    """
    return path


def numpy_style(path: str, limit: int = 10) -> str:
    """Read the start of a file.

    Parameters
    ----------
    path : str
        Where the file is.
    limit : int
        How many lines to read.
    """
    return path


def rest_style(path: str, limit: int = 10) -> str:
    """Read the start of a file.

    :param path: Where the file is.
    :param limit: How many lines to read.
    """
    return path


@pytest.mark.parametrize("fn", [google, numpy_style, rest_style], ids=["google", "numpy", "rest"])
def test_parameter_descriptions_from_docstrings(fn: Any) -> None:
    t = FunctionTool(fn)
    props = t.input_schema()["properties"]
    assert props["path"]["description"] == "Where the file is."
    assert props["limit"]["description"] == "How many lines to read."
    assert t.description.startswith("Read the start of a file.")
    assert "Where the file is" not in t.description


def test_google_long_description_is_kept() -> None:
    assert FunctionTool(google).description == "Read the start of a file.\n\nLonger explanation of why."


def test_decorator_forms() -> None:
    @tool
    def plain(x: int) -> int:
        return x

    @tool(read_only=True, name="renamed", description="Given description.")
    def configured(x: int) -> int:
        return x

    assert plain(3) == 3  # still a plain function
    t1, t2 = getattr(plain, TOOL_ATTR), getattr(configured, TOOL_ATTR)
    parsed = t1.input_model(x=1)
    assert (t1.name, t1.is_read_only(parsed), t1.is_concurrency_safe(parsed)) == ("plain", False, False)
    assert (t2.name, t2.description, t2.is_read_only(parsed), t2.is_concurrency_safe(parsed)) == (
        "renamed", "Given description.", True, True)
    assert as_tool(configured) is t2


# --- calls ---------------------------------------------------------------------------------

@pytest.mark.asyncio
async def test_sync_function_runs_in_a_worker_thread() -> None:
    threads: list[int] = []

    def where(x: int) -> int:
        threads.append(threading.get_ident())
        return x * 2

    out = await run_tool_use(use("where", {"x": 21}), ctx_for(FunctionTool(where)))
    assert out.result["content"] == "42"
    assert threads and threads[0] != threading.get_ident()


@pytest.mark.asyncio
async def test_async_function_is_awaited_on_the_loop() -> None:
    threads: list[int] = []

    async def where(x: int) -> dict[str, int]:
        threads.append(threading.get_ident())
        await asyncio.sleep(0)
        return {"double": x * 2}

    out = await run_tool_use(use("where", {"x": 21}), ctx_for(FunctionTool(where)))
    assert out.result["content"] == '{"double": 42}'
    assert threads == [threading.get_ident()]


@pytest.mark.asyncio
async def test_concurrency_safe_sync_functions_overlap() -> None:
    spans: dict[str, tuple[float, float]] = {}

    def slow(tag: str) -> str:
        start = time.monotonic()
        time.sleep(0.3)
        spans[tag] = (start, time.monotonic())
        return tag

    t = FunctionTool(slow, read_only=True)
    await run_tools([use("slow", {"tag": "a"}, "toolu_a"), use("slow", {"tag": "b"}, "toolu_b")], ctx_for(t))
    (a0, a1), (b0, b1) = spans["a"], spans["b"]
    assert a0 < b1 and b0 < a1


@pytest.mark.asyncio
async def test_ctx_and_progress_are_injected_not_described() -> None:
    seen: list[Any] = []

    async def inspect_ctx(name: str, ctx, progress) -> str:  # noqa: ANN001
        seen.append(ctx)
        progress("working", 0.5)
        return name

    t = FunctionTool(inspect_ctx)
    assert set(t.input_schema()["properties"]) == {"name"}
    events: list[Any] = []
    ctx = ctx_for(t, emit=events.append)
    out = await run_tool_use(use("inspect_ctx", {"name": "n"}), ctx)
    assert out.result["content"] == "n"
    assert isinstance(seen[0], ToolUseContext) and seen[0].tools is ctx.tools
    assert [e.message for e in events if e.kind == "tool_progress"] == ["working"]
    bad = await run_tool_use(use("inspect_ctx", {"name": "n", "ctx": 1}), ctx)
    assert bad.status == "invalid" and "unexpected parameter `ctx`" in result_text(bad.result)


@pytest.mark.asyncio
async def test_function_exception_is_an_error_result() -> None:
    def boom(x: int) -> int:
        raise ZeroDivisionError("division by zero")

    out = await run_tool_use(use("boom", {"x": 1}), ctx_for(FunctionTool(boom)))
    assert out.status == "error" and result_text(out.result) == "ZeroDivisionError: division by zero"


# --- definition errors ---------------------------------------------------------------------

class NotSerialisable:
    pass


def test_varargs_is_a_definition_error() -> None:
    def f(x: int, *args: int, **kwargs: int) -> None: ...

    with pytest.raises(ToolDefinitionError) as info:
        tool(f)
    text = str(info.value)
    assert "'f'" in text and "*args" in text and "**kwargs" in text


def test_unsupported_annotations_are_all_listed() -> None:
    def f(a: NotSerialisable, b: int, c: NotSerialisable) -> None: ...

    with pytest.raises(ToolDefinitionError) as info:
        tool(f)
    text = str(info.value)
    assert "'a'" in text and "'c'" in text and "NotSerialisable" in text
    assert "'b'" not in text


def test_every_problem_is_listed_at_once() -> None:
    def f(a: NotSerialisable, *args: int) -> None: ...

    with pytest.raises(ToolDefinitionError) as info:
        tool(f)
    text = str(info.value)
    assert "*args" in text and "'a'" in text


@pytest.mark.asyncio
async def test_positional_only_parameters() -> None:
    def add(a: int, b: int, /) -> int:
        return a + b

    try:
        t = FunctionTool(add)
    except ToolDefinitionError:
        return  # refusing the function up front would be fine too
    out = await run_tool_use(use("add", {"a": 1, "b": 2}), ctx_for(t))
    assert out.result["content"] == "3"


def test_tool_names_outside_the_api_alphabet_are_refused() -> None:
    def café(x: int) -> int:
        return x

    with pytest.raises(ToolDefinitionError):
        tool(café)


# --- found fresh before every request ----------------------------------------------------------

@pytest.mark.asyncio
async def test_a_function_redefined_between_requests_is_what_the_next_request_sees() -> None:
    ns: dict[str, Any] = {}
    calls: list[str] = []

    def define_v1() -> None:
        @tool(read_only=True)
        def f(x: int) -> str:
            calls.append(f"v1({x})")
            return "v1"

        ns["f"] = f

    def define_v2() -> None:
        @tool(read_only=True)
        def f(x: int, y: int = 0) -> str:
            calls.append(f"v2({x},{y})")
            return "v2"

        ns["f"] = f

    define_v1()
    requests: list[dict[str, Any]] = []

    def turns(body: dict[str, Any]) -> Any:
        requests.append(body)
        n = len(requests)
        if n == 1:
            return [tool_use_block("f", {"x": 1})]
        if n == 2:
            define_v2()  # after the request that ran v1, before the next one
            return "noted"
        if n == 3:
            return [tool_use_block("f", {"x": 2, "y": 5})]
        return "done"

    session = Session()
    config = namespace_config(ScriptedModel(turns), ns)
    await run(session, "first", config)
    await run(session, "second", config)

    def f_schema(body: dict[str, Any]) -> dict[str, Any]:
        return next(t for t in body["tools"] if t["name"] == "f")["input_schema"]

    assert len(requests) == 4
    assert set(f_schema(requests[0])["properties"]) == {"x"}
    assert set(f_schema(requests[2])["properties"]) == {"x", "y"}
    assert calls == ["v1(1)", "v2(2,5)"]
    assert_valid_transcript(session.messages)


@pytest.mark.asyncio
async def test_a_tool_call_that_redefines_a_function_changes_the_next_request() -> None:
    ns: dict[str, Any] = {}
    calls: list[str] = []

    @tool(read_only=True)
    def greet() -> str:
        calls.append("old")
        return "hello"

    ns["greet"] = greet

    @tool(read_only=False)
    def redefine() -> str:  # what RunPython does when the model edits a function
        @tool(read_only=True)
        def greet() -> str:
            calls.append("new")
            return "bonjour"

        ns["greet"] = greet
        return "redefined"

    ns["redefine"] = redefine
    model = ScriptedModel([
        [tool_use_block("greet"), tool_use_block("redefine")],
        [tool_use_block("greet")],
        "done",
    ])
    session = Session()
    events = await run(session, "go", namespace_config(model, ns))
    assert finished(events).reason == "end_turn"
    assert calls == ["old", "new"]
    contents = [r["content"] for r in tool_results(session.messages).values()]
    assert contents == ["hello", "redefined", "bonjour"]


def test_redefinition_wins_over_a_stale_reference_in_the_namespace() -> None:
    @tool
    def f(x: int) -> str:
        return "v1"

    ns: dict[str, Any] = {"f": f}
    ns["_5"] = f  # the cell that displayed `f` left it in the output history

    @tool
    def f(x: int) -> str:  # noqa: F811
        return "v2"

    ns["f"] = f
    pool = ToolPool(tools_from_namespace(ns))
    assert pool.find("f").fn is f  # type: ignore[union-attr]
