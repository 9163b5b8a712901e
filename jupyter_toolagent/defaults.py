"""The product's plug-ins for a run: the rule engine, the ``@agent_hook`` registry, ``@tool``.

The core defines the slot (`core.run_plugins.RunPlugins`) and never imports what fills it;
this module is the one place that does, beside `Agent` (which passes it in every `RunConfig`)
and the ``%%agent`` magic (which does the same). A test or a program that wants the bare core,
or its own policy, simply passes something else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .core.hook_types import HookRunner
from .core.permission_types import CanUseTool
from .core.run_plugins import RunPlugins
from .core.session import PermissionMode, RunConfig
from .core.tool import Tool, ToolPool
from .hooks import RegistryHookRunner, default_registry
from .permissions import PermissionContext, RuleBasedPermissions, parse_mode, visible_tools
from .tools.function_tool import as_tool

__all__ = ["DefaultPlugins", "default_plugins"]


class DefaultPlugins:
    """`RunPlugins` from `jupyter_toolagent.permissions`, `jupyter_toolagent.hooks` and the
    function tools of `jupyter_toolagent.tools`."""

    def permission_state(self, cwd: Path) -> PermissionContext:
        return PermissionContext.from_sources(cwd=cwd)

    def parse_mode(self, text: str) -> PermissionMode:
        return parse_mode(text)

    def can_use_tool(self, config: RunConfig) -> CanUseTool:
        return RuleBasedPermissions(config.approver if config.interactive else None,
                                    interactive=config.interactive, approval_timeout=config.approval_timeout)

    def hooks(self) -> HookRunner:
        """The ``@agent_hook`` functions registered in this process, read afresh at every call."""
        return RegistryHookRunner(default_registry)

    def as_tool(self, value: Any) -> Tool:
        return as_tool(value)

    def visible_tools(self, pool: ToolPool, permissions: Any) -> ToolPool:
        return visible_tools(pool, permissions)


_DEFAULT: RunPlugins = DefaultPlugins()


def default_plugins() -> RunPlugins:
    """The product's plug-ins (stateless: one object serves every run)."""
    return _DEFAULT
