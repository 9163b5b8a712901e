"""The tool pool `Agent` and a ``%%agent`` cell both offer: what is in it, in which order."""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_toolagent import Agent, tool
from jupyter_toolagent.core.tool import Tool
from jupyter_toolagent.models.scripted import ScriptedModel
from jupyter_toolagent.tools import BUILTIN_TOOL_NAMES
from jupyter_toolagent.tools.pool import tools_now


@tool
def decorated(x: int) -> int:
    """A tool function."""
    return x


def plain(text: str) -> str:
    """A plain function."""
    return text


class NotAFunction:
    pass


def names(tools: list[Any]) -> list[str]:
    return [t.name if isinstance(t, Tool) else t.__name__ for t in tools]


def test_builtins_then_namespace_tools_then_named_functions_then_the_callers_own() -> None:
    namespace = {"decorated": decorated, "plain": plain, "other": plain, "Klass": NotAFunction, "number": 3}
    pool = tools_now(namespace=namespace, named_functions=["plain", "Klass", "number", "missing", "decorated"],
                     also=[plain])
    assert names(pool) == [*BUILTIN_TOOL_NAMES, "decorated", "plain", "plain"]
    assert all(isinstance(t, Tool) for t in pool[:-1]) and pool[-1] is plain


@pytest.mark.parametrize("builtin", [True, False])
def test_without_a_namespace_only_builtins_and_the_callers_tools(builtin: bool) -> None:
    pool = tools_now(builtin=builtin, named_functions=["plain"], also=[plain])
    assert names(pool) == [*(BUILTIN_TOOL_NAMES if builtin else ()), "plain"]


def test_a_redefinition_is_what_the_next_collection_sees() -> None:
    namespace: dict[str, Any] = {"decorated": decorated}
    first = tools_now(builtin=False, namespace=namespace)

    @tool
    def decorated_again(x: int) -> int:
        """Redefined."""
        return x

    namespace["decorated"] = decorated_again
    second = tools_now(builtin=False, namespace=namespace)
    assert names(first) == ["decorated"] and names(second) == ["decorated_again"]


def test_agent_offers_the_same_pool() -> None:
    namespace = {"decorated": decorated}
    agent = Agent(ScriptedModel(["ok"]), tools=[plain], namespace=namespace, tool_provider=lambda: [decorated],
                  builtin_tools=True)
    offered = agent.config.tool_provider()
    assert names(offered) == [*BUILTIN_TOOL_NAMES, "decorated", "plain", "decorated"]
