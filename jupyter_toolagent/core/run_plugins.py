"""The plug-ins a run uses where its `RunConfig` names none: the slot, not the filling.

The core runs tools, asks a permission callable and calls hooks, but it does not know the rule
engine (`jupyter_toolagent.permissions`), the ``@agent_hook`` registry
(`jupyter_toolagent.hooks`) or how a function becomes a tool (`jupyter_toolagent.tools`):
those sit above it and must stay replaceable. So a session does
not build them itself; whoever starts runs hands it a `RunPlugins` through
``RunConfig.plugins``. `jupyter_toolagent.defaults.default_plugins` is the product's filling,
wired by `Agent` and by the ``%%agent`` magic.

Without plug-ins a run is the bare core: it needs an explicit ``can_use_tool``, takes no rules
or mode, keeps no rule state (``ctx.permissions`` is the session's, normally None), calls only
``config.hooks`` and runs `Tool` objects and ``@tool`` functions (which carry one), no plain
functions.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .hook_types import HookRunner
    from .permission_types import CanUseTool
    from .session import PermissionMode, RunConfig
    from .tool import Tool, ToolPool

__all__ = ["RunPlugins"]


class RunPlugins(Protocol):
    """What a session asks of the permission, hook and tool plug-ins while it sets up a run."""

    def permission_state(self, cwd: Path) -> Any:
        """The rule state a session starts with (rules by source, session grants, the mode),
        made on the session's first run so that an invalid settings file is reported then,
        before anything is sent."""
        ...

    def parse_mode(self, text: str) -> "PermissionMode":
        """The permission mode ``text`` names; raises `ConfigError` for an unknown one."""
        ...

    def can_use_tool(self, config: "RunConfig") -> "CanUseTool":
        """The permission callable for a run whose config gives none."""
        ...

    def hooks(self) -> "HookRunner":
        """The hook runner for a run whose config gives none."""
        ...

    def as_tool(self, value: Any) -> "Tool":
        """The `Tool` for a plain function a tool provider returned."""
        ...

    def visible_tools(self, pool: "ToolPool", permissions: Any) -> "ToolPool":
        """The pool without the tools the rule state removes from the request (whole-tool
        deny rules)."""
        ...
