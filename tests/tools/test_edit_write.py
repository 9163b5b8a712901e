"""Edit (exactly-once replacement, diffs, line endings) and Write (create, overwrite, parents).

Each test Reads a file before changing it, as the read-before-edit rule requires (its own
tests are in `test_read_before_edit`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tool_support import call, text_of

from jupyter_toolagent.core.file_state import FileStamp
from jupyter_toolagent.core.permission_types import FileAccess
from jupyter_toolagent.tools import Edit, Write


@pytest.mark.asyncio
async def test_one_match_is_replaced_and_a_diff_is_returned(tmp_path: Path, ctx_in: Any) -> None:
    target = tmp_path / "app.py"
    target.write_text("def f():\n    return 1\n\nprint(f())\n")
    ctx = ctx_in()
    await call(ctx, "Read", file_path="app.py")
    outcome = await call(ctx, "Edit", file_path="app.py", old_string="return 1", new_string="return 2")
    text = text_of(outcome)
    assert outcome.status == "done"
    assert target.read_text() == "def f():\n    return 2\n\nprint(f())\n"
    assert "replaced 1 occurrence" in text and "-    return 1" in text and "+    return 2" in text
    assert "--- a/app.py" in text


@pytest.mark.asyncio
async def test_zero_matches_is_an_error_that_says_what_to_do(tmp_path: Path, ctx_in: Any) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    ctx = ctx_in()
    await call(ctx, "Read", file_path="a.txt")
    outcome = await call(ctx, "Edit", file_path="a.txt", old_string="goodbye", new_string="x")
    assert outcome.is_error and "not found" in text_of(outcome) and "Read the file" in text_of(outcome)
    assert (tmp_path / "a.txt").read_text() == "hello\n"


@pytest.mark.asyncio
async def test_two_matches_is_an_error_unless_replace_all(tmp_path: Path, ctx_in: Any) -> None:
    target = tmp_path / "a.txt"
    target.write_text("x = 1\ny = 1\n")
    ctx = ctx_in()
    await call(ctx, "Read", file_path="a.txt")
    outcome = await call(ctx, "Edit", file_path="a.txt", old_string="= 1", new_string="= 2")
    assert outcome.is_error and "occurs 2 times" in text_of(outcome) and "replace_all" in text_of(outcome)
    assert target.read_text() == "x = 1\ny = 1\n"
    outcome = await call(ctx, "Edit", file_path="a.txt", old_string="= 1", new_string="= 2", replace_all=True)
    assert not outcome.is_error and "replaced 2 occurrences" in text_of(outcome)
    assert target.read_text() == "x = 2\ny = 2\n"


@pytest.mark.asyncio
async def test_crlf_files_stay_crlf(tmp_path: Path, ctx_in: Any) -> None:
    target = tmp_path / "win.txt"
    target.write_bytes(b"first\r\nsecond\r\nthird\r\n")
    ctx = ctx_in()
    await call(ctx, "Read", file_path="win.txt")
    outcome = await call(ctx, "Edit", file_path="win.txt", old_string="first\nsecond", new_string="one\ntwo")
    assert not outcome.is_error, text_of(outcome)
    assert target.read_bytes() == b"one\r\ntwo\r\nthird\r\n"


@pytest.mark.asyncio
async def test_edit_refusals(tmp_path: Path, ctx_in: Any) -> None:
    (tmp_path / "a.txt").write_text("same\n")
    (tmp_path / "blob.bin").write_bytes(b"\x00abc")
    ctx = ctx_in()
    await call(ctx, "Read", file_path="a.txt")
    ctx.file_reads.record(tmp_path / "blob.bin", FileStamp.of_path(tmp_path / "blob.bin"))  # Read refuses binaries
    outcome = await call(ctx, "Edit", file_path="a.txt", old_string="same", new_string="same")
    assert outcome.status == "invalid" and "identical" in text_of(outcome)
    outcome = await call(ctx, "Edit", file_path="a.txt", old_string="", new_string="x")
    assert outcome.status == "invalid"
    outcome = await call(ctx, "Edit", file_path="missing.txt", old_string="a", new_string="b")
    assert outcome.is_error and "Use Write" in text_of(outcome)
    outcome = await call(ctx, "Edit", file_path="blob.bin", old_string="abc", new_string="x")
    assert outcome.is_error and "binary" in text_of(outcome)


@pytest.mark.asyncio
async def test_write_creates_parents_and_reports_briefly(tmp_path: Path, ctx_in: Any) -> None:
    content = "a\nb\nc\n"
    ctx = ctx_in()
    outcome = await call(ctx, "Write", file_path="deep/er/out.txt", content=content)
    assert (tmp_path / "deep" / "er" / "out.txt").read_text() == content
    assert text_of(outcome) == "Created (3 lines, 6 bytes): deep/er/out.txt"
    outcome = await call(ctx, "Write", file_path="deep/er/out.txt", content="z")  # its own Write counts as seen
    assert text_of(outcome).startswith("Overwrote (1 line, 1 byte)")
    assert (tmp_path / "deep" / "er" / "out.txt").read_text() == "z"


@pytest.mark.asyncio
async def test_write_to_a_directory_is_an_error(tmp_path: Path, ctx_in: Any) -> None:
    (tmp_path / "d").mkdir()
    outcome = await call(ctx_in(), "Write", file_path="d", content="x")
    assert outcome.is_error and "is a directory" in text_of(outcome)


def test_edit_and_write_ask_for_edit_access_on_the_resolved_path(tmp_path: Path, ctx_in: Any) -> None:
    for tool, raw in ((Edit(), {"file_path": "x/../y.txt", "old_string": "a", "new_string": "b"}),
                      (Write(), {"file_path": "x/../y.txt", "content": ""})):
        parsed = tool.input_model.model_validate(raw)
        assert tool.permission_subject(parsed, ctx_in()) == FileAccess(str((tmp_path / "y.txt").resolve()), "edit")
        assert not tool.is_read_only(parsed) and not tool.is_concurrency_safe(parsed)


@pytest.mark.asyncio
async def test_the_diff_header_names_the_file_without_a_doubled_slash(tmp_path: Path, ctx_in: Any) -> None:
    inside = tmp_path / "pkg" / "mod.py"
    inside.parent.mkdir()
    inside.write_text("a = 1\n")
    outside_dir = tmp_path.parent / f"{tmp_path.name}-elsewhere"
    outside_dir.mkdir()
    outside = outside_dir / "conf.py"
    outside.write_text("b = 1\n")
    ctx = ctx_in()
    for path in (inside, outside):
        await call(ctx, "Read", file_path=str(path))
    by_absolute_path = text_of(await call(ctx, "Edit", file_path=str(inside), old_string="a = 1", new_string="a = 2"))
    assert "--- a/pkg/mod.py\n+++ b/pkg/mod.py" in by_absolute_path
    elsewhere = text_of(await call(ctx, "Edit", file_path=str(outside), old_string="b = 1", new_string="b = 2"))
    assert f"--- a{outside}\n+++ b{outside}" in elsewhere and "a//" not in elsewhere and "b//" not in elsewhere
