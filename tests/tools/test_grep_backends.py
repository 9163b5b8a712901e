"""Grep gives the same text with ripgrep and with the Python backend.

Every case runs both backends on the same tree and compares the formatted output in all three
modes. Without ripgrep the comparison cannot run: locally that is a skip, but under CI (where
ripgrep is installed on purpose) it is a failure, so a missing ``rg`` never passes silently.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from grep_tree import build_tree

from jupyter_toolagent.tools.grep import format_result, run_search
from jupyter_toolagent.tools.grep_search import SearchQuery

CASES: list[tuple[str, str, str, tuple[str, ...], bool]] = [
    # (id, path relative to the tree root, pattern, globs, ignore case)
    ("everything", "repo", "hello", (), False),
    ("ignore-case", "repo", "HELLO", (), True),
    ("subdirectory-parent-gitignore", "repo/sub", "hello", (), False),
    ("deep-subdirectory", "repo/sub/deep", "hello", (), False),
    ("glob-overrides-gitignore", "repo", "hello", ("*.log",), False),
    ("glob-includes-hidden-file", "repo", "hello", ("*.txt",), False),
    ("glob-exclude-dir", "repo", "hello", ("!sub",), False),
    ("glob-anchored", "repo", "hello", ("sub/*.txt",), False),
    ("glob-braces-recursive", "repo", "hello", ("**/*.{txt,md}",), False),
    ("glob-exclude-only", "repo", "hello", ("!*.txt",), False),
    ("glob-two-filters", "repo", "hello", ("*.txt", "!sub/**"), False),
    ("explicit-ignored-file", "repo/x.log", "hello", (), False),
    ("explicit-binary-file", "repo/bin_late.dat", "hello", (), False),
    ("explicit-ignored-dir", "repo/build", "hello", (), False),
    ("outside-any-repo", "plain", "hello", (), False),
    ("nested-repo", "repo/nested", "hello", (), False),
    ("regex-anchors", "repo", r"^hel+o\b", (), False),
    ("end-of-line-with-crlf", "repo", "world$", (), False),
    ("unicode", "repo", "wörld|École", (), False),
    ("every-line", "repo/sub", "^", (), False),
    ("no-match", "repo", "zebra-crossing", (), False),
    ("inline-flag", "repo", "(?i)capital", (), False),
    ("pattern-starting-with-dashes", "repo", "--hello", (), False),
]


def _rg_or_fail() -> str:
    rg = shutil.which("rg")
    if rg is None:
        if os.environ.get("CI"):
            pytest.fail("ripgrep (rg) is not installed, so the ripgrep/Python comparison cannot run")
        pytest.skip("ripgrep (rg) is not installed")
    return rg


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("grep_tree")
    build_tree(root)
    return root


@pytest.mark.asyncio
@pytest.mark.parametrize(("case", "where", "pattern", "globs", "ignore_case"), CASES, ids=[c[0] for c in CASES])
async def test_ripgrep_and_python_agree(tree: Path, case: str, where: str, pattern: str, globs: tuple[str, ...],
                                        ignore_case: bool) -> None:
    _rg_or_fail()
    query = SearchQuery(pattern, str(tree / where), globs, ignore_case)
    with_rg = await run_search(query)
    with_python = await run_search(query, "python")
    assert with_rg.backend == "ripgrep" and with_python.backend == "python"
    for mode in ("files_with_matches", "content", "count"):
        expected = format_result(with_rg, mode, tree / "repo", 10_000, pattern, where)
        assert format_result(with_python, mode, tree / "repo", 10_000, pattern, where) == expected, mode


@pytest.mark.asyncio
async def test_the_comparison_is_not_vacuous(tree: Path) -> None:
    """The tree really exercises the rules: these files are in or out of the plain search."""
    _rg_or_fail()
    found = {os.path.relpath(p, tree / "repo") for p in (await run_search(SearchQuery("hello", str(tree / "repo")))).files}
    assert {"a.txt", "keep.log", "sub/important.log", "only_rg.txt", "bom8.txt", "bom16.txt", "nested/inner.md"} <= found
    excluded = {"build/out.txt", "x.log", "rootonly.txt", "excluded.txt", "readme.md", "sub/anch.txt", "sub/notes.bak",
                "docs/guide/x.tmp", ".hidden/e.txt", ".dot.txt", "ign/secret.txt", "nested/x.skip", "bin_early.dat",
                "bin_late.dat", "link.txt", "linkdir/b.txt", ".git/config"}
    assert not (excluded & found), excluded & found


@pytest.mark.asyncio
async def test_a_pattern_ripgrep_rejects_is_searched_with_python(tree: Path) -> None:
    _rg_or_fail()
    query = SearchQuery(r"hel(?=lo a\b)", str(tree / "repo"))
    result = await run_search(query)
    assert result.backend == "python" and "ripgrep rejected the pattern" in result.note
    assert [os.path.relpath(p, tree / "repo") for p in result.files] == ["a.txt"]
