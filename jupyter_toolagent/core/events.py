"""Typed events of a run: what the notebook layer (or any consumer) renders.

Each event is a small keyword-only dataclass with a literal ``kind``; `AgentEvent` is their
union, so a consumer can ``match event.kind`` and ``assert_never`` on a forgotten case.
The core emits them; it never renders them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal, Union

from .usage import Usage

ToolStatus = Literal["done", "error", "denied", "cancelled", "interrupted", "invalid"]
RunFinishReason = Literal[
    "end_turn",
    "stop_sequence",
    "max_turns",
    "max_tokens",
    "refusal",
    "truncated",
    "aborted",
    "api_error",
    "hook_stopped",
    "dry_run",
    "error",
]


def _now() -> float:
    return time.monotonic()


@dataclass(kw_only=True)
class RequestStartedEvent:
    """A model request is about to be sent (``index`` counts requests in this run from 0)."""

    kind: Literal["request_started"] = "request_started"
    index: int
    model: str
    at: float = field(default_factory=_now)


@dataclass(kw_only=True)
class TextDeltaEvent:
    """A piece of assistant text; ``snapshot`` is the whole text block so far."""

    kind: Literal["text_delta"] = "text_delta"
    text: str
    snapshot: str
    block_index: int


@dataclass(kw_only=True)
class ThinkingDeltaEvent:
    kind: Literal["thinking_delta"] = "thinking_delta"
    thinking: str
    block_index: int


@dataclass(kw_only=True)
class ToolQueuedEvent:
    """A complete tool_use block arrived and was handed to the scheduler."""

    kind: Literal["tool_queued"] = "tool_queued"
    tool_use_id: str
    name: str
    input: dict[str, Any]
    at: float = field(default_factory=_now)


@dataclass(kw_only=True)
class ToolStartedEvent:
    """The call itself started (after validation, hooks and permission)."""

    kind: Literal["tool_started"] = "tool_started"
    tool_use_id: str
    name: str
    batch: int | None = None
    at: float = field(default_factory=_now)


@dataclass(kw_only=True)
class ToolProgressEvent:
    """Progress reported by a tool or hook; displayed, never sent to the model."""

    kind: Literal["tool_progress"] = "tool_progress"
    tool_use_id: str
    message: str = ""
    fraction: float | None = None
    output: str = ""
    label: str = ""
    """How the call runs (``sandbox: read-only, no network``); the card keeps the last one."""


@dataclass(kw_only=True)
class ToolFinishedEvent:
    """The one tool_result for ``tool_use_id`` is decided."""

    kind: Literal["tool_finished"] = "tool_finished"
    tool_use_id: str
    name: str
    status: ToolStatus
    result: dict[str, Any]
    """The ``tool_result`` block exactly as it goes into the transcript."""
    duration: float | None = None
    captured_output: str = ""
    at: float = field(default_factory=_now)


@dataclass(kw_only=True)
class PermissionAskedEvent:
    """The runtime needs a person's decision for a call."""

    kind: Literal["permission_asked"] = "permission_asked"
    tool_use_id: str
    name: str
    input: dict[str, Any]
    reason: str
    suggested_rule: str | None = None
    at: float = field(default_factory=_now)


@dataclass(kw_only=True)
class PermissionDecidedEvent:
    kind: Literal["permission_decided"] = "permission_decided"
    tool_use_id: str
    name: str
    behavior: Literal["allow", "deny"]
    decided_by: str
    """``rule``, ``mode``, ``hook``, ``user``, ``policy``, ``timeout`` …"""
    message: str = ""
    rule_added: str | None = None
    at: float = field(default_factory=_now)


@dataclass(kw_only=True)
class NoticeEvent:
    """A message for the person only (hook system messages, refusals, retries)."""

    kind: Literal["notice"] = "notice"
    level: Literal["info", "warning", "error"] = "info"
    text: str


@dataclass(kw_only=True)
class RequestFinishedEvent:
    kind: Literal["request_finished"] = "request_finished"
    index: int
    stop_reason: str | None
    usage: Usage
    request_id: str | None = None
    message: dict[str, Any] | None = None
    context_window: int | None = None
    """The model's context window in tokens; the request used ``usage``'s input + cache read +
    cache write of it (SPEC §14)."""
    at: float = field(default_factory=_now)


@dataclass(kw_only=True)
class RunFinishedEvent:
    kind: Literal["run_finished"] = "run_finished"
    reason: RunFinishReason
    usage: Usage
    error: str | None = None
    at: float = field(default_factory=_now)


@dataclass(kw_only=True)
class SubagentEvent:
    """An event of a sub-agent's run, forwarded to the parent run: ``parent_tool_use_id`` is
    the ``Agent`` call that started it, ``agent`` its label, ``depth`` 1 or 2."""

    kind: Literal["subagent"] = "subagent"
    parent_tool_use_id: str
    agent: str
    depth: int
    event: Any
    at: float = field(default_factory=_now)


AgentEvent = Union[
    RequestStartedEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolQueuedEvent,
    ToolStartedEvent,
    ToolProgressEvent,
    ToolFinishedEvent,
    PermissionAskedEvent,
    PermissionDecidedEvent,
    NoticeEvent,
    RequestFinishedEvent,
    RunFinishedEvent,
    SubagentEvent,
]
