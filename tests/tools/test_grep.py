"""Grep through the tool pipeline: modes, sorting, relative paths, limits, errors (Python backend
forced, so these run the same with or without ripgrep; test_grep_backends compares the two)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from grep_tree import build_tree, write
from tool_support import call, make_ctx, text_of


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return build_tree(tmp_path)


def python_ctx(cwd: Path) -> Any:
    return make_ctx(cwd, grep_backend="python")


@pytest.mark.asyncio
async def test_files_with_matches_is_sorted_relative_and_follows_ignore_rules(repo: Path) -> None:
    text = text_of(await call(python_ctx(repo), "Grep", pattern="hello", path="sub"))
    assert text.splitlines() == [
        "4 files with matches:", "sub/b.txt", "sub/deep/c.txt", "sub/important.log", "sub/rootonly.txt",
    ]


@pytest.mark.asyncio
async def test_content_mode_has_line_numbers_sorted_by_path_then_line(repo: Path) -> None:
    text = text_of(await call(python_ctx(repo), "Grep", pattern="hello|again", path="sub/deep", output_mode="content"))
    assert text.splitlines() == ["sub/deep/c.txt:1:hello deep", "sub/deep/c.txt:2:hello again"]


@pytest.mark.asyncio
async def test_count_mode_counts_matching_lines(repo: Path) -> None:
    text = text_of(await call(python_ctx(repo), "Grep", pattern="hello", path="sub", output_mode="count"))
    assert text.splitlines()[0] == "5 matching lines in 4 files:"
    assert "sub/deep/c.txt:2" in text.splitlines()


@pytest.mark.asyncio
async def test_case_insensitive_and_glob_filter(repo: Path) -> None:
    sensitive = text_of(await call(python_ctx(repo), "Grep", pattern="HELLO", path="sub/deep"))
    insensitive = text_of(await call(python_ctx(repo), "Grep", pattern="HELLO", path="sub/deep", case_insensitive=True))
    assert sensitive.startswith("No matches") and "sub/deep/c.txt" in insensitive
    logs = text_of(await call(python_ctx(repo), "Grep", pattern="hello", glob="*.log"))
    assert logs.splitlines()[1:] == ["keep.log", "sub/important.log", "x.log"]  # the filter wins over .gitignore


@pytest.mark.asyncio
async def test_paths_outside_the_working_directory_are_absolute(repo: Path, tmp_path: Path) -> None:
    text = text_of(await call(python_ctx(repo / "sub"), "Grep", pattern="hello plain", path=str(tmp_path / "plain"),
                              glob="*.txt"))
    assert text.splitlines()[1] == str(tmp_path / "plain" / "p.txt")


@pytest.mark.asyncio
async def test_head_limit_and_long_lines(repo: Path, tmp_path: Path) -> None:
    for i in range(30):
        write(tmp_path / "many", f"f{i:02d}.txt", "needle\n")
    text = text_of(await call(python_ctx(tmp_path), "Grep", pattern="needle", path="many", head_limit=5))
    assert text.splitlines()[1:6] == [f"many/f{i:02d}.txt" for i in range(5)] and "25 more not shown" in text
    text = text_of(await call(python_ctx(repo), "Grep", pattern="y{100}", output_mode="content"))
    assert "long.txt:1:hello " in text and "more characters]" in text and len(text) < 700


@pytest.mark.asyncio
async def test_invalid_patterns_and_paths_are_errors(repo: Path) -> None:
    outcome = await call(python_ctx(repo), "Grep", pattern="(unclosed")
    assert outcome.is_error and "Invalid pattern" in text_of(outcome)
    outcome = await call(python_ctx(repo), "Grep", pattern="x", path="missing")
    assert outcome.is_error and "does not exist" in text_of(outcome)
    outcome = await call(python_ctx(repo), "Grep", pattern="x", output_mode="lines")
    assert outcome.status == "invalid"


@pytest.mark.asyncio
async def test_the_default_backend_finds_the_same_files(repo: Path) -> None:
    forced = text_of(await call(python_ctx(repo), "Grep", pattern="hello", output_mode="content"))
    default = text_of(await call(make_ctx(repo), "Grep", pattern="hello", output_mode="content"))
    assert forced == default


def test_grep_reads_the_search_root() -> None:
    from jupyter_toolagent.core.permission_types import FileAccess
    from jupyter_toolagent.tools import Grep

    grep = Grep()
    parsed = grep.input_model.model_validate({"pattern": "x", "path": "/etc/../etc"})
    ctx = make_ctx(Path("/tmp"))
    assert grep.permission_subject(parsed, ctx) == FileAccess("/etc", "read")
    assert grep.observable_input(parsed, ctx)["path"] == "/etc"
    assert grep.is_read_only(parsed) and grep.is_concurrency_safe(parsed)


@pytest.mark.asyncio
async def test_files_a_read_deny_rule_covers_are_dropped(tmp_path: Path) -> None:
    permissions = pytest.importorskip("jupyter_toolagent.permissions")
    write(tmp_path, "open/a.txt", "token here\n")
    write(tmp_path, "secret/b.txt", "token here\n")
    ctx = python_ctx(tmp_path)
    ctx = ctx.replace(permissions=permissions.PermissionContext(cwd=tmp_path, deny=["Read(./secret/**)"]))
    text = text_of(await call(ctx, "Grep", pattern="token"))
    assert text.splitlines() == ["1 file with matches:", "open/a.txt",
                                 "(1 file with matches not shown: a deny rule covers them.)"]
    text = text_of(await call(ctx, "Glob", pattern="**/*.txt"))
    assert text.splitlines() == ["open/a.txt", "(1 matching file not shown: a deny rule covers them.)"]
