"""`Write`: create or overwrite a file with the given text, creating missing directories.

The result is a one-line summary (created or overwritten, lines, bytes), not the content: the
model already has the content, and echoing it would double the tokens of every write.

Overwriting an existing file requires that this session Read it and that it has not changed
since (`read_guard`); creating a new file needs no Read.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ..core.file_state import FileStamp
from ..core.tool import Progress, ToolResult, ToolUseContext
from .file_tool import FileTool
from .read_guard import not_read_refusal, record_written

__all__ = ["Write", "WriteInput", "write_file"]


class WriteInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    file_path: str = Field(description="Path of the file, absolute or relative to the working directory.")
    content: str = Field(description="The complete new content of the file.")


class Write(FileTool[WriteInput]):
    name = "Write"
    description = (
        "Create a file, or replace a file's whole content, with the given text. Missing directories are created. "
        "To change part of an existing file, use Edit instead."
    )
    input_model = WriteInput
    access = "edit"
    path_field = "file_path"

    async def validate_input(self, input: WriteInput, ctx: ToolUseContext) -> str | None:
        return await asyncio.to_thread(not_read_refusal, ctx, self.target(input, ctx), input.file_path,
                                       action="overwrite")

    async def call(self, input: WriteInput, ctx: ToolUseContext, progress: Progress) -> ToolResult:
        path = self.target(input, ctx)
        if path.is_dir():
            return ToolResult(f"{input.file_path} is a directory; give a file path.", is_error=True)

        def guarded_write() -> ToolResult:
            if path.is_file():  # checked again now: it may have changed while the approval was pending
                refusal = not_read_refusal(ctx, path, input.file_path, action="overwrite",
                                           current=FileStamp.of_path(path))
                if refusal is not None:
                    return ToolResult(refusal, is_error=True)
            summary = write_file(path, input.content)
            record_written(ctx, path, input.content.encode("utf-8"))
            return ToolResult(f"{summary} {input.file_path}")

        try:
            return await asyncio.to_thread(guarded_write)
        except OSError as exc:
            return ToolResult(f"Cannot write {input.file_path}: {exc.strerror or exc}.", is_error=True)


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
