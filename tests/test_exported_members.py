"""The public surface is pinned: the top-level ``__all__`` exactly, and one import path per public name.

Where each public name lives (decided per name):

- The names below (`EXPECTED`) are public at ``jupyter_toolagent``. The top level imports each
  from the module that defines it, never through a subpackage's re-export.
- Exceptions live in ``jupyter_toolagent.errors`` (their one home, drawn as a tree there); the
  top level also offers the six a script most often catches (`TOP_LEVEL_EXCEPTIONS`).
- ``text_block`` / ``tool_use_block`` / ``thinking_block`` / ``ScriptedTurn`` are public at
  ``jupyter_toolagent.models`` beside ``ScriptedModel`` (not at ``models.scripted``, nor at
  ``testing``, which is the fake server's surface only).
- A subpackage ``__init__`` lists a name only when that subpackage is the name's public path.
  Two top-level names are also in the surface of their plug-in package, which is pinned on its
  own (`tests/permissions/test_public_surface.py`): ``PermissionContext`` and
  ``RuleBasedPermissions`` in ``jupyter_toolagent.permissions`` (`PLUGIN_SURFACE`).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections import defaultdict
from types import ModuleType
from typing import Any

import jupyter_toolagent

EXPECTED = [
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
    "subagent",
    "tool",
    "unload_ipython_extension",
]
TOP_LEVEL_EXCEPTIONS = {"ConfigError", "ModelAPIError", "RuleSyntaxError", "SettingsFileError", "ToolAgentError",
                        "ToolDefinitionError"}
PLUGIN_SURFACE = {"PermissionContext": "jupyter_toolagent.permissions",
                  "RuleBasedPermissions": "jupyter_toolagent.permissions"}


def surfaces() -> dict[str, ModuleType]:
    """The top level and every module or subpackage directly below it that declares ``__all__``."""
    found = {"jupyter_toolagent": jupyter_toolagent}
    for info in pkgutil.iter_modules(jupyter_toolagent.__path__, "jupyter_toolagent."):
        module = importlib.import_module(info.name)
        if hasattr(module, "__all__"):
            found[info.name] = module
    return found


def test_top_level_all_is_pinned() -> None:
    assert sorted(jupyter_toolagent.__all__) == EXPECTED
    for name in EXPECTED:
        assert getattr(jupyter_toolagent, name) is not None, name


def test_agent_event_is_what_agent_stream_yields() -> None:
    from jupyter_toolagent.core.events import AgentEvent, RunFinishedEvent

    assert jupyter_toolagent.AgentEvent is AgentEvent
    assert RunFinishedEvent in AgentEvent.__args__  # type: ignore[attr-defined]  # a Union alias
    assert "AgentEvent" in str(jupyter_toolagent.Agent.stream.__annotations__["return"])


def test_each_public_object_has_one_public_path() -> None:
    listed: dict[int, list[str]] = defaultdict(list)
    objects: dict[int, tuple[str, Any]] = {}
    for surface, module in surfaces().items():
        for name in module.__all__:
            obj = getattr(module, name)
            listed[id(obj)].append(surface)
            objects[id(obj)] = (name, obj)
    problems = []
    for key, where in listed.items():
        name, obj = objects[key]
        if len(where) == 1:
            continue
        defining = getattr(obj, "__module__", None)
        allowed = {"jupyter_toolagent"}
        if name in TOP_LEVEL_EXCEPTIONS:
            allowed.add("jupyter_toolagent.errors")
        if defining in where:  # a top-level name also listed by the module that defines it (hooks.py)
            allowed.add(defining)
        if name in PLUGIN_SURFACE:
            allowed.add(PLUGIN_SURFACE[name])
        if set(where) - allowed or "jupyter_toolagent" not in where:
            problems.append(f"{name}: {sorted(where)}")
    assert problems == []


def test_script_blocks_have_one_public_path() -> None:
    from jupyter_toolagent import models, testing
    from jupyter_toolagent.models import scripted, turns

    for name in ("text_block", "tool_use_block", "thinking_block", "ScriptedTurn"):
        assert name in models.__all__
        assert getattr(models, name) is getattr(turns, name)
        assert name not in testing.__all__ and not hasattr(testing, name)
        assert name not in scripted.__all__ and not hasattr(scripted, name)
    assert scripted.__all__ == ["ScriptedModel"]


def test_top_level_imports_from_defining_modules() -> None:
    """No re-export chain behind the top level: its imports name the defining module."""
    import ast
    from pathlib import Path

    tree = ast.parse(Path(jupyter_toolagent.__file__).read_text())
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            module = importlib.import_module(f"jupyter_toolagent.{node.module}")
            for alias in node.names:
                obj = getattr(module, alias.name)
                defining = getattr(obj, "__module__", None)
                if isinstance(obj, type) or callable(obj) and not hasattr(obj, "__origin__"):
                    assert defining == module.__name__, f"{alias.name} is imported from {module.__name__}, " \
                                                        f"defined in {defining}"
