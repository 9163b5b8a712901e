"""Agent tools: sub-agents started by the ``Agent`` tool (SPEC §12)."""

from .agent_tool import AgentInput, AgentTool, SubagentSource
from .definitions import BUILTIN_DEFINITIONS, SubagentDefinition, all_definitions, remove_subagent
from .subrun import MAX_DEPTH, SubRun, find_subrun, iter_subruns, run_subagent

__all__ = ["AgentInput", "AgentTool", "BUILTIN_DEFINITIONS", "MAX_DEPTH", "SubRun", "SubagentDefinition",
           "SubagentSource", "all_definitions", "find_subrun", "iter_subruns", "remove_subagent", "run_subagent"]
