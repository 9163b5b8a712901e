"""A shell tool for permission and hook tests: named and judged like ``Bash``, it records the
commands it is asked to run and runs none of them (hostile test commands are only classified).

Shared by ``tests/permissions``, ``tests/hooks`` and ``tests/reliability``; importable from any
test module because pytest puts ``tests/`` on ``sys.path`` for the suite's ``conftest.py``.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from jupyter_toolagent.core.permission_types import ShellCommand
from jupyter_toolagent.core.tool import Progress, Tool, ToolUseContext
from jupyter_toolagent.permissions import is_read_only_command

__all__ = ["CommandInput", "RecordingShell"]


class CommandInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    command: str


class RecordingShell(Tool):
    """Named Bash, judged like Bash; records the commands it is asked to run and runs none."""

    name = "Bash"
    description = "records shell commands, never runs them"
    input_model = CommandInput

    def __init__(self) -> None:
        self.recorded: list[str] = []

    def permission_subject(self, input: BaseModel, ctx: ToolUseContext) -> ShellCommand:
        assert isinstance(input, CommandInput)
        return ShellCommand(input.command)

    def is_read_only(self, input: BaseModel) -> bool:
        assert isinstance(input, CommandInput)
        return is_read_only_command(input.command)

    def is_concurrency_safe(self, input: BaseModel) -> bool:
        return self.is_read_only(input)

    async def call(self, input: BaseModel, ctx: ToolUseContext, progress: Progress) -> str:
        assert isinstance(input, CommandInput)
        self.recorded.append(input.command)
        return "recorded, not run"
