"""`Glob`: files whose path matches a pattern, most recently modified first.

Patterns use the shell's syntax plus ``**`` for any number of directories and ``{a,b}``
alternatives (the same glob dialect as Grep's filter, see `ignore_walk.glob_regex`). Newest first
because the file someone just changed is usually the one they are asking about; ties are broken
by path so the order is stable. Hidden files and directories are skipped unless the pattern
names them (``.github/**``, ``**/.env``), which also keeps ``.git`` out of ``**`` walks.
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ..core.permission_types import FileAccess, PermissionSubject
from ..core.tool import Progress, ToolResult, ToolUseContext
from .ignore_walk import glob_regex
from .file_tool import FileTool, display_path, read_denied_filter

__all__ = ["Glob", "GlobInput", "glob_files"]

MAX_RESULTS = 100
MAX_VISITED = 500_000
_MAGIC = re.compile(r"[*?\[{\\]")


class GlobInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    pattern: str = Field(description="Glob pattern, e.g. '**/*.py', 'data/*.csv', 'src/**/test_*.{py,ipynb}'.")
    path: str | None = Field(None, description="Directory to search in. Default: the working directory.")


class Glob(FileTool[GlobInput]):
    name = "Glob"
    description = (
        "Find files by name pattern ('**/*.py', 'data/*.csv'). Returns at most 100 paths, most recently modified "
        "first. Hidden files are skipped unless the pattern names them. Use Grep to search file contents."
    )
    input_model = GlobInput
    access = "read"
    path_field = "path"

    def permission_subject(self, input: GlobInput, ctx: ToolUseContext) -> PermissionSubject | None:
        """The directory the walk starts in: a pattern like ``../other/*`` or ``/etc/*`` leaves ``path``."""
        base, _ = _split_glob_root(self.target(input, ctx), os.path.expanduser(input.pattern))
        return FileAccess(os.path.realpath(base), "read", written=os.path.normpath(base))

    async def call(self, input: GlobInput, ctx: ToolUseContext, progress: Progress) -> ToolResult:
        root = self.target(input, ctx)
        if not root.is_dir():
            what = "does not exist" if not root.exists() else "is not a directory"
            return ToolResult(f"The search path {input.path} {what}.", is_error=True)
        cwd = Path(ctx.options.cwd)
        matches, complete = await asyncio.to_thread(glob_files, root, input.pattern)
        denied = read_denied_filter(ctx)
        hidden = 0
        if denied is not None:
            kept = [m for m in matches if not denied(str(m[1]))]
            hidden, matches = len(matches) - len(kept), kept
        text = _render(matches, complete, input.pattern, cwd)
        if hidden:
            text += f"\n({hidden:,} matching file{'s' if hidden != 1 else ''} not shown: a deny rule covers them.)"
        return ToolResult(text)


def _split_glob_root(root: Path, pattern: str) -> tuple[Path, list[str]]:
    """Start the walk at the pattern's literal directories: ``data/raw/*.csv`` walks data/raw only."""
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    base = Path("/") if pattern.startswith("/") else root
    while len(parts) > 1 and not _MAGIC.search(parts[0]):
        base = base / parts.pop(0)
    return base, parts


def glob_files(root: Path, pattern: str) -> tuple[list[tuple[float, Path]], bool]:
    """(mtime, path) of matching files, newest first, and whether the walk finished."""
    pattern = os.path.expanduser(pattern)
    base, parts = _split_glob_root(root, pattern)
    if not parts or not base.is_dir():
        return [], True
    regex = glob_regex("/".join(parts))
    hidden_ok = any(p.startswith(".") for p in parts)
    max_depth = None if any("**" in p for p in parts) else len(parts)
    found: list[tuple[float, Path]] = []
    visited = 0
    stack: list[tuple[str, str, int]] = [(str(base), "", 1)]
    while stack:
        directory, prefix, depth = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            visited += 1
            if visited > MAX_VISITED:
                return _sorted(found), False
            if entry.name.startswith(".") and not hidden_ok:
                continue
            relative = prefix + entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                if is_dir:
                    if max_depth is None or depth < max_depth:
                        stack.append((entry.path, relative + "/", depth + 1))
                elif entry.is_file() and regex.fullmatch(relative):
                    found.append((entry.stat().st_mtime, Path(entry.path)))
            except OSError:
                continue
    return _sorted(found), True


def _sorted(found: list[tuple[float, Path]]) -> list[tuple[float, Path]]:
    return sorted(found, key=lambda item: (-item[0], str(item[1])))


def _render(matches: list[tuple[float, Path]], complete: bool, pattern: str, cwd: Path) -> str:
    if not matches:
        return f"No files match {pattern!r}." + ("" if complete else " (The search stopped early: too many files.)")
    lines = [display_path(path, cwd) for _, path in matches[:MAX_RESULTS]]
    if len(matches) > MAX_RESULTS:
        lines.append(f"({len(matches) - MAX_RESULTS:,} more files match; narrow the pattern or the path)")
    if not complete:
        lines.append(f"(The search stopped after {MAX_VISITED:,} entries: narrow the pattern or the path.)")
    return "\n".join(lines)

