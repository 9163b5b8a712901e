"""SPEC §3 stage 9: how a tool's output becomes its one tool_result (empty output, size
budgets, the full text kept for ReadToolOutput, images, cut error messages)."""

from __future__ import annotations

import base64
import re
import struct
import zlib
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from jupyter_toolagent.core.read_tool_output import ReadToolOutput
from jupyter_toolagent.core.results import (
    ToolOutputStore,
    content_text_length,
    enforce_message_budget,
    package_result,
    truncate_middle,
)
from jupyter_toolagent.core.run_tool_use import run_tool_use
from jupyter_toolagent.core.tool import Progress, Tool, ToolResult, ToolUseContext

from runtime_support import ctx_for, result_text


def tiny_png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0\0\0\0")) + chunk(b"IEND", b"")


class NoInput(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Returns(Tool):
    """Returns whatever it was built with."""

    input_model = NoInput

    def __init__(self, name: str, value: Any, *, max_result_chars: int | None = None) -> None:
        self.name = name
        self.value = value
        self.max_result_chars = max_result_chars

    async def call(self, input: BaseModel, ctx: ToolUseContext, progress: Progress) -> Any:
        return self.value


async def result_of(value: Any, name: str = "Emit", tool_use_id: str = "toolu_1", **ctx_kw: Any) -> dict[str, Any]:
    out = await run_tool_use({"type": "tool_use", "id": tool_use_id, "name": name, "input": {}},
                             ctx_for(Returns(name, value), **ctx_kw))
    return out.result


def read_output(tool_use_id: str, **input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_read_{input.get('offset', 0)}", "name": "ReadToolOutput",
            "input": {"tool_use_id": tool_use_id, **input}}


@pytest.mark.asyncio
@pytest.mark.parametrize("value", [None, "", "   \n", ToolResult(""), [{"type": "text", "text": ""}]])
async def test_empty_output_says_completed_with_no_output(value: Any) -> None:
    result = await result_of(value)
    assert result["content"] == "(Emit completed with no output)"
    assert "is_error" not in result


@pytest.mark.asyncio
async def test_json_output_is_sent_as_text() -> None:
    result = await result_of({"rows": 3, "cols": ["a", "b"]})
    assert result["content"] == '{"rows": 3, "cols": ["a", "b"]}'


@pytest.mark.asyncio
async def test_image_bytes_become_a_base64_image_block() -> None:
    png = tiny_png()
    result = await result_of(png)
    [block] = result["content"]
    assert block["type"] == "image"
    assert block["source"]["type"] == "base64" and block["source"]["media_type"] == "image/png"
    assert base64.b64decode(block["source"]["data"]) == png


@pytest.mark.asyncio
async def test_text_and_image_blocks_are_kept_in_order() -> None:
    png_block = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}
    result = await result_of([{"type": "text", "text": "a plot:"}, png_block])
    assert result["content"] == [{"type": "text", "text": "a plot:"}, png_block]


@pytest.mark.asyncio
async def test_output_over_the_budget_is_previewed_and_kept_whole() -> None:
    full = "".join(f"line {i:06d}\n" for i in range(10_000))  # 120,000 characters
    store = ToolOutputStore()
    result = await result_of(full, tool_use_id="toolu_big", outputs=store)
    text = result_text(result)
    assert text.startswith(full[:50_000])
    assert full[50_000:50_100] not in text
    assert "120,000 characters in total" in text
    assert 'ReadToolOutput with tool_use_id="toolu_big" and offset=50000' in text
    assert len(text) < 50_000 + 400
    assert store.get("toolu_big") == full


@pytest.mark.asyncio
async def test_the_rest_is_readable_through_read_tool_output() -> None:
    full = "".join(f"row {i:07d}\n" for i in range(9_000))  # 108,000 characters
    store = ToolOutputStore()
    await result_of(full, tool_use_id="toolu_big", outputs=store)
    ctx = ctx_for(ReadToolOutput(), outputs=store)
    pieces: list[str] = []
    offset = 50_000
    while True:  # follow the offsets the results give, with the default limit
        out = await run_tool_use(read_output("toolu_big", offset=offset), ctx)
        assert out.status == "done"
        header, _, chunk = result_text(out.result).partition("\n")
        pieces.append(chunk)
        match = re.search(r"offset=(\d+)", header)
        if not match:
            assert "This is the end." in header
            break
        offset = int(match.group(1))
    assert full[:50_000] + "".join(pieces) == full


@pytest.mark.asyncio
async def test_read_tool_output_with_its_largest_limit_is_not_cut_again() -> None:
    full = "z" * 150_000
    store = ToolOutputStore()
    await result_of(full, tool_use_id="toolu_big", outputs=store)
    out = await run_tool_use(read_output("toolu_big", offset=50_000, limit=50_000), ctx_for(ReadToolOutput(), outputs=store))
    text = result_text(out.result)
    assert "Output cut" not in text
    assert text.partition("\n")[2] == full[50_000:100_000]


@pytest.mark.asyncio
async def test_read_tool_output_for_an_unknown_id_is_an_error() -> None:
    out = await run_tool_use(read_output("toolu_nope"), ctx_for(ReadToolOutput(), outputs=ToolOutputStore()))
    assert out.result["is_error"] is True and "toolu_nope" in result_text(out.result)


@pytest.mark.asyncio
async def test_per_tool_budget_overrides_the_session_budget() -> None:
    out = await run_tool_use({"type": "tool_use", "id": "toolu_1", "name": "Small", "input": {}},
                             ctx_for(Returns("Small", "x" * 500, max_result_chars=100), outputs=ToolOutputStore()))
    text = result_text(out.result)
    assert text.startswith("x" * 100) and "x" * 101 not in text
    assert "500 characters in total" in text


def _results(sizes: list[int]) -> list[dict[str, Any]]:
    return [{"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": chr(ord("a") + i) * n}
            for i, n in enumerate(sizes)]


def test_message_budget_cuts_the_largest_results_first_and_keeps_them() -> None:
    store = ToolOutputStore()
    results = _results([150_000, 120_000, 300, 2_000])
    out = enforce_message_budget(results, 200_000, store)
    assert [r["tool_use_id"] for r in out] == ["toolu_0", "toolu_1", "toolu_2", "toolu_3"]
    assert out[2] == results[2] and out[3] == results[3]  # small results untouched
    assert "Output cut" in result_text(out[0])
    assert store.get("toolu_0") == results[0]["content"]
    assert sum(content_text_length(r["content"]) for r in out) < 272_300


def test_message_budget_leaves_a_message_under_it_alone() -> None:
    results = _results([100_000, 99_000])
    assert enforce_message_budget(results, 200_000, ToolOutputStore()) == results


def test_message_budget_is_a_bound() -> None:
    out = enforce_message_budget(_results([45_000] * 6), 200_000, ToolOutputStore())
    assert sum(content_text_length(r["content"]) for r in out) <= 200_000


def test_message_budget_keeps_the_full_output_of_an_already_cut_result() -> None:
    store = ToolOutputStore()
    fulls = {f"toolu_{i}": f"{i}" * 80_000 for i in range(5)}
    results = [package_result(tool_use_id=k, tool_name="Big", content=v, is_error=False, budget=50_000, store=store)
               for k, v in fulls.items()]
    enforce_message_budget(results, 200_000, store)
    for tool_use_id, full in fulls.items():
        assert store.get(tool_use_id) == full


def test_truncate_middle_keeps_head_and_tail_within_the_limit() -> None:
    text = "A" * 5_000 + "B" * 10_000 + "C" * 5_000
    cut = truncate_middle(text, 10_000)
    assert len(cut) <= 10_000
    assert cut.startswith("A" * 4_000) and cut.endswith("C" * 4_000)
    assert truncate_middle("short", 10) == "short"


def test_truncate_middle_says_exactly_how_much_was_cut() -> None:
    text = "".join(f"{i:05d}" for i in range(4_000))  # 20,000 characters
    cut = truncate_middle(text, 10_000)
    claimed = int(re.search(r"\[\.\.\. ([\d,]+) characters cut", cut).group(1).replace(",", ""))
    head, _, rest = cut.partition("\n[...")
    tail = rest.split("...]\n", 1)[1]
    assert text.startswith(head) and text.endswith(tail)
    assert claimed == len(text) - len(head) - len(tail)
