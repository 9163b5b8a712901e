"""Shared pieces of the reliability suite: probe tools, a recording policy, an empty hook runner,
transcript checks. (The counts every test reports go through `suite_counts.report`.)
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any, Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from jupyter_toolagent.core.pairing import check_pairing, normalize_messages_for_api
from jupyter_toolagent.core.permission_types import PermissionDecision
from jupyter_toolagent.core.tool import Progress, Tool, ToolUseContext
from jupyter_toolagent.hooks import HookRegistry, RegistryHookRunner
from jupyter_toolagent.testing.validation import request_error

# --- tools ------------------------------------------------------------------------------------

class TagInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tag: str
    delay: float = 0.0
    fail: bool = False


class SideEffect(Tool):
    """Records its tag the moment it starts (the side effect), then sleeps and maybe raises.

    ``running``/``max_running`` are shared through ``gauge`` to measure concurrency."""

    input_model = TagInput

    def __init__(self, name: str, effects: list[str], *, safe: bool, behavior: str = "cancel",
                 gauge: "Gauge | None" = None) -> None:
        self.name = name
        self.description = f"reliability probe {name}"
        self.effects = effects
        self.safe = safe
        self.interrupt_behavior = behavior  # type: ignore[assignment]
        self.gauge = gauge

    def is_concurrency_safe(self, input: BaseModel) -> bool:
        return self.safe

    def is_read_only(self, input: BaseModel) -> bool:
        return self.safe

    async def call(self, input: BaseModel, ctx: ToolUseContext, progress: Progress) -> Any:
        assert isinstance(input, TagInput)
        self.effects.append(input.tag)
        if self.gauge is not None:
            self.gauge.enter()
        try:
            if input.delay:
                await asyncio.sleep(input.delay)
        finally:
            if self.gauge is not None:
                self.gauge.leave()
        if input.fail:
            raise RuntimeError(f"{self.name} failed on purpose ({input.tag})")
        return f"{self.name} did {input.tag}"


class Gauge:
    """How many calls run at once, and the most that ever did."""

    def __init__(self) -> None:
        self.running = 0
        self.most = 0

    def enter(self) -> None:
        self.running += 1
        self.most = max(self.most, self.running)

    def leave(self) -> None:
        self.running -= 1


def probe_tools(effects: list[str], gauge: Gauge | None = None) -> list[Tool]:
    """Look (safe), Keep (safe, finishes on abort), Change (unsafe), Shell (safe; like every
    failure, its error cancels nothing)."""
    return [
        SideEffect("Look", effects, safe=True, gauge=gauge),
        SideEffect("Keep", effects, safe=True, behavior="block", gauge=gauge),
        SideEffect("Change", effects, safe=False, gauge=gauge),
        SideEffect("Shell", effects, safe=True, gauge=gauge),
    ]


def empty_hooks() -> RegistryHookRunner:
    """A hook runner over an empty registry: the process-wide ``@agent_hook`` registry (what
    ``RunConfig(hooks=None)`` uses) must not leak into these runs."""
    return RegistryHookRunner(HookRegistry())


class RecordingPolicy:
    """A ``can_use_tool`` that denies the tags it is told to and records every allow by tag
    (tags are unique per call, ids may repeat)."""

    def __init__(self, denied: Iterable[str] = ()) -> None:
        self.denied = set(denied)
        self.allowed: Counter[str] = Counter()
        self.denials: Counter[str] = Counter()

    async def __call__(self, call, ctx, *, hook_decision):  # noqa: ANN001
        input = call.observable
        tag = str(input.get("tag", ""))
        if tag in self.denied:
            self.denials[tag] += 1
            return PermissionDecision.deny(f"denied {tag} by the test policy", "policy")
        self.allowed[tag] += 1
        return PermissionDecision.allow("policy")


# --- transcript checks ---------------------------------------------------------------------------

def blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def assert_every_tool_use_paired_once(messages: Sequence[dict[str, Any]]) -> None:
    """The API's rules (check_pairing after normalisation) and, explicitly, exactly one
    tool_result per tool_use id, placed in the next message."""
    normalized = normalize_messages_for_api(list(messages))
    assert check_pairing(normalized) == [], check_pairing(normalized)
    for n, message in enumerate(normalized):
        if message["role"] != "assistant":
            continue
        ids = [b["id"] for b in blocks(message) if b.get("type") == "tool_use"]
        assert len(ids) == len(set(ids)), f"message {n} repeats a tool_use id: {ids}"
        if not ids:
            continue
        assert n + 1 < len(normalized), f"message {n} has tool_use blocks and no next message"
        results = [b["tool_use_id"] for b in blocks(normalized[n + 1]) if b.get("type") == "tool_result"]
        assert sorted(results) == sorted(ids), (ids, results)


def assert_bodies_valid(bodies: Iterable[Any]) -> int:
    """Every request body passes the fake server's (the API's) checks; returns how many."""
    count = 0
    for body in bodies:
        assert isinstance(body, dict)
        problem = request_error(body)
        assert problem is None, f"a request the API would refuse with 400: {problem}"
        count += 1
    return count


def first_user_text(body: dict[str, Any]) -> str:
    for message in body.get("messages", []):
        if message.get("role") == "user":
            return " ".join(b.get("text", "") for b in blocks(message) if b.get("type") == "text")
    return ""
