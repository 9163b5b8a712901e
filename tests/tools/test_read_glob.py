"""Read and Glob: happy paths, refusals, and what hooks and permission rules are told."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest
from tool_support import call, images_of, text_of

from jupyter_toolagent.core.permission_types import FileAccess
from jupyter_toolagent.tools import Glob, Read

TINY_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


# --- Read -----------------------------------------------------------------------------------------
@pytest.mark.asyncio
async def test_read_numbers_lines_like_cat_n(tmp_path: Path, ctx_in: Any) -> None:
    (tmp_path / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    text = text_of(await call(ctx_in(), "Read", file_path="notes.txt"))
    assert text == "     1\talpha\n     2\tbeta\n     3\tgamma"


@pytest.mark.asyncio
async def test_read_offset_and_limit_say_where_the_file_continues(tmp_path: Path, ctx_in: Any) -> None:
    (tmp_path / "long.txt").write_text("".join(f"line {i}\n" for i in range(1, 101)))
    text = text_of(await call(ctx_in(), "Read", file_path="long.txt", offset=10, limit=3))
    assert text.splitlines()[:3] == ["    10\tline 10", "    11\tline 11", "    12\tline 12"]
    assert "offset=13" in text
    past = text_of(await call(ctx_in(), "Read", file_path="long.txt", offset=500))
    assert "has 100 lines" in past


@pytest.mark.asyncio
async def test_read_cuts_very_long_lines(tmp_path: Path, ctx_in: Any) -> None:
    (tmp_path / "wide.json").write_text("{" + "x" * 50_000 + "}\n")
    text = text_of(await call(ctx_in(), "Read", file_path="wide.json"))
    assert len(text) < 3_000 and "line cut" in text


@pytest.mark.asyncio
async def test_read_refuses_binary_files_and_directories(tmp_path: Path, ctx_in: Any) -> None:
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02" * 100)
    (tmp_path / "folder").mkdir()
    outcome = await call(ctx_in(), "Read", file_path="blob.bin")
    assert outcome.is_error and "binary file" in text_of(outcome)
    outcome = await call(ctx_in(), "Read", file_path="folder")
    assert outcome.is_error and "is a directory" in text_of(outcome)


@pytest.mark.asyncio
async def test_read_missing_file_suggests_glob(ctx_in: Any) -> None:
    outcome = await call(ctx_in(), "Read", file_path="nope.txt")
    assert outcome.is_error and "does not exist" in text_of(outcome) and "Glob" in text_of(outcome)


@pytest.mark.asyncio
async def test_read_refuses_a_fifo_instead_of_blocking(tmp_path: Path, ctx_in: Any) -> None:
    os.mkfifo(tmp_path / "pipe")
    outcome = await call(ctx_in(), "Read", file_path="pipe")
    assert outcome.is_error and "not a regular file" in text_of(outcome)


@pytest.mark.asyncio
async def test_read_returns_images_as_image_blocks(tmp_path: Path, ctx_in: Any) -> None:
    (tmp_path / "dot.png").write_bytes(TINY_PNG)
    outcome = await call(ctx_in(), "Read", file_path="dot.png")
    assert images_of(outcome) == [TINY_PNG]


@pytest.mark.asyncio
async def test_empty_file(tmp_path: Path, ctx_in: Any) -> None:
    (tmp_path / "empty.txt").write_text("")
    assert "is empty" in text_of(await call(ctx_in(), "Read", file_path="empty.txt"))


def test_hooks_see_the_absolute_path_and_rules_the_resolved_one(tmp_path: Path, ctx_in: Any) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "data.csv").write_text("a\n")
    (tmp_path / "link").symlink_to(real)
    ctx = ctx_in()
    read = Read()
    parsed = read.input_model.model_validate({"file_path": "link/../link/data.csv"})
    assert read.observable_input(parsed, ctx)["file_path"] == str(tmp_path / "link" / "data.csv")
    assert read.permission_subject(parsed, ctx) == FileAccess(str((real / "data.csv").resolve()), "read")


def test_glob_permission_subject_is_where_the_pattern_walks(tmp_path: Path, ctx_in: Any) -> None:
    glob = Glob()
    parsed = glob.input_model.model_validate({"pattern": "../elsewhere/*.txt"})
    subject = glob.permission_subject(parsed, ctx_in())
    assert subject == FileAccess(os.path.realpath(tmp_path.parent / "elsewhere"), "read")
    assert glob.observable_input(parsed, ctx_in())["path"] == str(tmp_path)


# --- Glob -----------------------------------------------------------------------------------------
def _touch(path: Path, mtime: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x")
    os.utime(path, (mtime, mtime))


@pytest.mark.asyncio
async def test_glob_lists_newest_first_with_ties_by_path(tmp_path: Path, ctx_in: Any) -> None:
    _touch(tmp_path / "old.py", 1_000)
    _touch(tmp_path / "b_new.py", 3_000)
    _touch(tmp_path / "a_new.py", 3_000)
    _touch(tmp_path / "pkg" / "mid.py", 2_000)
    _touch(tmp_path / "notes.txt", 5_000)
    text = text_of(await call(ctx_in(), "Glob", pattern="**/*.py"))
    assert text.splitlines() == ["a_new.py", "b_new.py", "pkg/mid.py", "old.py"]
    assert text_of(await call(ctx_in(), "Glob", pattern="*.py")).splitlines() == ["a_new.py", "b_new.py", "old.py"]
    assert text_of(await call(ctx_in(), "Glob", pattern="*.{txt,py}")).splitlines()[0] == "notes.txt"


@pytest.mark.asyncio
async def test_glob_skips_hidden_entries_unless_the_pattern_names_them(tmp_path: Path, ctx_in: Any) -> None:
    _touch(tmp_path / "visible.yml", 1)
    _touch(tmp_path / ".github" / "ci.yml", 2)
    _touch(tmp_path / ".env", 3)
    assert text_of(await call(ctx_in(), "Glob", pattern="**/*.yml")) == "visible.yml"
    assert text_of(await call(ctx_in(), "Glob", pattern=".github/*.yml")) == ".github/ci.yml"
    assert text_of(await call(ctx_in(), "Glob", pattern=".env")) == ".env"


@pytest.mark.asyncio
async def test_glob_returns_at_most_100_paths_and_says_how_many_more(tmp_path: Path, ctx_in: Any) -> None:
    for i in range(130):
        _touch(tmp_path / "many" / f"f{i:03d}.txt", 1_000 + i)
    lines = text_of(await call(ctx_in(), "Glob", pattern="many/*.txt")).splitlines()
    assert len(lines) == 101 and lines[0] == "many/f129.txt" and "30 more files" in lines[-1]


@pytest.mark.asyncio
async def test_glob_in_another_directory_and_missing_directories(tmp_path: Path, ctx_in: Any) -> None:
    _touch(tmp_path / "sub" / "x.csv", 1)
    assert text_of(await call(ctx_in(), "Glob", pattern="*.csv", path="sub")) == "sub/x.csv"
    assert "No files match" in text_of(await call(ctx_in(), "Glob", pattern="*.parquet"))
    outcome = await call(ctx_in(), "Glob", pattern="*", path="missing")
    assert outcome.is_error and "does not exist" in text_of(outcome)
