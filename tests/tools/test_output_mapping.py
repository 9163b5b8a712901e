"""What a @tool function's return value becomes (map_return_value), including through the pipeline."""

from __future__ import annotations

import base64
import json
import time
from typing import Any

import pytest
from tool_support import PNG_SIGNATURE, allow_all

from jupyter_toolagent import tool
from jupyter_toolagent.core.run_tool_use import run_tool_use
from jupyter_toolagent.core.tool import ToolOptions, ToolPool, ToolUseContext
from jupyter_toolagent.tools import map_return_value

TINY_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def test_strings_none_and_json_values() -> None:
    assert map_return_value("as is") == "as is"
    assert map_return_value(None) == ""
    assert json.loads(map_return_value({"a": [1, 2.5, True, None]})) == {"a": [1, 2.5, True, None]}
    assert map_return_value((1, 2)) == "[1, 2]"
    assert map_return_value(3) == "3" and map_return_value(False) == "false"
    assert map_return_value({"ü": "é"}) == '{"ü": "é"}'
    assert map_return_value(float("nan")) == '"nan"'


def test_values_json_cannot_hold_fall_back_to_a_bounded_repr() -> None:
    class Thing:
        def __repr__(self) -> str:
            return "Thing()"

    assert map_return_value({"t": Thing()}) == "{'t': Thing()}"
    assert map_return_value(Thing()) == "Thing()"
    loop: list[Any] = []
    loop.append(loop)
    assert "..." in map_return_value(loop)


def test_tables_and_arrays_are_summarised_not_dumped() -> None:
    np = pytest.importorskip("numpy")
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": np.arange(100_000)})
    text = map_return_value(frame)
    assert "100,000 rows × 1 columns" in text and len(text) <= 4_000
    assert "shape (1000,)" in map_return_value(np.arange(1000))
    assert map_return_value(np.float64(2.5)) == "2.5"


def test_images_from_bytes_and_figures() -> None:
    blocks = map_return_value(TINY_PNG)
    assert blocks[0]["type"] == "image" and blocks[0]["source"]["media_type"] == "image/png"
    assert map_return_value(b"\x00\x01") == [{"type": "text", "text": "<2 bytes of binary data>"}]
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure()
    fig.add_subplot().plot([1, 2])
    (image,) = map_return_value(fig)
    assert base64.b64decode(image["source"]["data"]).startswith(PNG_SIGNATURE)


def test_content_blocks_pass_through() -> None:
    blocks = [{"type": "text", "text": "hi"}]
    assert map_return_value(blocks) == blocks


def test_a_hanging_repr_does_not_hang_the_result() -> None:
    class Hangs:
        def __repr__(self) -> str:
            time.sleep(30)
            return "never"

    start = time.perf_counter()
    assert "did not finish" in map_return_value(Hangs())
    assert time.perf_counter() - start < 5


@pytest.mark.asyncio
async def test_a_tool_function_returning_a_frame_reaches_the_model_as_a_summary() -> None:
    pd = pytest.importorskip("pandas")

    @tool(read_only=True)
    def sales() -> Any:
        """Sales table."""
        return pd.DataFrame({"region": ["eu", "us"], "revenue": [3.0, 4.0]})

    ctx = ToolUseContext(tools=ToolPool([sales.__toolagent_tool__]), can_use_tool=allow_all, options=ToolOptions())
    outcome = await run_tool_use({"type": "tool_use", "id": "toolu_x", "name": "sales", "input": {}}, ctx)
    assert "2 rows × 2 columns" in outcome.result["content"] and "revenue: float64" in outcome.result["content"]
