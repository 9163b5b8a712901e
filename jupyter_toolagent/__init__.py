"""jupyter_toolagent — a tool-using Claude agent inside a Jupyter kernel.

The model can ask; the runtime decides. ``%load_ext jupyter_toolagent`` registers the
``%%agent`` cell magic; `Agent` is the same engine for plain Python.

This module imports no IPython or ipywidgets: the notebook layer is loaded only by
`load_ipython_extension` (or by `current_session`).
"""

from __future__ import annotations

from typing import Any

from .agent import Agent
from .agents.definitions import subagent
from .core.abort import AbortSignal
from .core.events import AgentEvent
from .tools.function_tool import FunctionTool, tool
from .core.pairing.check import check_pairing
from .core.pairing.normalize import normalize_messages_for_api
from .core.pairing.repair import repair_pairing
from .core.permission_types import ApprovalRequest, ApprovalResponse, PermissionDecision
from .core.session import RunConfig, Session
from .core.tool import Tool, ToolResult, ToolUseContext
from .core.usage import Usage
from .errors import ConfigError, ModelAPIError, RuleSyntaxError, SettingsFileError, ToolAgentError, ToolDefinitionError
from .hooks import HookEvent, HookRegistry, HookResult, agent_hook
from .permissions.context import PermissionContext
from .permissions.rule_based import RuleBasedPermissions

__version__ = "0.1.0"

__all__ = [
    "subagent",
    "AbortSignal",
    "Agent",
    "AgentEvent",
    "ApprovalRequest",
    "ApprovalResponse",
    "ConfigError",
    "FunctionTool",
    "HookEvent",
    "HookRegistry",
    "HookResult",
    "ModelAPIError",
    "PermissionContext",
    "PermissionDecision",
    "RuleBasedPermissions",
    "RuleSyntaxError",
    "RunConfig",
    "Session",
    "SettingsFileError",
    "Tool",
    "ToolAgentError",
    "ToolDefinitionError",
    "ToolResult",
    "ToolUseContext",
    "Usage",
    "agent_hook",
    "check_pairing",
    "current_session",
    "load_ipython_extension",
    "normalize_messages_for_api",
    "repair_pairing",
    "tool",
    "unload_ipython_extension",
]


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext jupyter_toolagent``."""
    from .notebook import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext jupyter_toolagent``."""
    from .notebook import unload_ipython_extension as unload

    unload(ipython)


def current_session() -> Session:
    """The active session of the notebook this kernel runs (created on first use)."""
    from .notebook.sessions import current_session as current

    return current()
