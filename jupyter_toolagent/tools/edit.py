"""`Edit`: replace one exact piece of text in a file, and show the change as a diff.

``old_string`` must occur exactly once (unless ``replace_all``): an edit meant for one place must
not silently land in another, so 0 or several matches is an error that says how many and what to
do. The file's line endings are kept: a model writes ``\\n``, and a CRLF file stays CRLF. The
result is a short unified diff, so the model (and the person reading the card) sees what changed;
its header names the file relative to the working directory (``a/app.py``), or by its absolute
path without the doubled slash (``a/tmp/x.py``, not ``a//tmp/x.py``).

The file must have been Read in this session and be unchanged since (`read_guard`).
"""

from __future__ import annotations

import asyncio
import difflib
import os
from pathlib import Path
from typing import Callable

from pydantic import BaseModel, ConfigDict, Field

from ..core.file_state import FileStamp
from ..core.tool import Progress, ToolResult, ToolUseContext
from ..errors import EditError
from .bounded import cut_end
from .file_tool import FileTool, display_path
from .read_guard import not_read_refusal, record_written

__all__ = ["Edit", "EditInput", "apply_edit"]

MAX_DIFF_CHARS = 4_000


class EditInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    file_path: str = Field(description="Path of the file to change, absolute or relative to the working directory.")
    old_string: str = Field(min_length=1, description="The exact text to replace, including whitespace and indentation.")
    new_string: str = Field(description="The text to put in its place.")
    replace_all: bool = Field(False, description="Replace every occurrence instead of requiring exactly one.")


class Edit(FileTool[EditInput]):
    name = "Edit"
    description = (
        "Replace exact text in a file. old_string must match the file exactly (whitespace included) and occur "
        "exactly once, unless replace_all is true. Read the file first. Returns a diff of the change. Use Write "
        "to create a file."
    )
    input_model = EditInput
    access = "edit"
    path_field = "file_path"

    async def validate_input(self, input: EditInput, ctx: ToolUseContext) -> str | None:
        if input.old_string == input.new_string:
            return "old_string and new_string are identical: there is nothing to change"
        return await asyncio.to_thread(not_read_refusal, ctx, self.target(input, ctx), input.file_path, action="edit")

    async def call(self, input: EditInput, ctx: ToolUseContext, progress: Progress) -> ToolResult:
        path = self.target(input, ctx)

        def check(raw: bytes, mtime_ns: int) -> str | None:  # on the very bytes about to change
            return not_read_refusal(ctx, path, input.file_path, action="edit",
                                    current=FileStamp.of_bytes(raw, mtime_ns))

        try:
            diff = await asyncio.to_thread(
                apply_edit, path, input.file_path, input.old_string, input.new_string, input.replace_all,
                diff_name=display_path(path, Path(ctx.options.cwd)), check=check,
                on_written=lambda data: record_written(ctx, path, data),
            )
        except EditError as exc:
            return ToolResult(str(exc), is_error=True)
        return ToolResult(diff)


def apply_edit(path: Path, shown: str, old: str, new: str, replace_all: bool, *, diff_name: str | None = None,
               check: Callable[[bytes, int], str | None] | None = None,
               on_written: Callable[[bytes], None] | None = None) -> str:
    """Apply the edit and return a summary with a unified diff (raises `EditError`).

    ``check`` sees the file's bytes (and mtime) before anything changes and may refuse with a
    message; ``on_written`` gets the bytes written. ``diff_name`` names the file in the diff
    header (default: ``shown``)."""
    try:
        mtime_ns = os.stat(path).st_mtime_ns
        raw = path.read_bytes()
    except FileNotFoundError:
        raise EditError(f"File does not exist: {shown}. Use Write to create a file, or Glob to find one.") from None
    except IsADirectoryError:
        raise EditError(f"{shown} is a directory, not a file.") from None
    except OSError as exc:
        raise EditError(f"Cannot read {shown}: {exc.strerror or exc}.") from None
    refusal = check(raw, mtime_ns) if check is not None else None
    if refusal is not None:
        raise EditError(refusal)
    if b"\0" in raw[:8192]:
        raise EditError(f"{shown} is a binary file; Edit changes text files only.")
    try:
        before = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise EditError(f"{shown} is not UTF-8 text; Edit does not change it (it could corrupt the encoding).") from None
    count = before.count(old)
    if count == 0 and "\r\n" in before and "\n" in old:
        old, new = _crlf(old), _crlf(new)  # the model writes \n; this file uses \r\n
        count = before.count(old)
    if count == 0:
        raise EditError(f"old_string was not found in {shown}. Read the file and copy the exact text, including "
                        "whitespace and indentation, then try again.")
    if count > 1 and not replace_all:
        raise EditError(f"old_string occurs {count} times in {shown}. Include more surrounding lines to make it "
                        "unique, or set replace_all to true to replace every occurrence.")
    after = before.replace(old, new) if replace_all else before.replace(old, new, 1)
    data = after.encode("utf-8")
    try:
        with open(path, "wb") as f:
            f.write(data)
    except OSError as exc:
        raise EditError(f"Cannot write {shown}: {exc.strerror or exc}.") from None
    if on_written is not None:
        on_written(data)
    replaced = count if replace_all else 1
    summary = f"Edited {shown}: replaced {replaced} occurrence{'s' if replaced != 1 else ''}."
    return f"{summary}\n{cut_end(_diff(before, after, diff_name or shown), MAX_DIFF_CHARS)}"


def _crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def _diff(before: str, after: str, name: str) -> str:
    name = name.lstrip("/")  # git's a/ and b/ prefixes replace the root: a/tmp/x.py, not a//tmp/x.py
    lines = difflib.unified_diff(
        before.splitlines(), after.splitlines(), fromfile=f"a/{name}", tofile=f"b/{name}", lineterm="", n=2
    )
    return "\n".join(lines)
