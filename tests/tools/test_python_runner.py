"""IPythonRunner: RunPython with a real IPython shell — magics, ! lines, __future__ flags, captured
display outputs, rich values — without touching the shell's history or execution count."""

from __future__ import annotations

import base64
from typing import Any, Iterator

import pytest
from tool_support import call, images_of, make_ctx, text_of

pytest.importorskip("IPython")

from jupyter_toolagent.notebook.python_runner import IPythonRunner  # noqa: E402
from jupyter_toolagent.tools.python_exec import FUTURE_FLAGS  # noqa: E402

TINY_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


@pytest.fixture
def shell() -> Iterator[Any]:
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.testing.globalipapp import get_ipython

    shell = get_ipython()
    # `display()` publishes through the current InteractiveShell instance; another test may have
    # left a different one current. In a kernel there is only one, so make this shell it.
    current = InteractiveShell._instance
    InteractiveShell._instance = shell
    flags = shell.compile.flags
    display_pub = shell.display_pub
    formatter = shell.display_formatter
    active = list(formatter.active_types)
    formatter.active_types = list(formatter.formatters)  # a kernel formats every type; a terminal only text
    yield shell
    formatter.active_types = active
    shell.compile.flags = flags
    InteractiveShell._instance = current
    assert shell.display_pub is display_pub
    for name in ("rt_value", "rt_lines", "rt_f", "rt_g", "Pic"):
        shell.user_ns.pop(name, None)


def ctx_for(shell: Any) -> Any:
    return make_ctx(namespace=shell.user_ns, python_runner=IPythonRunner(shell),
                    hidden_names=shell.user_ns_hidden)


@pytest.mark.asyncio
async def test_magics_and_shell_lines_run_as_in_a_cell(shell: Any) -> None:
    outcome = await call(ctx_for(shell), "RunPython", code="import math\nrt_value = %time math.sqrt(16)\nrt_lines = !echo hi")
    assert outcome.status == "done", text_of(outcome)
    assert shell.user_ns["rt_value"] == 4.0 and list(shell.user_ns["rt_lines"]) == ["hi"]
    assert "Wall time" in text_of(outcome)


@pytest.mark.asyncio
async def test_history_and_execution_count_are_untouched(shell: Any) -> None:
    count, inputs = shell.execution_count, len(shell.user_ns["In"])
    await call(ctx_for(shell), "RunPython", code="1 + 1")
    assert shell.execution_count == count and len(shell.user_ns["In"]) == inputs


@pytest.mark.asyncio
async def test_future_flags_carry_over_both_ways(shell: Any) -> None:
    ctx = ctx_for(shell)
    assert not shell.compile.flags & FUTURE_FLAGS & 0x1000000
    await call(ctx, "RunPython", code="from __future__ import annotations")
    outcome = await call(ctx, "RunPython", code="def rt_f(a: NotDefinedAnywhere): pass\nrt_f.__annotations__")
    assert text_of(outcome) == "Names: bound rt_f\nOut: {'a': 'NotDefinedAnywhere'}"
    shell.compile.flags &= ~FUTURE_FLAGS
    outcome = await call(ctx, "RunPython", code="def rt_g(a: NotDefinedAnywhere): pass")
    assert outcome.is_error and "NameError" in text_of(outcome)


@pytest.mark.asyncio
async def test_display_outputs_come_back_instead_of_going_to_the_cell(shell: Any, capfd: pytest.CaptureFixture[str]) -> None:
    code = "from IPython.display import display, Markdown\nprint('before')\ndisplay(Markdown('**shown**'))"
    outcome = await call(ctx_for(shell), "RunPython", code=code)
    assert text_of(outcome) == "Names: bound display, Markdown\nbefore\n**shown**"
    assert "shown" not in capfd.readouterr().out


@pytest.mark.asyncio
async def test_cleared_displays_are_dropped(shell: Any) -> None:
    code = ("from IPython.display import display, clear_output\n"
            "display('first')\nclear_output()\ndisplay('second')")
    assert text_of(await call(ctx_for(shell), "RunPython", code=code)) == "Names: bound clear_output\n'second'"


@pytest.mark.asyncio
async def test_the_value_uses_the_shells_rich_formatting(shell: Any) -> None:
    shell.user_ns["TINY"] = TINY_PNG
    code = "class Pic:\n    def _repr_png_(self):\n        return TINY\nPic()"
    outcome = await call(ctx_for(shell), "RunPython", code=code)
    shell.user_ns.pop("TINY")
    assert images_of(outcome) == [TINY_PNG]


@pytest.mark.asyncio
async def test_errors_show_the_users_code_not_the_product(shell: Any) -> None:
    outcome = await call(ctx_for(shell), "RunPython", code="x = 1\n%time 1/0")
    text = text_of(outcome)
    assert outcome.is_error and "ZeroDivisionError" in text and "jupyter_toolagent" not in text


@pytest.mark.asyncio
async def test_list_variables_honours_the_shells_hidden_names(shell: Any) -> None:
    shell.user_ns_hidden["rt_value"] = shell.user_ns.setdefault("rt_value", 3)
    try:
        text = text_of(await call(ctx_for(shell), "ListVariables"))
    finally:
        shell.user_ns_hidden.pop("rt_value", None)
    assert "rt_value" not in text
