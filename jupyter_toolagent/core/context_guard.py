"""Keeping a run inside the model's context window (SPEC §14): the query loop's side of it.

The loop asks `ContextGuard.messages_for_request` for what to send; the guard predicts the
request's size (`context_window.ContextMeter`) and, when it would pass ``compact_at`` of the
window, compacts first (`compaction`): clearing old tool results, then — if that is not enough
to get under ``compact_target`` — a summary made by the model. After an API answer "prompt is
too long" the guard learns the window from it, compacts and lets the loop retry once; a second
such answer ends the run with one clear line.

The summary request repeats the conversation's own system prompt and tools, and sends the
part to summarise as it was last sent, so it reads the prompt cache the conversation built.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ..errors import ContextOverflowError, ModelAPIError
from .accumulator import MessageAccumulator
from .compaction import (
    Compaction,
    api_view,
    clear_candidates,
    cut_for_keep,
    summary_request_messages,
)
from .context_window import (
    ContextState,
    PromptTooLong,
    estimate_tokens,
    format_window,
    parse_prompt_too_long,
)
from .events import AgentEvent, NoticeEvent
from .pairing import normalize_messages_for_api
from .request_body import build_request_body
from .usage import Usage

if TYPE_CHECKING:
    from .session import RunConfig, Session
    from .tool import ToolUseContext

Emit = Callable[[AgentEvent], None]

SUMMARY_MAX_TOKENS = 4096


def session_context(session: "Session") -> ContextState:
    state = getattr(session, "context", None)
    if state is None:
        state = ContextState()
        session.context = state
    return state


class ContextGuard:
    """One run's window keeper (see the module docstring)."""

    def __init__(self, session: "Session", config: "RunConfig", system: str, emit: Emit) -> None:
        self.session = session
        self.config = config
        self.system = system
        self.emit = emit
        self.state = session_context(session)
        self.retried = False
        self.overflow: PromptTooLong | None = None
        self._estimate = 0
        self._sizes: dict[int, tuple[Any, int]] = {}

    # --- the window ----------------------------------------------------------------------
    @property
    def window(self) -> int:
        table = getattr(self.config.model, "context_window", None)
        return self.state.meter.window(self.config.context_window, table if isinstance(table, int) else None)

    def estimate(self, tools: Sequence[dict[str, Any]], messages: Sequence[dict[str, Any]]) -> int:
        """Characters/4 of what is sent; per-message sizes are remembered while the message
        object is the same, so a long conversation is not re-serialised on every request."""
        sizes: dict[int, tuple[Any, int]] = {}
        total = estimate_tokens(self.system) + (estimate_tokens(list(tools)) if tools else 0)
        for message in messages:
            seen = self._sizes.get(id(message))
            size = seen[1] if seen is not None and seen[0] is message else estimate_tokens(message)
            sizes[id(message)] = (message, size)
            total += size
        self._sizes = sizes
        return total

    # --- before a request ----------------------------------------------------------------
    def view(self, ctx: "ToolUseContext", compaction: Compaction | None = None, *,
             upto: int | None = None) -> list[dict[str, Any]]:
        messages = self.session.messages if upto is None else self.session.messages[:upto]
        current = compaction if compaction is not None else self.state.current
        return normalize_messages_for_api(api_view(messages, current), aliases=ctx.tools.canonical_names())

    async def messages_for_request(self, ctx: "ToolUseContext", tools: Sequence[dict[str, Any]],
                                   prepare: Callable[[], list[dict[str, Any]]]) -> list[dict[str, Any]]:
        """What the next request sends: the normalized, checked transcript (``prepare()``) when
        nothing was compacted, else the compacted view; compacted first when it would pass
        ``compact_at``. With a compaction only the view is normalized and checked: the work per
        request follows what is sent, not the length of the whole conversation."""
        if self.state.current is None:
            messages = prepare()
        else:
            messages, violations = self.session.normalizer.normalize_and_check(
                api_view(self.session.messages, self.state.current), aliases=ctx.tools.canonical_names())
            if violations:
                # a transcript edited or broken under the compaction: repair it, then compact afresh
                messages = prepare()
                self.emit(NoticeEvent(level="warning", text="The compacted view failed the pairing check; "
                                      "the whole transcript is sent instead and compacted again if needed."))
                self.state.compactions.append(Compaction(reason="reset"))
        estimate = self.estimate(tools, messages)
        predicted = self.state.meter.predict(estimate)
        if (self.config.auto_compact and not self.config.dry_run
                and predicted > self.config.compact_at * self.window):
            if await self.compact(ctx, tools, reason="auto", predicted=predicted) is not None:
                messages = self.view(ctx)
                estimate = self.estimate(tools, messages)
        self._estimate = estimate
        return messages

    def sent(self, body: dict[str, Any]) -> None:
        self.state.last_body = body
        self.state.last_window = self.window

    def observe(self, usage: Usage) -> None:
        """A response arrived: its usage calibrates the next prediction."""
        self.state.meter.observe(self._estimate, usage)
        self.state.last_window = self.window

    # --- compaction ----------------------------------------------------------------------
    async def compact(self, ctx: "ToolUseContext", tools: Sequence[dict[str, Any]], *, reason: str,
                      keep: int | None = None, force: bool = False, predicted: int | None = None) -> Compaction | None:
        """Clear, then summarise if still over ``compact_target``; record and announce it.
        ``force`` (by hand, or after "prompt is too long") always summarises when it can."""
        messages = self.session.messages
        current = self.state.current or Compaction()
        keep = self.config.compact_keep if keep is None else keep
        window = self.window
        before = predicted if predicted is not None else self.state.meter.predict(self.estimate(tools, self.view(ctx)))
        cleared = clear_candidates(messages, keep, start=current.boundary, already=current.cleared)
        candidate = dataclasses.replace(current, cleared=cleared, reason=reason, kept_turns=keep, _memo={})
        after_clearing = self.state.meter.predict(self.estimate(tools, self.view(ctx, candidate)))
        newly = len(cleared) - len(current.cleared)
        if newly and not force and after_clearing <= self.config.compact_target * window:
            return self._commit(dataclasses.replace(candidate, tokens_before=before, tokens_after=after_clearing),
                                f"cleared {newly} old tool result{'s' if newly != 1 else ''}")
        cut = cut_for_keep(messages, keep, start=current.boundary)
        if cut is None:
            if newly:
                return self._commit(dataclasses.replace(candidate, tokens_before=before, tokens_after=after_clearing),
                                    f"cleared {newly} old tool result{'s' if newly != 1 else ''}")
            self.emit(NoticeEvent(level="warning", text=f"Nothing to compact: the conversation has no more "
                                  f"than the last {keep} turn{'s' if keep != 1 else ''} to keep."))
            return None
        try:
            summary = await self._summary_of(ctx, tools, current, candidate, cut)
        except ModelAPIError as exc:
            self.emit(NoticeEvent(level="error", text=f"Compaction could not get a summary: {exc.one_line()}"))
            if newly:
                return self._commit(dataclasses.replace(candidate, tokens_before=before, tokens_after=after_clearing),
                                    f"cleared {newly} old tool result{'s' if newly != 1 else ''}")
            return None
        done = Compaction(boundary=cut, summary=summary, cleared=cleared, kept_turns=keep, reason=reason)
        after = self.state.meter.predict(self.estimate(tools, self.view(ctx, done)))
        return self._commit(dataclasses.replace(done, tokens_before=before, tokens_after=after, _memo={}),
                            f"{cut} earlier messages summarised, the last {keep} turn{'s' if keep != 1 else ''} kept"
                            + (f", {newly} old tool results cleared" if newly else ""))

    def _commit(self, compaction: Compaction, what: str) -> Compaction:
        self.state.compactions.append(compaction)
        window = self.window
        self.emit(NoticeEvent(text=(
            f"Context compacted ({compaction.reason}): {what}. About {compaction.tokens_before:,} → "
            f"{compaction.tokens_after:,} tokens of {format_window(window)}. The full conversation stays in "
            "the session; %agent transcript shows the boundary.")))
        saver = getattr(self.session, "store_compaction", None)
        if saver is not None:
            saver(compaction)
        return compaction

    async def _summary_of(self, ctx: "ToolUseContext", tools: Sequence[dict[str, Any]], current: Compaction,
                          cleared: Compaction, cut: int) -> str:
        """The summary of ``messages[:cut]``, asked with the part as it was last sent (so the
        request reads the prompt cache and the model sees the results it summarises); when even
        that is too long for the window, with the old results cleared."""
        try:
            return await self._summarise(ctx, tools, self.view(ctx, current, upto=cut))
        except ModelAPIError as exc:
            if parse_prompt_too_long(exc.message) is None or cleared.cleared == current.cleared:
                raise
            return await self._summarise(ctx, tools, self.view(ctx, cleared, upto=cut))

    async def _summarise(self, ctx: "ToolUseContext", tools: Sequence[dict[str, Any]],
                         prefix: list[dict[str, Any]]) -> str:
        body = build_request_body(
            model=self.config.model.model_name, system=self.system, tools=list(tools),
            messages=summary_request_messages(prefix),
            max_tokens=min(self.config.max_tokens, SUMMARY_MAX_TOKENS),
            extra={"tool_choice": {"type": "none"}} if tools else None,
        )
        acc = MessageAccumulator()
        async for event in self.config.model.stream(body, abort=ctx.abort):
            acc.feed(event)
        message = acc.assistant_message()
        text = "\n".join(b.get("text", "") for b in message.get("content") or [] if b.get("type") == "text").strip()
        if not text:
            raise ModelAPIError("the summary request returned no text", error_type="compaction")
        return text

    # --- after a failed request ----------------------------------------------------------
    async def recover(self, failure: ModelAPIError, ctx: "ToolUseContext", tools: Sequence[dict[str, Any]]) -> bool:
        """True when the failure was "prompt is too long" and a compaction makes a retry worth it
        (once per run)."""
        too_long = parse_prompt_too_long(failure.message) if failure.status in (400, 413, None) else None
        if too_long is None:
            return False
        self.overflow = too_long
        if self.state.meter.learned_window != too_long.maximum:
            self.state.meter.learn(too_long)
            self.emit(NoticeEvent(level="warning", text=(
                f"The API says the prompt is too long ({too_long.tokens:,} tokens > {too_long.maximum:,} maximum): "
                f"this session's context window is {format_window(too_long.maximum)} from now on.")))
        if self.retried:
            return False
        self.retried = True
        return await self.compact(ctx, tools, reason="prompt too long", force=True) is not None

    def failure_text(self, failure: ModelAPIError) -> str:
        if self.overflow is None:
            return failure.one_line()
        return ContextOverflowError(
            f"the conversation is too long for the model's context window even after compaction "
            f"({self.overflow.tokens:,} tokens > {self.overflow.maximum:,} maximum)",
            status=failure.status, error_type=failure.error_type, request_id=failure.request_id,
            hint="Start a new conversation (%%agent --new) or compact keeping fewer turns (%agent compact --keep 1)",
        ).one_line()


async def compact_now(session: "Session", config: "RunConfig", *,
                      keep: int | None = None, emit: Emit | None = None) -> Compaction | None:
    """Compact ``session`` by hand (``%agent compact``): clear old results and summarise all but
    the last ``keep`` turns, whatever the window's fill."""
    from .abort import AbortSignal
    from .simple_policy import SimplePolicy
    from .system_prompt import build_system_prompt

    events: list[AgentEvent] = []
    sink = emit or events.append

    async def no_flush() -> None:
        return None

    ctx = session._build_context(config, AbortSignal(), sink, SimplePolicy(), None, no_flush)
    guard = ContextGuard(session, config, build_system_prompt(config.system), sink)
    tools = [t.to_api_schema() for t in ctx.tools]
    return await guard.compact(ctx, tools, reason="manual", keep=keep, force=True)
