"""Test doubles for the permission tests: tools that describe what they touch but never do
anything (a shell tool that *records* its command instead of running it), approvers, and a
context builder.

Permission tests only classify commands; no command given to these tools is ever executed.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Callable, Sequence

from pydantic import BaseModel, ConfigDict
from recording_shell import RecordingShell

from jupyter_toolagent.core.permission_types import (
    ApprovalRequest,
    ApprovalResponse,
    FileAccess,
    PermissionDecision,
)
from jupyter_toolagent.core.tool import Progress, Tool, ToolOptions, ToolPool, ToolUseContext
from jupyter_toolagent.permissions import PermissionContext, RuleBasedPermissions
from jupyter_toolagent.permissions.engine import decide_input


class PathInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    content: str = ""


class CodeInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    code: str = ""


FakeBash = RecordingShell
"""The shared recording shell tool, under the name these tests have always used."""


class FakeFileTool(Tool):
    """A file tool (Read, Grep, Edit, Write) that resolves its path and does nothing."""

    input_model = PathInput

    def __init__(self, name: str, access: str, aliases: Sequence[str] = ()) -> None:
        self.name = name
        self.access = access
        self.aliases = tuple(aliases)
        self.description = f"fake {name}"
        self.calls: list[str] = []

    def permission_subject(self, input: BaseModel, ctx: ToolUseContext) -> FileAccess:
        path = Path(input.path).expanduser()  # type: ignore[attr-defined]
        if not path.is_absolute():
            path = Path(ctx.options.cwd) / path
        return FileAccess(str(path), self.access)  # type: ignore[arg-type]

    def is_read_only(self, input: BaseModel) -> bool:
        return self.access == "read"

    async def call(self, input: BaseModel, ctx: ToolUseContext, progress: Progress) -> str:
        self.calls.append(input.path)  # type: ignore[attr-defined]
        return "ok"


class FakePython(Tool):
    """Like RunPython: no subject, not read-only (whole-tool rules only)."""

    name = "RunPython"
    description = "fake python"
    input_model = CodeInput

    def __init__(self, name: str = "RunPython", read_only: bool = False) -> None:
        self.name = name
        self._read_only = read_only
        self.calls: list[str] = []

    def is_read_only(self, input: BaseModel) -> bool:
        return self._read_only

    async def call(self, input: BaseModel, ctx: ToolUseContext, progress: Progress) -> str:
        self.calls.append(input.code)  # type: ignore[attr-defined]
        return "ran"


class OpinionTool(Tool):
    """A tool with its own `check_permissions` verdict (or one that raises)."""

    input_model = CodeInput

    def __init__(self, verdict: PermissionDecision | Exception, *, read_only: bool = False,
                 name: str = "Opinionated") -> None:
        self.name = name
        self.description = "has opinions"
        self.verdict = verdict
        self._read_only = read_only

    async def check_permissions(self, input: BaseModel, ctx: ToolUseContext) -> PermissionDecision:
        if isinstance(self.verdict, Exception):
            raise self.verdict
        return self.verdict

    def is_read_only(self, input: BaseModel) -> bool:
        return self._read_only

    async def call(self, input: BaseModel, ctx: ToolUseContext, progress: Progress) -> str:
        return "ok"


BASH = FakeBash()
READ = FakeFileTool("Read", "read")
GREP = FakeFileTool("Grep", "read")
EDIT = FakeFileTool("Edit", "edit")
WRITE = FakeFileTool("Write", "edit")
PYTHON = FakePython()
LIST_VARIABLES = FakePython("ListVariables", read_only=True)


def make_ctx(perms: PermissionContext | None, *tools: Tool, events: list[Any] | None = None,
             can_use_tool: Any = None, **kw: Any) -> ToolUseContext:
    sink = events if events is not None else []
    cwd = perms.cwd if perms is not None else Path.cwd()
    return ToolUseContext(
        tools=ToolPool(tools or (BASH, READ, GREP, EDIT, WRITE, PYTHON, LIST_VARIABLES)),
        can_use_tool=can_use_tool or RuleBasedPermissions(None, interactive=False),
        permissions=perms,
        options=ToolOptions(cwd=Path(cwd)),
        emit=sink.append,
        **kw,
    )


async def decide_bash(perms: PermissionContext, command: str, **kw: Any) -> PermissionDecision:
    return await decide_input(BASH, {"command": command}, make_ctx(perms), **kw)


async def decide_file(perms: PermissionContext, tool: Tool, path: str, **kw: Any) -> PermissionDecision:
    return await decide_input(tool, {"path": str(path)}, make_ctx(perms), **kw)


class ScriptedApprover:
    """Answers approval requests from a list (or a function of the request); records them."""

    def __init__(self, *answers: ApprovalResponse | Callable[[ApprovalRequest], ApprovalResponse],
                 delay: float = 0.0) -> None:
        self.answers = list(answers)
        self.requests: list[ApprovalRequest] = []
        self.delay = delay

    async def __call__(self, request: ApprovalRequest) -> ApprovalResponse:
        self.requests.append(request)
        if self.delay:
            await asyncio.sleep(self.delay)
        answer = self.answers.pop(0)
        return answer(request) if callable(answer) else answer


class SilentApprover:
    """Never answers (a person who walked away)."""

    def __init__(self) -> None:
        self.requests: list[ApprovalRequest] = []
        self.cancelled = False

    async def __call__(self, request: ApprovalRequest) -> ApprovalResponse:
        self.requests.append(request)
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        raise AssertionError("unreachable")
