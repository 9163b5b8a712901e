"""What the cell shows about a run, folded from the run's events with pure code.

`apply_event` folds one `AgentEvent` into a `RunViewState` (in place, like the SDK's message
accumulator) and returns an `Update` naming what changed, so the widget layer touches only
those parts and knows whether the change must be shown at once (a new card, an ask, an end
state) or may wait for the next coalesced refresh (text deltas, progress). Nothing here
imports widgets or IPython: the live view, the static rendering and the tests all read the
same state.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal, assert_never

from ..core.events import (
    AgentEvent,
    NoticeEvent,
    PermissionAskedEvent,
    PermissionDecidedEvent,
    RequestFinishedEvent,
    RequestStartedEvent,
    RunFinishedEvent,
    SubagentEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolFinishedEvent,
    ToolProgressEvent,
    ToolQueuedEvent,
    ToolStartedEvent,
)
from ..core.usage import Usage

CardStatus = Literal[
    "queued", "waiting", "running", "done", "error", "denied", "cancelled", "interrupted", "invalid"
]
TERMINAL_STATUSES: frozenset[str] = frozenset({"done", "error", "denied", "cancelled", "interrupted", "invalid"})
RunStatus = Literal["running", "done", "stopped", "error", "ended"]

PREVIEW_CHARS = 2_000
"""Bound of a card's result preview and captured output (the model gets the full result)."""
LIVE_OUTPUT_CHARS = 4_000
MAX_PREVIEW_IMAGES = 4


def cut_middle(text: str, limit: int) -> str:
    """Keep head and tail of ``text``: the end of an output is often where the answer is."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n[… {cut:,} characters cut …]\n{text[-tail:]}"


@dataclass
class Decision:
    """Who allowed or denied a call, and when (``at``: the run's clock; ``wall_time``: epoch)."""

    behavior: Literal["allow", "deny"]
    decided_by: str
    at: float
    always: bool = False
    rule_added: str | None = None
    message: str = ""
    wall_time: float | None = None


@dataclass
class Ask:
    """An open or answered question to the person about one call."""

    reason: str
    suggested_rule: str | None
    at: float
    answered: bool = False


@dataclass
class CardState:
    tool_use_id: str
    name: str
    input: dict[str, Any]
    status: CardStatus = "queued"
    queued_at: float | None = None
    started_at: float | None = None
    finished_at: float | None = None
    duration: float | None = None
    batch: int | None = None
    progress_fraction: float | None = None
    progress_message: str = ""
    label: str = ""
    """How the call runs, as the tool reported it (the Bash sandbox: "sandbox: read-only, no network")."""
    live_output: str = ""
    captured_output: str = ""
    result_text: str = ""
    result_images: list[tuple[str, str]] = field(default_factory=list)
    """(media_type, base64 data) of image blocks in the result, at most `MAX_PREVIEW_IMAGES`."""
    is_error: bool = False
    ask: Ask | None = None
    decision: Decision | None = None

    @property
    def finished(self) -> bool:
        return self.status in TERMINAL_STATUSES


@dataclass
class TextBlock:
    key: str
    text: str = ""
    thinking: bool = False
    complete: bool = False
    """No more deltas will come (its message or the run ended)."""


@dataclass
class Notice:
    level: Literal["info", "warning", "error"]
    text: str


ItemKind = Literal["text", "card", "notice"]


@dataclass
class RunViewState:
    started_at: float
    items: list[tuple[ItemKind, str]] = field(default_factory=list)
    """The timeline in arrival order: (kind, key) into `texts`, `cards` or `notices`."""
    texts: dict[str, TextBlock] = field(default_factory=dict)
    cards: dict[str, CardState] = field(default_factory=dict)
    notices: dict[str, Notice] = field(default_factory=dict)
    model: str | None = None
    request_index: int = -1
    requests_finished: int = 0
    usage: Usage = field(default_factory=Usage)
    context_tokens: int = 0
    """The last request's prompt tokens (input + cache read + cache write), SPEC §14."""
    context_window: int | None = None
    last_request_id: str | None = None
    status: RunStatus = "running"
    finish_reason: str | None = None
    error: str | None = None
    finished_at: float | None = None
    stop_requested: bool = False
    wall_offset: float = 0.0
    """Epoch seconds minus the run's clock, to show event times (``at``) as times of day."""


@dataclass(frozen=True)
class Update:
    """What an event changed. ``dirty`` holds item keys (``text:…``, ``card:…``,
    ``notice:…``) and ``header`` / ``footer`` / ``items`` (the timeline grew).
    ``urgent``: show now, not at the next coalesced refresh."""

    dirty: frozenset[str] = frozenset()
    urgent: bool = False


NOTHING = Update()


def _update(*dirty: str, urgent: bool = False) -> Update:
    return Update(frozenset(dirty), urgent)


def card_key(tool_use_id: str) -> str:
    return f"card:{tool_use_id}"


def _ensure_card(state: RunViewState, tool_use_id: str, name: str, input: dict[str, Any], at: float | None) -> tuple[CardState, bool]:
    card = state.cards.get(tool_use_id)
    if card is not None:
        return card, False
    card = CardState(tool_use_id=tool_use_id, name=name, input=dict(input or {}), queued_at=at)
    state.cards[tool_use_id] = card
    state.items.append(("card", tool_use_id))
    return card, True


def _result_preview(result: dict[str, Any]) -> tuple[str, list[tuple[str, str]]]:
    content = result.get("content")
    if content is None:
        return "", []
    if isinstance(content, str):
        return cut_middle(content, PREVIEW_CHARS), []
    texts: list[str] = []
    images: list[tuple[str, str]] = []
    for block in content if isinstance(content, list) else [content]:
        if not isinstance(block, dict):
            texts.append(str(block))
        elif block.get("type") == "text":
            texts.append(str(block.get("text", "")))
        elif block.get("type") == "image":
            source = block.get("source") or {}
            if source.get("type") == "base64" and len(images) < MAX_PREVIEW_IMAGES:
                images.append((str(source.get("media_type", "image/png")), str(source.get("data", ""))))
            else:
                texts.append("[image]")
        else:
            texts.append(f"[{block.get('type', 'block')}]")
    return cut_middle("\n".join(texts), PREVIEW_CHARS), images


def _end_status(reason: str) -> RunStatus:
    if reason in ("end_turn", "stop_sequence"):
        return "done"
    if reason == "aborted":
        return "stopped"
    if reason in ("api_error", "error"):
        return "error"
    return "ended"


def apply_event(state: RunViewState, event: AgentEvent) -> Update:
    """Fold ``event`` into ``state``; return what changed."""
    card: CardState | None  # bound by the case arms below (found, or made by `_ensure_card`)
    match event.kind:
        case "request_started":
            assert isinstance(event, RequestStartedEvent)
            state.request_index = event.index
            state.model = event.model
            return _update("header")
        case "text_delta":
            assert isinstance(event, TextDeltaEvent)
            key = f"{state.request_index}:{event.block_index}"
            block = state.texts.get(key)
            new = block is None
            if block is None:
                block = state.texts[key] = TextBlock(key)
                state.items.append(("text", key))
            block.text = event.snapshot if event.snapshot else block.text + event.text
            return _update(f"text:{key}", *(["items"] if new else []), urgent=new)
        case "thinking_delta":
            assert isinstance(event, ThinkingDeltaEvent)
            key = f"{state.request_index}:{event.block_index}:thinking"
            block = state.texts.get(key)
            new = block is None
            if block is None:
                block = state.texts[key] = TextBlock(key, thinking=True)
                state.items.append(("text", key))
            block.text += event.thinking
            return _update(f"text:{key}", *(["items"] if new else []), urgent=new)
        case "tool_queued":
            assert isinstance(event, ToolQueuedEvent)
            card, new = _ensure_card(state, event.tool_use_id, event.name, event.input, event.at)
            if not new:  # an approval may have created it first; fill what it lacked
                card.queued_at = card.queued_at or event.at
                card.input = card.input or dict(event.input)
            return _update(card_key(card.tool_use_id), *(["items"] if new else []), urgent=True)
        case "tool_started":
            assert isinstance(event, ToolStartedEvent)
            card, new = _ensure_card(state, event.tool_use_id, event.name, {}, event.at)
            if not card.finished:
                card.status = "running"
            card.started_at = event.at
            card.batch = event.batch
            return _update(card_key(card.tool_use_id), *(["items"] if new else []), urgent=True)
        case "tool_progress":
            assert isinstance(event, ToolProgressEvent)
            card = state.cards.get(event.tool_use_id)
            if card is None:
                return NOTHING
            if event.fraction is not None:
                card.progress_fraction = min(1.0, max(0.0, float(event.fraction)))
            if event.message:
                card.progress_message = event.message
            if event.label:
                card.label = event.label
            if event.output:
                card.live_output = cut_middle(card.live_output + event.output, LIVE_OUTPUT_CHARS)
            return _update(card_key(card.tool_use_id))
        case "tool_finished":
            assert isinstance(event, ToolFinishedEvent)
            card, new = _ensure_card(state, event.tool_use_id, event.name, {}, event.at)
            card.status = event.status
            card.finished_at = event.at
            card.duration = event.duration if event.duration is not None else (
                event.at - card.started_at if card.started_at is not None else None
            )
            result = event.result if isinstance(event.result, dict) else {}
            card.is_error = bool(result.get("is_error"))
            card.result_text, card.result_images = _result_preview(result)
            card.captured_output = cut_middle(event.captured_output or "", PREVIEW_CHARS)
            if event.status == "done" and card.progress_fraction is not None:
                card.progress_fraction = 1.0
            if card.ask is not None:
                card.ask.answered = True
            return _update(card_key(card.tool_use_id), *(["items"] if new else []), urgent=True)
        case "permission_asked":
            assert isinstance(event, PermissionAskedEvent)
            card, new = _ensure_card(state, event.tool_use_id, event.name, event.input, event.at)
            if card.ask is None:
                card.ask = Ask(event.reason, event.suggested_rule, event.at)
                if card.status == "queued":
                    card.status = "waiting"
            else:  # the approver got here first: keep its state, fill gaps
                card.ask.reason = card.ask.reason or event.reason
                card.ask.suggested_rule = card.ask.suggested_rule or event.suggested_rule
            if not card.input and event.input:
                card.input = dict(event.input)
            return _update(card_key(card.tool_use_id), *(["items"] if new else []), urgent=True)
        case "permission_decided":
            assert isinstance(event, PermissionDecidedEvent)
            card, new = _ensure_card(state, event.tool_use_id, event.name, {}, event.at)
            previous = card.decision
            card.decision = Decision(
                behavior=event.behavior,
                decided_by=event.decided_by,
                at=previous.at if previous is not None else event.at,
                always=(previous.always if previous is not None else False) or event.rule_added is not None,
                rule_added=event.rule_added or (previous.rule_added if previous is not None else None),
                message=event.message or (previous.message if previous is not None else ""),
                wall_time=previous.wall_time if previous is not None else None,
            )
            if card.ask is not None:
                card.ask.answered = True
            if not card.finished:
                card.status = "denied" if event.behavior == "deny" else ("running" if card.started_at is not None else "queued")
            return _update(card_key(card.tool_use_id), *(["items"] if new else []), urgent=True)
        case "notice":
            assert isinstance(event, NoticeEvent)
            key = str(len(state.notices))
            state.notices[key] = Notice(event.level, event.text)
            state.items.append(("notice", key))
            return _update(f"notice:{key}", "items", urgent=True)
        case "request_finished":
            assert isinstance(event, RequestFinishedEvent)
            state.requests_finished += 1
            state.usage = state.usage + event.usage
            used = event.usage.input_tokens + event.usage.cache_read_input_tokens + event.usage.cache_creation_input_tokens
            if used and event.context_window:
                state.context_tokens, state.context_window = used, event.context_window
            state.last_request_id = event.request_id or state.last_request_id
            # the message is complete: show its text, rendered in full, now
            prefix = f"{state.request_index}:"
            finished_texts = [k for k, block in state.texts.items() if k.startswith(prefix) and not block.complete]
            for key in finished_texts:
                state.texts[key].complete = True
            return _update("footer", "header", *(f"text:{k}" for k in finished_texts), urgent=True)
        case "run_finished":
            assert isinstance(event, RunFinishedEvent)
            if event.usage.requests or event.usage.input_tokens or event.usage.output_tokens:
                state.usage = event.usage
            return finish_run(state, reason=event.reason, error=event.error, at=event.at)
        case "subagent":
            assert isinstance(event, SubagentEvent)
            return _apply_subagent_event(state, event)
        case _:
            assert_never(event)
    return NOTHING


_SUBAGENT_CARD_EVENTS = frozenset({"tool_queued", "tool_started", "tool_progress", "tool_finished",
                                   "permission_asked", "permission_decided"})


def _apply_subagent_event(state: RunViewState, event: SubagentEvent) -> Update:
    """A sub-agent's tool cards (and its asks) appear in the cell, named after the sub-agent;
    its text reaches the ``Agent`` card as progress, its request and finish events only count
    in the ``Agent`` call's result."""
    inner = event.event
    while isinstance(inner, SubagentEvent):  # a second level: keep the innermost label
        event, inner = inner, inner.event
    if inner.kind not in _SUBAGENT_CARD_EVENTS:
        return NOTHING
    if hasattr(inner, "name"):
        inner = dataclasses.replace(inner, name=f"{event.agent} › {inner.name}")
    return apply_event(state, inner)


def finish_run(state: RunViewState, *, reason: str, error: str | None = None, at: float) -> Update:
    """Set explicit end states: the run's, and every card's that did not end on its own."""
    if state.finished_at is not None and state.finish_reason is not None:
        return NOTHING
    state.finish_reason = reason
    state.status = _end_status(reason)
    state.error = error
    state.finished_at = at
    dirty = {"header", "footer"}
    leftover: CardStatus = "interrupted" if reason in ("aborted", "interrupted") else "cancelled"
    for card in state.cards.values():
        if not card.finished:
            card.status = leftover
            card.finished_at = at
            dirty.add(card_key(card.tool_use_id))
        if card.ask is not None and not card.ask.answered:
            card.ask.answered = True
            dirty.add(card_key(card.tool_use_id))
    for key, block in state.texts.items():
        if not block.complete:
            block.complete = True
            dirty.add(f"text:{key}")
    return Update(frozenset(dirty), True)


def record_user_decision(
    state: RunViewState,
    tool_use_id: str,
    *,
    behavior: Literal["allow", "deny"],
    decided_by: str,
    at: float,
    wall_time: float | None,
    always: bool = False,
    rule: str | None = None,
    message: str = "",
) -> Update:
    """The approval panel's answer, before the core's own `PermissionDecidedEvent` arrives
    (which then only adds what the core knows, e.g. the rule actually added)."""
    card = state.cards.get(tool_use_id)
    if card is None:
        return NOTHING
    card.decision = Decision(behavior, decided_by, at, always, rule if always else None, message, wall_time)
    if card.ask is not None:
        card.ask.answered = True
    if not card.finished:
        card.status = "denied" if behavior == "deny" else "queued"
    return _update(card_key(tool_use_id), urgent=True)
