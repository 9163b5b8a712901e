"""RunPython: runs like a cell, reports prints, values, errors and figures, and obeys Stop."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from tool_support import PNG_SIGNATURE, call, images_of, text_of

from jupyter_toolagent.core.abort import KERNEL_INTERRUPT
from jupyter_toolagent.core.scheduling import run_tools
from jupyter_toolagent.tools.python_exec import Execution


@pytest.mark.asyncio
async def test_a_variable_defined_by_run_python_is_seen_by_inspect_variable(ctx_in: Any) -> None:
    namespace: dict[str, Any] = {}
    ctx = ctx_in(namespace)
    outcome = await call(ctx, "RunPython", code="totals = {'eu': 3, 'us': 4}\nlen(totals)")
    assert outcome.status == "done" and text_of(outcome) == "Names: bound totals\nOut: 2"
    assert namespace["totals"] == {"eu": 3, "us": 4}
    assert "'eu': 3" in text_of(await call(ctx, "InspectVariable", path="totals"))


@pytest.mark.asyncio
async def test_prints_are_in_the_result_interleaved_and_not_on_the_real_stdout(
    ctx_in: Any, capfd: pytest.CaptureFixture[str]
) -> None:
    code = "import sys\nprint('one')\nprint('two', file=sys.stderr)\nprint('three')"
    outcome = await call(ctx_in({}), "RunPython", code=code)
    assert text_of(outcome) == "Names: bound sys\none\ntwo\nthree"
    out, err = capfd.readouterr()
    assert "one" not in out and "two" not in err


@pytest.mark.asyncio
async def test_a_trailing_semicolon_hides_the_value_as_in_a_cell(ctx_in: Any) -> None:
    namespace: dict[str, Any] = {}
    outcome = await call(ctx_in(namespace), "RunPython", code="seen = []\nseen.append(1) or 5;  # quiet")
    assert text_of(outcome) == "Names: bound seen" and namespace["seen"] == [1]
    assert text_of(await call(ctx_in({}), "RunPython", code="x = ';'\nx")) == "Names: bound x\nOut: ';'"


@pytest.mark.asyncio
async def test_no_output_says_so(ctx_in: Any) -> None:
    outcome = await call(ctx_in({}), "RunPython", code="x = 1")
    assert text_of(outcome) == "Names: bound x"
    outcome = await call(ctx_in({}), "RunPython", code="pass")
    assert text_of(outcome) == "(RunPython completed with no output)"


@pytest.mark.asyncio
async def test_top_level_await_works(ctx_in: Any) -> None:
    namespace: dict[str, Any] = {}
    outcome = await call(ctx_in(namespace), "RunPython",
                         code="import asyncio\nawait asyncio.sleep(0.01)\nvalue = await asyncio.sleep(0, result=5)\nvalue * 2")
    assert text_of(outcome) == "Names: bound asyncio, value\nOut: 10" and namespace["value"] == 5


@pytest.mark.asyncio
async def test_an_exception_is_an_error_with_a_clean_traceback_and_earlier_names_kept(ctx_in: Any) -> None:
    namespace: dict[str, Any] = {}
    code = "before = 'kept'\nprint('partial output')\ndef explode():\n    return {}['missing']\nexplode()\nafter = 1"
    outcome = await call(ctx_in(namespace), "RunPython", code=code)
    text = text_of(outcome)
    assert outcome.is_error and outcome.status == "error"
    assert text.startswith("partial output\nTraceback (most recent call last):")
    assert 'File "<RunPython-' in text and "return {}['missing']" in text and "KeyError: 'missing'" in text
    assert "jupyter_toolagent" not in text
    assert namespace["before"] == "kept" and "after" not in namespace


@pytest.mark.asyncio
async def test_a_syntax_error_shows_the_line_and_runs_nothing(ctx_in: Any) -> None:
    namespace: dict[str, Any] = {}
    outcome = await call(ctx_in(namespace), "RunPython", code="ran = True\nif ran:\n    print((")
    text = text_of(outcome)
    assert outcome.is_error and "SyntaxError" in text and "print((" in text and "Traceback" not in text
    assert "ran" not in namespace


@pytest.mark.asyncio
async def test_exit_does_not_end_the_kernel(ctx_in: Any) -> None:
    outcome = await call(ctx_in({}), "RunPython", code="import sys\nsys.exit(3)")
    assert outcome.is_error and "SystemExit: 3" in text_of(outcome) and "keeps running" in text_of(outcome)


@pytest.mark.asyncio
async def test_a_kernel_interrupt_is_an_error_and_aborts_the_run(ctx_in: Any) -> None:
    ctx = ctx_in({})
    outcome = await call(ctx, "RunPython", code="raise KeyboardInterrupt")
    assert outcome.is_error and "KeyboardInterrupt" in text_of(outcome) and "interrupted" in text_of(outcome)
    assert ctx.abort.aborted and ctx.abort.reason == KERNEL_INTERRUPT


@pytest.mark.asyncio
async def test_stop_takes_effect_at_an_await(ctx_in: Any) -> None:
    namespace: dict[str, Any] = {}
    ctx = ctx_in(namespace)
    block = {"type": "tool_use", "id": "toolu_stop", "name": "RunPython",
             "input": {"code": "import asyncio\nstarted = True\nawait asyncio.sleep(30)\nfinished = True"}}
    asyncio.get_running_loop().call_later(0.3, ctx.abort.abort, "stopped by test")
    start = time.perf_counter()
    outcome = (await run_tools([block], ctx)).outcomes[0]
    assert time.perf_counter() - start < 5
    assert outcome.status == "interrupted" and "stopped by test" in text_of(outcome)
    assert namespace.get("started") is True and "finished" not in namespace


@pytest.mark.asyncio
async def test_the_products_credentials_are_masked_in_output(ctx_in: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-abcdefgh")
    outcome = await call(ctx_in({}), "RunPython", code="import os\nprint(os.environ['ANTHROPIC_API_KEY'])")
    assert "sk-ant-test-abcdefgh" not in text_of(outcome) and "[redacted]" in text_of(outcome)


@pytest.mark.asyncio
async def test_a_runner_from_the_front_end_is_used(ctx_in: Any) -> None:
    seen: list[str] = []

    class Runner:
        async def run(self, code: str, namespace: dict[str, Any]) -> Execution:
            seen.append(code)
            return Execution(value=42, has_value=True, displays=[{"type": "text", "text": "displayed"}])

    outcome = await call(ctx_in({}, python_runner=Runner()), "RunPython", code="anything")
    assert seen == ["anything"] and text_of(outcome) == "displayed\nOut: 42"


@pytest.mark.asyncio
async def test_a_non_dict_namespace_is_refused(ctx_in: Any) -> None:
    outcome = await call(ctx_in(None), "RunPython", code="1")
    assert outcome.is_error and "namespace" in text_of(outcome)


# --- figures --------------------------------------------------------------------------------------
@pytest.fixture
def pyplot() -> Any:
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.close("all")
    yield plt
    plt.close("all")


@pytest.mark.asyncio
async def test_a_plot_comes_back_as_a_png_and_is_closed(ctx_in: Any, pyplot: Any) -> None:
    import matplotlib

    backend = matplotlib.get_backend()
    existing = pyplot.figure()
    code = "import matplotlib.pyplot as plt\nplt.figure()\nplt.plot([1, 3, 2])\nplt.title('trend')\nprint('plotted')"
    outcome = await call(ctx_in({}), "RunPython", code=code)
    images = images_of(outcome)
    assert outcome.status == "done" and text_of(outcome) == "Names: bound plt\nplotted"
    assert len(images) == 1 and images[0].startswith(PNG_SIGNATURE)
    assert pyplot.get_fignums() == [existing.number]  # the new one closed, the old one untouched
    assert matplotlib.get_backend() == backend


@pytest.mark.asyncio
async def test_a_figure_as_the_last_value_is_sent_once(ctx_in: Any, pyplot: Any) -> None:
    outcome = await call(ctx_in({}), "RunPython", code="import matplotlib.pyplot as plt\nfig = plt.figure()\nfig")
    assert len(images_of(outcome)) == 1 and pyplot.get_fignums() == []


@pytest.mark.asyncio
async def test_figures_of_failing_code_are_closed_and_the_error_is_text_only(ctx_in: Any, pyplot: Any) -> None:
    outcome = await call(ctx_in({}), "RunPython", code="import matplotlib.pyplot as plt\nplt.plot([1])\n1/0")
    assert outcome.is_error and isinstance(outcome.result["content"], str)
    assert "ZeroDivisionError" in text_of(outcome) and pyplot.get_fignums() == []
