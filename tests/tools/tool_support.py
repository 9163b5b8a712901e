"""Helpers shared by the tool tests: a context, one call through the pipeline, result text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jupyter_toolagent.core.permission_types import PermissionDecision
from jupyter_toolagent.core.results import ToolOutputStore
from jupyter_toolagent.core.run_tool_use import ToolCallOutcome, run_tool_use
from jupyter_toolagent.core.tool import PluginOptions, ToolOptions, ToolPool, ToolUseContext
from jupyter_toolagent.tools import builtin_tools
from jupyter_toolagent.tools.options import BuiltinToolOptions

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


async def allow_all(call: Any, ctx: Any, *, hook_decision: Any) -> PermissionDecision:
    return PermissionDecision.allow("test")


def make_ctx(cwd: Path | None = None, namespace: dict[str, Any] | None = None, **builtin: Any) -> ToolUseContext:
    """A context for the built-in tools; ``builtin`` are `BuiltinToolOptions` fields."""
    options = ToolOptions(cwd=cwd or Path.cwd(), namespace=namespace,
                          plugins=PluginOptions(BuiltinToolOptions(**builtin)))
    return ToolUseContext(tools=ToolPool(builtin_tools()), can_use_tool=allow_all, options=options,
                          outputs=ToolOutputStore())


_ids = iter(range(1, 10**9))


async def call(ctx: ToolUseContext, name: str, **input: Any) -> ToolCallOutcome:
    """One tool call through the whole pipeline (validation, permission, call, packaging)."""
    block = {"type": "tool_use", "id": f"toolu_{next(_ids):06d}", "name": name, "input": input}
    return await run_tool_use(block, ctx)


def text_of(outcome: ToolCallOutcome) -> str:
    content = outcome.result["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b["text"] for b in content if b.get("type") == "text")


def images_of(outcome: ToolCallOutcome) -> list[bytes]:
    import base64

    content = outcome.result["content"]
    if isinstance(content, str):
        return []
    return [base64.b64decode(b["source"]["data"]) for b in content if b.get("type") == "image"]
