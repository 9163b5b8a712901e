"""`FileTool`: what every file tool tells hooks and permission rules about the path it touches.

The model writes paths relative to the working directory (or not at all). Hooks see the input
with the path made absolute (`observable_input`), so a hook that logs or checks paths needs no
knowledge of the cwd; permission rules get a `FileAccess` whose path is fully resolved
(``..`` and symlinks), so a rule on ``./data/**`` cannot be sidestepped through a link.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, ClassVar, Literal

from ..core.permission_types import FileAccess, PermissionSubject
from ..core.tool import InputT, Tool, ToolUseContext
from ..permissions import path_denied
from ..permissions.read_safety import looks_secret

__all__ = ["FileTool", "absolute_from_cwd", "display_path", "read_denied_filter", "secret_file_filter"]


def absolute_from_cwd(raw: str | None, cwd: Path) -> Path:
    """A tool's path argument as the model meant it: ``raw`` made absolute against ``cwd``
    (``~`` expanded, ``..`` folded; symlinks kept, so hooks and messages show the name written).

    Permission rules match the symlink-free form instead (`permissions.file_rules.resolve_for_rules`)."""
    text = os.path.expanduser(raw) if raw else "."
    return Path(os.path.normpath(os.path.join(cwd, text)))


def display_path(path: Path | str, cwd: Path) -> str:
    """Relative to ``cwd`` when inside it (shorter for the model), absolute otherwise."""
    path = str(path)
    base = str(cwd)
    if path == base:
        return "."
    if path.startswith(base.rstrip(os.sep) + os.sep):
        return os.path.relpath(path, base)
    return path


def read_denied_filter(ctx: ToolUseContext) -> Callable[[str], bool] | None:
    """A predicate telling which found paths a ``Read(...)`` deny rule covers, or None.

    Glob and Grep are allowed (or not) for the directory they search; files inside it that a
    deny rule protects must still not show up in their results. Without a rule state there is
    nothing to apply.
    """
    perms = getattr(ctx, "permissions", None)
    if perms is None:
        return None

    def denied(path: str) -> bool:
        try:
            return path_denied(perms, path, access="read") is not None
        except Exception:  # a rule that cannot be evaluated protects the file (fail closed)
            return True

    return denied


def secret_file_filter() -> Callable[[str], bool]:
    """A predicate telling which found files look like credentials (``.env``, keys, cloud CLI
    config — `permissions.read_safety`).

    Reading one by name always asks; a search over a directory cannot ask per file, so Grep
    leaves their contents out and says how many it left out.
    """

    def secret(path: str) -> bool:
        return looks_secret(os.path.abspath(path)) or looks_secret(os.path.realpath(path))

    return secret


class FileTool(Tool[InputT]):
    """Base of Read, Glob, Grep, Edit and Write."""

    access: ClassVar[Literal["read", "edit"]] = "read"
    path_field: ClassVar[str] = "file_path"

    def raw_path(self, input: InputT) -> str | None:
        return getattr(input, self.path_field)

    def target(self, input: InputT, ctx: ToolUseContext) -> Path:
        return absolute_from_cwd(self.raw_path(input), Path(ctx.options.cwd))

    def observable_input(self, input: InputT, ctx: ToolUseContext) -> dict[str, Any]:
        data = input.model_dump(mode="json")
        data[self.path_field] = str(self.target(input, ctx))
        return data

    def permission_subject(self, input: InputT, ctx: ToolUseContext) -> PermissionSubject | None:
        target = self.target(input, ctx)
        return FileAccess(os.path.realpath(target), self.access, written=str(target))

    def is_read_only(self, input: InputT) -> bool:
        return self.access == "read"

    def is_concurrency_safe(self, input: InputT) -> bool:
        return self.access == "read"
