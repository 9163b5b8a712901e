"""Sub-agent definitions (SPEC §12): the built-in ``general-purpose`` and ``explore``, the
user's (`subagent`) and the settings file's ``"agents"`` section.

A definition says which of the parent's tools the sub-agent gets. ``explore`` gets only the
tools that are read-only whatever their input (a ``@tool(read_only=True)`` function, a read-only
built-in, an MCP tool with ``readOnlyHint``): a tool whose safety depends on its input (Bash)
is left out, so an ``explore`` call is safe to run beside others.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from ..core.tool import Tool

AGENT_TOOL_NAME = "Agent"
ALWAYS_KEPT = frozenset({"ReadToolOutput"})
"""Tools every sub-agent keeps: reading the cut-off part of its own results."""


@dataclass(frozen=True)
class SubagentDefinition:
    """One kind of sub-agent. ``tools``: names of the parent's tools it may use (None: all of
    them; the special value ``"read_only"`` selects the statically read-only ones)."""

    name: str
    description: str
    system: str | None = None
    tools: tuple[str, ...] | str | None = None
    model: Any = None
    max_turns: int = 20
    source: str = "user"

    def selects(self, tool: Tool) -> bool:
        if tool.name in ALWAYS_KEPT:
            return True
        if self.tools is None:
            return True
        if self.tools == "read_only":
            return tool.name != AGENT_TOOL_NAME and is_statically_read_only(tool)
        return tool.name in self.tools

    def tool_selection(self, tools: Iterable[Tool]) -> list[Tool]:
        return [t for t in tools if self.selects(t)]

    def is_read_only(self, tools: Iterable[Tool]) -> bool:
        """Every tool this definition allows (among ``tools``) is read-only whatever its input."""
        chosen = self.tool_selection(tools)
        return all(t.name != AGENT_TOOL_NAME and is_statically_read_only(t) for t in chosen)


def is_statically_read_only(tool: Tool) -> bool:
    """Read-only for every input. Asked with an empty input object: a tool whose answer needs
    the input (a shell command's text) cannot answer and counts as not read-only (fail closed)."""
    try:
        return bool(tool.is_read_only(tool.input_model.model_construct()))
    except Exception:
        return False


BUILTIN_DEFINITIONS: tuple[SubagentDefinition, ...] = (
    SubagentDefinition(
        "general-purpose",
        "A general agent for multi-step tasks: it has the same tools as you.",
        system="You are a sub-agent working on one task for another agent. Do the task, then answer "
               "with a concise report of what you found or did: your final message is all it sees.",
        tools=None, source="built-in",
    ),
    SubagentDefinition(
        "explore",
        "A fast read-only agent for finding and reading things (files, variables, data); it cannot "
        "change anything. Several can run at once.",
        system="You are a read-only exploration sub-agent. Look things up with your tools, change "
               "nothing, and answer with a concise report: your final message is all the caller sees.",
        tools="read_only", max_turns=15, source="built-in",
    ),
)

_USER: dict[str, SubagentDefinition] = {}


def subagent(name: str, description: str, *, system: str | None = None, tools: Sequence[str] | None = None,
             model: Any = None, max_turns: int = 20) -> SubagentDefinition:
    """Define (or redefine) a sub-agent the model can start with ``Agent(subagent_type=name)``.

    ``tools`` names the parent's tools it may use (None: all of them); ``model`` is a `Model`
    or a model name (None: the parent's model)."""
    if not name or not isinstance(name, str):
        raise ValueError("a sub-agent needs a non-empty name")
    definition = SubagentDefinition(name, description, system=system,
                                    tools=None if tools is None else tuple(tools),
                                    model=model, max_turns=int(max_turns), source="user")
    _USER[name] = definition
    return definition


def remove_subagent(name: str) -> None:
    _USER.pop(name, None)


def from_settings(section: Mapping[str, Any] | None) -> list[SubagentDefinition]:
    """The settings file's ``"agents": {NAME: {"description", "system", "tools", "model", "max_turns"}}``
    (entries already checked by the settings loader: `permissions.settings.AgentEntry`)."""
    found = []
    for name, entry in (section or {}).items():
        get = entry.get if isinstance(entry, Mapping) else lambda key, default=None, e=entry: getattr(e, key, default)
        tools = get("tools")
        found.append(SubagentDefinition(
            name, str(get("description", "") or ""), system=get("system"),
            tools=None if tools is None else ("read_only" if tools == "read_only" else tuple(tools)),
            model=get("model"), max_turns=int(get("max_turns", 20) or 20), source="settings",
        ))
    return found


def all_definitions(settings: Any = None) -> dict[str, SubagentDefinition]:
    """Built-in, then settings, then ``subagent(...)`` definitions (a later one replaces an earlier)."""
    found: dict[str, SubagentDefinition] = {d.name: d for d in BUILTIN_DEFINITIONS}
    section = getattr(settings, "agents", None) if settings is not None else None
    found.update({d.name: d for d in from_settings(section)})
    found.update(_USER)
    return found
