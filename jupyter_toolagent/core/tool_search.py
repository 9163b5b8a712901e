"""``ToolSearch``: finds deferred tools and loads them (SPEC §13).

Queries: ``select:A,B`` loads those tools by name; otherwise the words are matched against
each deferred tool's name (split at ``_``) and description, and a word written ``+word`` must
match. The result carries the matched tools' full definitions, and they are loaded: the next
request sends their schemas in ``tools``, so the model can call them. Read-only and always
allowed: it changes only which schemas are sent.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Optional

from pydantic import BaseModel, Field

from .permission_types import PermissionDecision
from .tool import Progress, Tool, ToolUseContext

if TYPE_CHECKING:
    from .deferred_tools import DeferredTools

_WORD = re.compile(r"[a-z0-9]+")


class ToolSearchInput(BaseModel):
    query: str = Field(description='"select:NAME1,NAME2" to load tools by name, or keywords ("+word" must match)')
    max_results: Optional[int] = Field(default=5, ge=1, le=50, description="Most tools to return (default 5)")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def search(deferred: "DeferredTools", query: str, max_results: int = 5) -> tuple[list[Tool], list[str]]:
    """(the matched tools, best first; the names of a ``select:`` that match nothing)."""
    query = query.strip()
    if query.lower().startswith("select:"):
        wanted = [n.strip() for n in query[len("select:"):].split(",") if n.strip()]
        found = [deferred.all[n] for n in wanted if n in deferred.all]
        return found, [n for n in wanted if n not in deferred.all]
    required = [w for token in query.split() if token.startswith("+") for w in _words(token[1:])]
    optional = [w for token in query.split() if not token.startswith("+") for w in _words(token)]
    scored: list[tuple[float, str, Tool]] = []
    for name, tool in deferred.all.items():
        name_words = set(_words(name))
        text_words = set(_words(tool.description or ""))
        if any(w not in name_words and w not in text_words for w in required):
            continue
        score = sum(3.0 if w in name_words else 1.0 if w in text_words else 0.0 for w in [*required, *optional])
        score += sum(0.5 for w in optional if any(w in n for n in name_words))  # partial name match
        if score > 0:
            scored.append((score, name, tool))
    scored.sort(key=lambda s: (-s[0], s[1]))
    return [t for _, _, t in scored[:max_results]], []


def definitions_text(tools: list[Tool]) -> str:
    lines = ["<functions>"]
    for t in tools:
        spec = {"name": t.name, "description": t.description, "parameters": t.input_schema()}
        lines.append(f"<function>{json.dumps(spec, ensure_ascii=False)}</function>")
    lines.append("</functions>")
    return "\n".join(lines)


class ToolSearch(Tool[ToolSearchInput]):
    name = "ToolSearch"
    description = ("Search the deferred tools (listed by name in <available-deferred-tools>) and load them. "
                   'Query "select:NAME1,NAME2" loads tools by exact name; keywords find tools by name and '
                   'description ("+word" requires a word). The matched tools\' definitions are returned and '
                   "they can be called from your next message on.")
    input_model = ToolSearchInput

    def is_read_only(self, input: ToolSearchInput) -> bool:
        return True

    def is_concurrency_safe(self, input: ToolSearchInput) -> bool:
        return True

    async def check_permissions(self, input: ToolSearchInput, ctx: ToolUseContext) -> PermissionDecision:
        return PermissionDecision.allow("tool", message="searching tools changes nothing")

    async def call(self, input: ToolSearchInput, ctx: ToolUseContext, progress: Progress) -> Any:
        deferred = ctx.deferred
        if not deferred:
            return "No tools are deferred in this session: every tool's definition is already loaded."
        found, missing = search(deferred, input.query, input.max_results or 5)
        loaded = getattr(ctx.session, "loaded_tools", None)
        if loaded is not None:
            loaded.update(t.name for t in found)
        parts = []
        if found:
            parts.append(f"Loaded {len(found)} tool(s); call them from your next message:\n{definitions_text(found)}")
        else:
            parts.append(f"No deferred tool matches {input.query!r}.")
        if missing:
            parts.append(f"No deferred tool is named: {', '.join(missing)}.")
        return "\n".join(parts)
