"""What the cell shows about a run, folded from the run's events with pure code.

`apply_event` folds one `AgentEvent` into a `RunViewState` (in place, like the SDK's message
accumulator) and returns an `Update` naming what changed, so the widget layer touches only
those parts and knows whether the change must be shown at once (a new card, an ask, an end
state) or may wait for the next coalesced refresh (text deltas, progress). Nothing here
imports widgets or IPython: the live view, the static rendering and the tests all read the
same state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Literal, assert_never

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
from ..views._base import cut_middle

CardStatus = Literal[
    "queued", "waiting", "running", "done", "error", "denied", "cancelled", "interrupted", "invalid"
]
TERMINAL_STATUSES: frozenset[str] = frozenset({"done", "error", "denied", "cancelled", "interrupted", "invalid"})
RunStatus = Literal["running", "done", "stopped", "error", "ended"]

PREVIEW_CHARS = 2_000
"""Bound of a card's result preview and captured output (the model gets the full result)."""
LIVE_OUTPUT_CHARS = 4_000
MAX_PREVIEW_IMAGES = 4


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
    agent: str | None = None
    """The sub-agent that made this call (``explore: find the config``); None for the cell's own."""
    nested: NestedRun | None = None
    """For an ``Agent`` call: the sub-agent's own timeline, drawn inside this card (SPEC §12)."""
    key: str = ""
    """This card's key in `RunViewState.cards` (its tool_use id, unless that id was already taken
    by a call of another conversation)."""

    def __post_init__(self) -> None:
        self.key = self.key or self.tool_use_id

    @property
    def finished(self) -> bool:
        return self.status in TERMINAL_STATUSES

    @property
    def title(self) -> str:
        """The name a person reads: the tool, prefixed by the sub-agent that asks for it."""
        return f"{self.agent} › {self.name}" if self.agent else self.name

    @property
    def waiting_inside(self) -> bool:
        """A call somewhere inside this ``Agent`` call waits for the person's answer."""
        return self.nested is not None and self.nested.waiting > 0


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
class NestedRun:
    """A sub-agent's timeline inside the card of the ``Agent`` call that started it.

    Its items point into the run's shared `RunViewState.texts` / ``cards`` / ``notices`` (keys
    are unique across conversations), so every card at every depth is found by its key alone."""

    agent: str
    depth: int
    items: list[tuple[ItemKind, str]] = field(default_factory=list)
    request_index: int = -1
    requests: int = 0
    usage: Usage = field(default_factory=Usage)
    model: str | None = None
    finish_reason: str | None = None
    waiting: int = 0
    """How many calls inside (at any depth) wait for the person's answer."""


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


@dataclass
class _Scope:
    """Where an event lands: the cell's own timeline (``owner`` None) or the nested timeline of
    the ``Agent`` card ``owner``. ``chain``: the ``Agent`` cards from the outermost to ``owner``."""

    items: list[tuple[ItemKind, str]]
    owner: CardState | None = None
    chain: tuple[CardState, ...] = ()

    @property
    def agent(self) -> str | None:
        return self.owner.nested.agent if self.owner is not None and self.owner.nested is not None else None

    def text_key(self, request_index: int, rest: str) -> str:
        local = f"{request_index}:{rest}"
        return local if self.owner is None else f"{self.owner.key}/{local}"

    def items_dirty(self) -> str:
        return "items" if self.owner is None else f"nested:{self.owner.key}"


def _top(state: RunViewState) -> _Scope:
    return _Scope(state.items)


def _request_index(state: RunViewState, scope: _Scope) -> int:
    if scope.owner is not None and scope.owner.nested is not None:
        return scope.owner.nested.request_index
    return state.request_index


def _find_card(state: RunViewState, tool_use_id: str, scope: _Scope) -> CardState | None:
    """The card of ``tool_use_id`` made by ``scope``'s conversation (ids from different
    transcripts may repeat when a script sets them)."""
    card = state.cards.get(tool_use_id)
    if card is not None and card.agent == scope.agent:
        return card
    if scope.owner is not None:
        return state.cards.get(f"{scope.owner.key}/{tool_use_id}")
    return None


def _ensure_card(state: RunViewState, tool_use_id: str, name: str, input: dict[str, Any], at: float | None,
                 scope: _Scope | None = None) -> tuple[CardState, bool]:
    scope = scope or _top(state)
    card = _find_card(state, tool_use_id, scope)
    if card is not None:
        return card, False
    key = tool_use_id if tool_use_id not in state.cards or scope.owner is None else f"{scope.owner.key}/{tool_use_id}"
    card = CardState(tool_use_id=tool_use_id, name=name, input=dict(input or {}), queued_at=at,
                     agent=scope.agent, key=key)
    state.cards[key] = card
    scope.items.append(("card", key))
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
    return _fold(state, event, _top(state))


def _fold(state: RunViewState, event: AgentEvent, scope: _Scope) -> Update:
    """Fold ``event`` of the conversation ``scope`` belongs to (the cell's or a sub-agent's)."""
    nested = scope.owner.nested if scope.owner is not None else None
    match event.kind:
        case "request_started":
            assert isinstance(event, RequestStartedEvent)
            if nested is not None:
                nested.request_index, nested.model = event.index, event.model
                return NOTHING
            state.request_index = event.index
            state.model = event.model
            return _update("header")
        case "text_delta" | "thinking_delta":
            assert isinstance(event, (TextDeltaEvent, ThinkingDeltaEvent))
            thinking = isinstance(event, ThinkingDeltaEvent)
            key = scope.text_key(_request_index(state, scope), f"{event.block_index}{':thinking' if thinking else ''}")
            block = state.texts.get(key)
            new = block is None
            if block is None:
                block = state.texts[key] = TextBlock(key, thinking=thinking)
                scope.items.append(("text", key))
            if isinstance(event, ThinkingDeltaEvent):
                block.text += event.thinking
            else:
                block.text = event.snapshot if event.snapshot else block.text + event.text
            return _update(f"text:{key}", *([scope.items_dirty()] if new else []), urgent=new)
        case "tool_queued":
            assert isinstance(event, ToolQueuedEvent)
            card, new = _ensure_card(state, event.tool_use_id, event.name, event.input, event.at, scope)
            if not new:  # an approval may have created it first; fill what it lacked
                card.queued_at = card.queued_at or event.at
                card.input = card.input or dict(event.input)
            return _card_update(state, card, new, scope)
        case "tool_started":
            assert isinstance(event, ToolStartedEvent)
            card, new = _ensure_card(state, event.tool_use_id, event.name, {}, event.at, scope)
            if not card.finished:
                card.status = "running"
            card.started_at = event.at
            card.batch = event.batch
            return _card_update(state, card, new, scope)
        case "tool_progress":
            assert isinstance(event, ToolProgressEvent)
            found = _find_card(state, event.tool_use_id, scope)
            if found is None:
                return NOTHING
            if event.fraction is not None:
                found.progress_fraction = min(1.0, max(0.0, float(event.fraction)))
            if event.message:
                found.progress_message = event.message
            if event.label:
                found.label = event.label
            if event.output:
                found.live_output = cut_middle(found.live_output + event.output, LIVE_OUTPUT_CHARS)
            return _update(card_key(found.key))
        case "tool_finished":
            assert isinstance(event, ToolFinishedEvent)
            card, new = _ensure_card(state, event.tool_use_id, event.name, {}, event.at, scope)
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
            return _card_update(state, card, new, scope)
        case "permission_asked":
            assert isinstance(event, PermissionAskedEvent)
            card, new = _ensure_card(state, event.tool_use_id, event.name, event.input, event.at, scope)
            if card.ask is None:
                card.ask = Ask(event.reason, event.suggested_rule, event.at)
                if card.status == "queued":
                    card.status = "waiting"
            else:  # the approver got here first: keep its state, fill gaps
                card.ask.reason = card.ask.reason or event.reason
                card.ask.suggested_rule = card.ask.suggested_rule or event.suggested_rule
            if not card.input and event.input:
                card.input = dict(event.input)
            return _card_update(state, card, new, scope)
        case "permission_decided":
            assert isinstance(event, PermissionDecidedEvent)
            card, new = _ensure_card(state, event.tool_use_id, event.name, {}, event.at, scope)
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
            return _card_update(state, card, new, scope)
        case "notice":
            assert isinstance(event, NoticeEvent)
            key = str(len(state.notices))
            state.notices[key] = Notice(event.level, event.text)
            scope.items.append(("notice", key))
            return _update(f"notice:{key}", scope.items_dirty(), urgent=True)
        case "request_finished":
            assert isinstance(event, RequestFinishedEvent)
            prefix = scope.text_key(_request_index(state, scope), "")
            finished_texts = [k for k, block in state.texts.items() if k.startswith(prefix) and not block.complete]
            for key in finished_texts:
                state.texts[key].complete = True
            texts_dirty = [f"text:{k}" for k in finished_texts]
            state.usage = state.usage + event.usage  # a sub-agent's usage rolls up into the cell's footer
            if nested is not None:
                assert scope.owner is not None
                nested.requests += 1
                nested.usage = nested.usage + event.usage
                return _update("footer", *texts_dirty, *(card_key(c.key) for c in scope.chain))
            state.requests_finished += 1
            used = event.usage.input_tokens + event.usage.cache_read_input_tokens + event.usage.cache_creation_input_tokens
            if used and event.context_window:
                state.context_tokens, state.context_window = used, event.context_window
            state.last_request_id = event.request_id or state.last_request_id
            # the message is complete: show its text, rendered in full, now
            return _update("footer", "header", *texts_dirty, urgent=True)
        case "run_finished":
            assert isinstance(event, RunFinishedEvent)
            if nested is not None:  # the sub-agent's end is not the cell's
                assert scope.owner is not None
                nested.finish_reason = event.reason
                return _update(card_key(scope.owner.key), urgent=True)
            if event.usage.requests or event.usage.input_tokens or event.usage.output_tokens:
                state.usage = event.usage
            return finish_run(state, reason=event.reason, error=event.error, at=event.at)
        case "subagent":
            assert isinstance(event, SubagentEvent)
            return _apply_subagent_event(state, event, scope)
        case _:
            assert_never(event)
    return NOTHING


def _card_update(state: RunViewState, card: CardState, new: bool, scope: _Scope) -> Update:
    """A card changed: redraw it, and the ``Agent`` cards around it when the number of calls
    waiting inside them changed (their header says so, so a folded card still shows it)."""
    return _update(card_key(card.key), *([scope.items_dirty()] if new else []), *_recount_waiting(state, scope.chain),
                   urgent=True)


def _open_asks(state: RunViewState, nested: NestedRun) -> int:
    count = 0
    for kind, key in nested.items:
        if kind != "card":
            continue
        card = state.cards[key]
        if card.ask is not None and not card.ask.answered and not card.finished:
            count += 1
        if card.nested is not None:
            count += _open_asks(state, card.nested)
    return count


def _recount_waiting(state: RunViewState, owners: Iterable[CardState]) -> list[str]:
    """Recount the open asks inside each of ``owners``; the keys of the cards whose count changed."""
    dirty = []
    for owner in owners:
        if owner.nested is None:
            continue
        count = _open_asks(state, owner.nested)
        if count != owner.nested.waiting:
            owner.nested.waiting = count
            dirty.append(card_key(owner.key))
    return dirty


def _agent_cards(state: RunViewState) -> list[CardState]:
    return [card for card in state.cards.values() if card.nested is not None]


def find_card(state: RunViewState, tool_use_id: str, agent: str | None = None) -> CardState | None:
    """The card of call ``tool_use_id`` made by sub-agent ``agent`` (None: the cell's own run),
    at whatever depth it is drawn."""
    card = state.cards.get(tool_use_id)
    if card is not None and card.agent == agent:
        return card
    matches = [c for c in state.cards.values() if c.tool_use_id == tool_use_id and c.agent == agent]
    return matches[-1] if matches else None


def _apply_subagent_event(state: RunViewState, event: SubagentEvent, scope: _Scope) -> Update:
    """A sub-agent's event lands inside the card of the ``Agent`` call that started it: its
    text and tool cards (with their asks) in that card's nested timeline, its requests in the
    card's counts, its end in the card's state. A second level nests once more."""
    owner, new = _ensure_card(state, event.parent_tool_use_id, "Agent", {}, event.at, scope)
    dirty: list[str] = [scope.items_dirty()] if new else []
    if owner.nested is None:
        owner.nested = NestedRun(agent=event.agent, depth=event.depth)
        dirty.append(card_key(owner.key))
    inner = _Scope(owner.nested.items, owner, (*scope.chain, owner))
    update = _fold(state, event.event, inner)
    return Update(update.dirty | frozenset(dirty), update.urgent or bool(dirty))


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
            dirty.add(card_key(card.key))
        if card.ask is not None and not card.ask.answered:
            card.ask.answered = True
            dirty.add(card_key(card.key))
    for key, block in state.texts.items():
        if not block.complete:
            block.complete = True
            dirty.add(f"text:{key}")
    dirty.update(_recount_waiting(state, _agent_cards(state)))
    return Update(frozenset(dirty), True)


def record_ask(state: RunViewState, card: CardState, *, reason: str, suggested_rule: str | None, at: float) -> Update:
    """The approver asks about ``card`` before (or without) the core's own ask event."""
    if card.ask is None:
        card.ask = Ask(reason, suggested_rule, at)
        if card.status == "queued":
            card.status = "waiting"
    return _update(card_key(card.key), *_recount_waiting(state, _agent_cards(state)), urgent=True)


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
    agent: str | None = None,
) -> Update:
    """The approval panel's answer, before the core's own `PermissionDecidedEvent` arrives
    (which then only adds what the core knows, e.g. the rule actually added). ``agent``: the
    sub-agent whose call it is (None: the cell's own)."""
    card = find_card(state, tool_use_id, agent)
    if card is None:
        return NOTHING
    card.decision = Decision(behavior, decided_by, at, always, rule if always else None, message, wall_time)
    if card.ask is not None:
        card.ask.answered = True
    if not card.finished:
        card.status = "denied" if behavior == "deny" else "queued"
    return _update(card_key(card.key), *_recount_waiting(state, _agent_cards(state)), urgent=True)
