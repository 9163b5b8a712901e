"""`Grep`: search file contents with a regular expression, the way ripgrep does.

ripgrep is used when ``rg`` is on the PATH (fast, and the rules people know: ``.gitignore``,
hidden files, binary files); otherwise a Python implementation of the same rules
(`grep_search`, `ignore_walk`). ``BuiltinToolOptions(grep_backend="python")`` forces the Python one. When
ripgrep rejects a pattern its regex dialect lacks (look-around, back-references) the search is
retried with Python's `re`, and the result says so.

Output is sorted by path, then line, with paths relative to the working directory, so the same
search gives the same text whichever backend ran and however the file system ordered entries.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Callable, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..core.tool import Progress, ToolResult, ToolUseContext
from ..errors import PatternRejected
from .file_tool import FileTool, display_path, read_denied_filter, secret_file_filter
from .grep_search import SearchQuery, SearchResult, compile_search_regex, search_python, search_ripgrep
from .options import builtin_options

__all__ = ["Grep", "GrepInput", "format_result", "run_search"]

DEFAULT_HEAD_LIMIT = 500
MAX_LINE_CHARS = 500
OutputMode = Literal["files_with_matches", "content", "count"]


class GrepInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    pattern: str = Field(description="Regular expression to search for (one line at a time).")
    path: str | None = Field(None, description="File or directory to search. Default: the working directory.")
    glob: str | list[str] | None = Field(
        None, description="Only files matching this glob ('*.py', '**/*.{ts,tsx}'); '!pattern' excludes. "
        "A matching file is searched even if .gitignore lists it.",
    )
    output_mode: OutputMode = Field(
        "files_with_matches",
        description="files_with_matches: paths only; content: matching lines with line numbers; count: matching "
        "lines per file.",
    )
    case_insensitive: bool = Field(False, description="Ignore case.")
    head_limit: int | None = Field(
        None, ge=1, le=10_000, description=f"Most paths or lines to return. Default: {DEFAULT_HEAD_LIMIT}."
    )


class Grep(FileTool[GrepInput]):
    name = "Grep"
    description = (
        "Search file contents with a regular expression (ripgrep rules: .gitignore'd, hidden and binary files are "
        "skipped). Modes: files_with_matches (default), content (matching lines with line numbers), count. Filter "
        "files with glob. Results are sorted by path; paths are relative to the working directory."
    )
    input_model = GrepInput
    access = "read"
    path_field = "path"

    async def validate_input(self, input: GrepInput, ctx: ToolUseContext) -> str | None:
        if not input.pattern:
            return "the pattern is empty"
        return None

    async def call(self, input: GrepInput, ctx: ToolUseContext, progress: Progress) -> ToolResult:
        root = self.target(input, ctx)
        if not root.exists():
            return ToolResult(f"The search path {input.path} does not exist. Use Glob to find files.", is_error=True)
        globs = (input.glob,) if isinstance(input.glob, str) else tuple(input.glob or ())
        query = SearchQuery(input.pattern, str(root), globs, input.case_insensitive)
        try:
            result = await run_search(query, builtin_options(ctx).grep_backend)
        except PatternRejected as exc:
            return ToolResult(f"Invalid pattern: {exc}", is_error=True)
        _withhold(result, read_denied_filter(ctx), "with matches not shown: a deny rule covers them.")
        _withhold(result, secret_file_filter() if root.is_dir() else None,  # a file named explicitly was asked about
                  "that look like credentials (.env, keys, cloud config) not searched: Read one by path to ask the user.")
        text = format_result(result, input.output_mode, Path(ctx.options.cwd), input.head_limit or DEFAULT_HEAD_LIMIT,
                             input.pattern, input.path or ".")
        return ToolResult(text)


async def run_search(query: SearchQuery, backend: str | None = None) -> SearchResult:
    """Search with ripgrep if available (unless ``backend == "python"``), else with Python."""
    rg = shutil.which("rg") if backend != "python" else None
    if rg is not None:
        try:
            return await search_ripgrep(query, rg)
        except PatternRejected as exc:
            compile_search_regex(query)  # raises PatternRejected if Python cannot either
            result = await asyncio.to_thread(search_python, query)
            first = str(exc).splitlines()[-1] if str(exc) else "rejected"
            result.note = f"(ripgrep rejected the pattern — {first} — so Python's re module searched instead.)"
            return result
    compile_search_regex(query)
    return await asyncio.to_thread(search_python, query)


def _withhold(result: SearchResult, covered: Callable[[str], bool] | None, why: str) -> None:
    """Drop the files ``covered`` says must not show and add to the note how many went and ``why``."""
    if covered is None:
        return
    withheld = [path for path in result.files if covered(path)]
    for path in withheld:
        del result.files[path]
    if withheld:
        plural = "s" if len(withheld) != 1 else ""
        result.note = " ".join(filter(None, (result.note, f"({len(withheld):,} file{plural} {why})")))


def _line(text: str) -> str:
    text = text[:-1] if text.endswith("\r") else text
    if len(text) <= MAX_LINE_CHARS:
        return text
    return text[:MAX_LINE_CHARS] + f" [... {len(text) - MAX_LINE_CHARS:,} more characters]"


def format_result(result: SearchResult, mode: OutputMode, cwd: Path, head_limit: int, pattern: str, where: str) -> str:
    """The text the model gets; identical for both backends given the same matches."""
    files = sorted((display_path(path, cwd), lines) for path, lines in result.files.items())
    if not files:
        text = f"No matches for {pattern!r} in {where}."
        return "\n".join(t for t in (text, result.note) if t)
    if mode == "files_with_matches":
        entries = [path for path, _ in files]
        header = f"{len(files):,} file{'s' if len(files) != 1 else ''} with matches:"
    elif mode == "count":
        entries = [f"{path}:{len(lines):,}" for path, lines in files]
        total = sum(len(lines) for _, lines in files)
        header = f"{total:,} matching line{'s' if total != 1 else ''} in {len(files):,} file{'s' if len(files) != 1 else ''}:"
    else:
        entries = [f"{path}:{number}:{_line(text)}" for path, lines in files for number, text in sorted(lines)]
        header = ""
    shown = entries[:head_limit]
    out = [header] if header else []
    out.extend(shown)
    if len(entries) > head_limit:
        out.append(f"({len(entries) - head_limit:,} more not shown; narrow the search with path or glob, "
                   "or raise head_limit)")
    if not result.complete:
        out.append("(The search stopped early after 100,000 matching lines; results are partial.)")
    if result.note:
        out.append(result.note)
    return "\n".join(out)

