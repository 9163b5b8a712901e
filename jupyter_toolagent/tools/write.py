"""`Write`: create or overwrite a file with the given text, creating missing directories.

The result is a one-line summary (created or overwritten, lines, bytes), not the content: the
model already has the content, and echoing it would double the tokens of every write.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ..core.tool import Progress, ToolResult, ToolUseContext
from .paths import FileTool

__all__ = ["Write", "WriteInput", "write_file"]


class WriteInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    file_path: str = Field(description="Path of the file, absolute or relative to the working directory.")
    content: str = Field(description="The complete new content of the file.")


class Write(FileTool):
    name = "Write"
    description = (
        "Create a file, or replace a file's whole content, with the given text. Missing directories are created. "
        "To change part of an existing file, use Edit instead."
    )
    input_model = WriteInput
    access = "edit"
    path_field = "file_path"

    async def call(self, input: BaseModel, ctx: ToolUseContext, progress: Progress) -> ToolResult:
        assert isinstance(input, WriteInput)
        path = self.target(input, ctx)
        if path.is_dir():
            return ToolResult(f"{input.file_path} is a directory; give a file path.", is_error=True)
        try:
            summary = await asyncio.to_thread(write_file, path, input.content)
        except OSError as exc:
            return ToolResult(f"Cannot write {input.file_path}: {exc.strerror or exc}.", is_error=True)
        return ToolResult(f"{summary} {input.file_path}")


def write_file(path: Path, content: str) -> str:
    """Write ``content`` (UTF-8, newlines as given) and return what happened, e.g. "Created (3 lines, 42 bytes)"."""
    existed = path.exists()
    path.parent.mkdir(parents=True, exist_ok=True)
    data = content.encode("utf-8")
    with open(path, "wb") as f:
        f.write(data)
    lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
    verb = "Overwrote" if existed else "Created"
    size = len(data)
    return f"{verb} ({lines:,} line{'s' if lines != 1 else ''}, {size:,} byte{'s' if size != 1 else ''}):"
