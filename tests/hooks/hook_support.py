"""Tools and helpers for the hook tests. The shell tool records commands; it never runs them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from jupyter_toolagent.core.results import ToolOutputStore
from jupyter_toolagent.core.run_tool_use import ToolCallOutcome, run_tool_use
from jupyter_toolagent.core.tool import Progress, Tool, ToolOptions, ToolPool, ToolUseContext
from jupyter_toolagent.hooks import HookRegistry, RegistryHookRunner
from jupyter_toolagent.permissions import PermissionContext, RuleBasedPermissions


class CodeInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    code: str = ""


class PythonLike(Tool):
    """No subject, not read-only: asked about by default."""

    name = "RunPython"
    description = "pretend python"
    input_model = CodeInput

    def __init__(self, read_only: bool = False, name: str = "RunPython") -> None:
        self.name = name
        self._read_only = read_only
        self.ran: list[str] = []

    def is_read_only(self, input: BaseModel) -> bool:
        return self._read_only

    async def call(self, input: BaseModel, ctx: ToolUseContext, progress: Progress) -> str:
        self.ran.append(input.code)  # type: ignore[attr-defined]
        return f"ran {input.code}"  # type: ignore[attr-defined]


def project_dir(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    return Path(os.path.realpath(root))


def pipeline_ctx(registry: HookRegistry, perms: PermissionContext, *tools: Tool, approver: Any = None,
                 events: list[Any] | None = None, hook_timeout: float = 5.0) -> ToolUseContext:
    """A context with the real rule engine and the real hook runner."""
    sink = events if events is not None else []
    return ToolUseContext(
        tools=ToolPool(tools),
        can_use_tool=RuleBasedPermissions(approver, interactive=approver is not None, approval_timeout=5),
        permissions=perms,
        hooks=RegistryHookRunner(registry),
        options=ToolOptions(cwd=perms.cwd, hook_timeout=hook_timeout),
        outputs=ToolOutputStore(),
        emit=sink.append,
    )


async def call(ctx: ToolUseContext, name: str, input: dict[str, Any], id: str = "toolu_1") -> ToolCallOutcome:
    return await run_tool_use({"type": "tool_use", "id": id, "name": name, "input": input}, ctx)


def text_of(outcome: ToolCallOutcome) -> str:
    content = outcome.result["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")
