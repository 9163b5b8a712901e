"""The tools a run offers *now*: the built-ins, the ``@tool`` functions of a namespace, and more.

`Agent` and a ``%%agent`` cell both re-collect their tools before every model request, so a
function redefined in another cell (or a variable rebound in a script) is what the next request
sees. Both collect them the same way, in the same order — the tools section of a request stays
byte-identical between requests when nothing changed (prompt caching) — so the rule lives here.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from .function_tool import as_tool, tools_from_namespace
from . import builtin_tools

__all__ = ["tools_now"]


def tools_now(
    *,
    builtin: bool = True,
    namespace: Mapping[str, Any] | None = None,
    named_functions: Sequence[str] = (),
    also: Iterable[Any] = (),
) -> list[Any]:
    """Built-in tools (with ``builtin``), then the namespace's ``@tool`` functions, then the
    plain functions of the namespace named in ``named_functions`` (a cell's ``--tools``; a name
    that is already a tool, missing, or not a plain function is left for the caller to report),
    then ``also`` (tools or functions the caller holds itself), in that order."""
    tools: list[Any] = list(builtin_tools()) if builtin else []
    if namespace is not None:
        tools.extend(tools_from_namespace(namespace))
        known = {t.name for t in tools}
        for name in named_functions:
            value = namespace.get(name)
            if name not in known and value is not None and callable(value) and not isinstance(value, type):
                tools.append(as_tool(value, name=name))
    tools.extend(also)
    return tools
