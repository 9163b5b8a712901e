"""A rule that names no tool never matches: as a deny rule it silently does nothing.

`tool_name_problem` finds such rules and names the tool most likely meant; `Agent` refuses
them when all its tools are known, and refuses likely typos even when more tools may come.
"""

from __future__ import annotations

import pytest

from jupyter_toolagent import Agent
from jupyter_toolagent.errors import ConfigError
from jupyter_toolagent.models import ScriptedModel
from jupyter_toolagent.permissions.rules import parse_rule, tool_name_problem

KNOWN = {"Bash", "Read", "RunPython", "ReadToolOutput", "delete_rows"}


@pytest.mark.parametrize(("rule", "meant", "suggestion"), [
    ("bash(rm:*)", "Bash", "'Bash(rm:*)'"),
    ("BASH(rm:*)", "Bash", "'Bash(rm:*)'"),
    ("runpython", "RunPython", "'RunPython'"),
    ("Bsah(rm:*)", "Bash", "'Bash(rm:*)'"),
    ("delete_row", "delete_rows", "'delete_rows'"),
])
def test_a_misspelled_tool_name_names_the_tool_meant(rule: str, meant: str, suggestion: str) -> None:
    problem = tool_name_problem(parse_rule(rule), KNOWN)
    assert problem is not None
    assert problem.meant == meant
    assert f"did you mean {suggestion}?" in problem.message
    assert repr(parse_rule(rule).tool) in problem.message


def test_a_name_with_nothing_close_lists_the_tools() -> None:
    problem = tool_name_problem(parse_rule("WebFetch"), KNOWN)
    assert problem is not None and problem.meant is None
    assert "names no tool 'WebFetch'" in problem.message
    assert "Bash, Read, ReadToolOutput, RunPython, delete_rows" in problem.message


@pytest.mark.parametrize("rule", ["Bash(rm:*)", "Bash", "Read(./data/**)", "delete_rows"])
def test_a_rule_for_a_known_tool_is_fine(rule: str) -> None:
    assert tool_name_problem(parse_rule(rule), KNOWN) is None


def echo(text: str) -> str:
    """Say it back."""
    return text


def test_agent_refuses_a_deny_rule_for_a_tool_it_does_not_have() -> None:
    with pytest.raises(ConfigError, match=r"deny: rule 'bash\(rm:\*\)' names no tool 'bash'; did you mean 'Bash\(rm:\*\)'"):
        Agent(ScriptedModel([]), builtin_tools=True, deny=["bash(rm:*)"])
    with pytest.raises(ConfigError, match="allow: rule 'Bash' names no tool 'Bash' \\(tools: ReadToolOutput, echo\\)"):
        Agent(ScriptedModel([]), tools=[echo], allow=["Bash"])


def test_agent_with_tools_still_to_come_only_refuses_likely_typos() -> None:
    agent = Agent(ScriptedModel([]), tools=[echo], namespace={}, deny=["delete_rows"])
    assert agent.config.deny == ["delete_rows"]
    with pytest.raises(ConfigError, match="did you mean 'echo'"):
        Agent(ScriptedModel([]), tools=[echo], namespace={}, deny=["Echo"])
