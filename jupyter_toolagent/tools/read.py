"""`Read`: a text file with line numbers (``cat -n`` style), or an image the model can see.

Lines are read lazily from ``offset`` for ``limit`` lines, so the first lines of a 5 GB log cost
what the first lines of a small file cost. Very long lines are cut (minified JSON, data dumps).
Binary files are refused with a message rather than sent as noise; PNG, JPEG, GIF and WebP come
back as image blocks. Only regular files are read: a FIFO or device would block the call.
A successful Read records what the file is now, which Edit and Write require (`read_guard`).
"""

from __future__ import annotations

import asyncio
import os
import stat
from itertools import islice
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ..core.file_state import FileStamp
from ..core.results import sniff_image
from ..core.tool import Progress, ToolResult, ToolUseContext
from .images import MAX_IMAGE_BYTES, bytes_to_blocks
from .file_tool import FileTool
from .read_guard import record_seen

__all__ = ["Read", "ReadInput"]

DEFAULT_LIMIT = 2_000
MAX_LINE_CHARS = 2_000
SNIFF_BYTES = 8_192


class ReadInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    file_path: str = Field(description="Path of the file, absolute or relative to the working directory.")
    offset: int | None = Field(None, ge=1, description="First line to show (1-based). Default: 1.")
    limit: int | None = Field(None, ge=1, le=20_000, description=f"How many lines to show. Default: {DEFAULT_LIMIT}.")


class Read(FileTool[ReadInput]):
    name = "Read"
    description = (
        "Read a text file; lines come numbered like `cat -n`. Use offset and limit for parts of long files. "
        "PNG, JPEG, GIF and WebP images are returned as images. Paths are relative to the working directory."
    )
    input_model = ReadInput
    access = "read"
    path_field = "file_path"

    async def call(self, input: ReadInput, ctx: ToolUseContext, progress: Progress) -> ToolResult:
        path = self.target(input, ctx)
        result, stamp = await asyncio.to_thread(_read_and_stamp, path, input.file_path, input.offset or 1,
                                                input.limit or DEFAULT_LIMIT)
        if not result.is_error:
            record_seen(ctx, path, stamp)  # Edit and Write may now change it (SPEC §10)
        return result


def _read_and_stamp(path: Path, shown: str, offset: int, limit: int) -> tuple[ToolResult, FileStamp | None]:
    """The result and the file's stamp, taken *before* the content: a change in between makes
    the stamp older than what the model saw, so Edit asks for a new Read (the safe side)."""
    stamp = FileStamp.of_path(path)
    return _read(path, shown, offset, limit), stamp


def _read(path: Path, shown: str, offset: int, limit: int) -> ToolResult:
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return ToolResult(f"File does not exist: {shown}. Use Glob to find files by name pattern.", is_error=True)
    except OSError as exc:
        return ToolResult(f"Cannot read {shown}: {exc.strerror or exc}.", is_error=True)
    if stat.S_ISDIR(info.st_mode):
        return ToolResult(f"{shown} is a directory, not a file. Use Glob to list the files in it.", is_error=True)
    if not stat.S_ISREG(info.st_mode):
        return ToolResult(f"{shown} is not a regular file (a device, FIFO or socket); Read only reads files.",
                          is_error=True)
    try:
        with open(path, "rb") as f:
            head = f.read(SNIFF_BYTES)
            media = sniff_image(head)
            if media is not None:
                if info.st_size > MAX_IMAGE_BYTES:
                    return ToolResult(f"{shown} is a {media} image of {info.st_size:,} bytes, too large to send "
                                      f"(limit {MAX_IMAGE_BYTES:,}).", is_error=True)
                return ToolResult(bytes_to_blocks(head + f.read()))
            if b"\0" in head:
                return ToolResult(f"{shown} is a binary file ({info.st_size:,} bytes); Read shows text files and "
                                  "PNG/JPEG/GIF/WebP images. Use Bash (e.g. `file`, `xxd | head`) to look at it.",
                                  is_error=True)
        return ToolResult(_numbered_lines(path, shown, offset, limit))
    except OSError as exc:
        return ToolResult(f"Cannot read {shown}: {exc.strerror or exc}.", is_error=True)


def _numbered_lines(path: Path, shown: str, offset: int, limit: int) -> str:
    with open(path, encoding="utf-8", errors="replace", newline=None) as f:
        before = sum(1 for _ in islice(f, offset - 1))
        lines = list(islice(f, limit + 1))
    if not lines:
        if offset == 1:
            return f"({shown} is empty)"
        return f"({shown} has {before:,} lines; offset {offset:,} is past the end)"
    more = len(lines) > limit
    lines = lines[:limit]
    width = max(6, len(str(offset + len(lines) - 1)))
    out = [f"{n:>{width}}\t{_cut(line.rstrip(chr(10)))}" for n, line in enumerate(lines, start=offset)]
    if more:
        last = offset + len(lines) - 1
        out.append(f"\n(lines {offset:,}-{last:,} shown; the file continues: call Read with offset={last + 1})")
    return "\n".join(out)


def _cut(line: str) -> str:
    if len(line) <= MAX_LINE_CHARS:
        return line
    return line[:MAX_LINE_CHARS] + f" [... line cut: {len(line) - MAX_LINE_CHARS:,} more characters]"
