"""Deferred tools (SPEC §13): tools sent by name only until `ToolSearch` loads them.

Many MCP servers carry tens of thousands of tokens of tool schemas on every request, and a
model chooses worse among many tools. So, by default, once more than `AUTO_THRESHOLD` MCP
tools are offered, they are *deferred*: their names are listed in a text block of the first
user message (not in ``tools``), and the model loads the ones it needs with ``ToolSearch``;
a loaded tool is sent with its full schema in ``tools`` from the next request on.

This works against any Messages-API endpoint (no beta feature): only the client changes what
it sends. The listing covers every deferred tool, loaded or not, so it stays byte-identical
between requests; loading a tool changes only the ``tools`` section (one prompt-cache miss).

Which tools: ``mode`` is ``"auto"`` (MCP tools past the threshold), ``"always"`` (every MCP
tool) or ``"never"``; a tool's own preference (``defer`` attribute, or its MCP server's
``"defer": true|false``) wins over the mode's default, except that ``"never"`` defers nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Literal

if TYPE_CHECKING:
    from .tool import Tool, ToolPool

DeferMode = Literal["auto", "always", "never"]
DEFER_MODES: tuple[str, ...] = ("auto", "always", "never")
AUTO_THRESHOLD = 20
TOOL_SEARCH_NAME = "ToolSearch"
LISTING_OPEN = "<available-deferred-tools>"
LISTING_CLOSE = "</available-deferred-tools>"


@dataclass
class DeferredTools:
    """The deferred tools of one request: ``all`` by name (loaded or not), and those whose
    schemas this request does not carry (``unloaded``)."""

    all: dict[str, "Tool"] = field(default_factory=dict)
    unloaded: dict[str, "Tool"] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.all)

    def listing(self) -> str:
        names = "\n".join(sorted(self.all))
        return (f"{LISTING_OPEN}\n{names}\n{LISTING_CLOSE}\n"
                f"The tools listed above exist, but their definitions are not loaded yet. Before calling "
                f"one, load it with {TOOL_SEARCH_NAME} (query \"select:NAME\" for names you know, or keywords "
                f"to find tools); it can be called from your next message on.")

    def hint(self, name: str) -> str:
        return (f"Error: {name} is a deferred tool whose definition has not been loaded, so it was not run. "
                f"Load it first with {TOOL_SEARCH_NAME} (query \"select:{name}\"), then call it again.")


def is_mcp_like(tool: "Tool") -> bool:
    return tool.name.startswith("mcp__") or (tool.rule_group or "").startswith("mcp__")


def defer_preference(tool: "Tool") -> bool | None:
    """The tool's own say: its ``defer`` attribute, else its MCP server's ``"defer"`` setting."""
    own = getattr(tool, "defer", None)
    if own is not None:
        return bool(own)
    connection = getattr(tool, "_connection", None)
    if callable(connection):
        try:
            value = connection().config.defer
        except Exception:
            return None
        return None if value is None else bool(value)
    return None


def choose_deferred(tools: Iterable["Tool"], mode: str) -> set[str]:
    """Names of the tools to defer under ``mode`` (see the module docstring)."""
    if mode not in DEFER_MODES:
        raise ValueError(f"defer_tools must be one of {', '.join(DEFER_MODES)}, not {mode!r}")
    if mode == "never":
        return set()
    tools = list(tools)
    chosen: set[str] = set()
    undecided: list["Tool"] = []
    for t in tools:
        if t.name == TOOL_SEARCH_NAME:
            continue
        preference = defer_preference(t)
        if preference is True:
            chosen.add(t.name)
        elif preference is None and is_mcp_like(t):
            undecided.append(t)
    mcp_count = sum(1 for t in tools if is_mcp_like(t))
    if mode == "always" or mcp_count > AUTO_THRESHOLD:
        chosen.update(t.name for t in undecided)
    return chosen


def split_deferred(pool: "ToolPool", mode: str, loaded: set[str]) -> tuple["ToolPool", DeferredTools]:
    """The pool this request sends (deferred tools not yet loaded left out, `ToolSearch` added
    when anything is deferred) and the deferred tools."""
    from .tool import ToolPool
    from .tool_search import ToolSearch

    names = choose_deferred(pool, mode)
    if not names:
        return pool, DeferredTools()
    deferred = DeferredTools(all={t.name: t for t in pool if t.name in names})
    deferred.unloaded = {n: t for n, t in deferred.all.items() if n not in loaded}
    sent = ToolPool([*(t for t in pool if t.name not in deferred.unloaded), ToolSearch()])
    return sent, deferred


def with_listing(messages: list[dict[str, Any]], deferred: DeferredTools | None) -> list[dict[str, Any]]:
    """``messages`` with the deferred tools' names in a text block at the start of the first
    user message (the transcript itself is not changed)."""
    if not deferred or not messages or messages[0].get("role") != "user":
        return messages
    first = messages[0]
    content = first["content"]
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    return [{**first, "content": [{"type": "text", "text": deferred.listing()}, *blocks]}, *messages[1:]]
