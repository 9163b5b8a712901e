"""The query loop: model request → tool calls → results → next request (SPEC §3, §4, §7.1).

`drive_run` performs one run and reports everything through ``emit``; `Session.run` turns that
into an async generator. The loop's promises:

* a follow-up request is made because tool_use blocks arrived — not because of ``stop_reason``
  alone — and never more than ``max_turns`` requests;
* every tool_use in the transcript gets exactly one tool_result, whatever happened (success,
  invalid input, denial, abort, API failure, cancellation of the consuming task);
* a request is never sent with a transcript that fails `check_pairing` (it is repaired first,
  and the repair is shown);
* a broken stream keeps its complete blocks and drops incomplete ones, except a tool_use cut
  inside its input, which is kept with empty input and an error result; complete tool_use
  blocks that never started get "not run" — the model learns exactly which effects happened —
  and then the run continues by itself, a bounded number of times (`continuation`);
* a refused exchange is shown with the API's explanation and never sent again (`refusal`).
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable

from ..errors import ModelAPIError
from .abort import AbortSignal
from .context_guard import ContextGuard
from .accumulator import BlockDone, MessageAccumulator, TextDelta, ThinkingDelta
from .continuation import StreamContinuations, continuation_note, wait_unless_aborted
from .deferred_tools import with_listing
from .events import (
    AgentEvent,
    NoticeEvent,
    RequestFinishedEvent,
    RequestStartedEvent,
    RunFinishedEvent,
    RunFinishReason,
    TextDeltaEvent,
    ThinkingDeltaEvent,
)
from .pairing import normalize_messages_for_api, repair_pairing
from .refusal import refusal_notice, withhold_refused_exchange
from .request_body import build_request_body
from .results import enforce_message_budget
from .run_tool_use import ToolCallOutcome
from .scheduler import ToolScheduler
from .scheduling import AfterStreamScheduler
from .streaming_executor import StreamingToolExecutor
from .system_prompt import build_system_prompt
from .tool import ToolUseContext
from .usage import Usage

if TYPE_CHECKING:
    from .session import RunConfig, Session

Emit = Callable[[AgentEvent], None]
INTERRUPTION_NOTE = "[The user interrupted this run ({reason}). Tool calls that did not finish were stopped.]"


async def _events_until_abort(stream: AsyncIterator[dict[str, Any]], abort: AbortSignal) -> AsyncIterator[dict[str, Any]]:
    """Yield stream events, stopping promptly when the run is aborted."""
    abort_wait = asyncio.ensure_future(abort.wait())
    try:
        while not abort.aborted:
            nxt = asyncio.ensure_future(stream.__anext__())
            try:
                done, _ = await asyncio.wait({nxt, abort_wait}, return_when=asyncio.FIRST_COMPLETED)
            except asyncio.CancelledError:
                nxt.cancel()
                raise
            if nxt not in done:
                nxt.cancel()
                await asyncio.gather(nxt, return_exceptions=True)
                return
            try:
                yield nxt.result()
            except StopAsyncIteration:
                return
    finally:
        abort_wait.cancel()
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            try:
                await aclose()
            except Exception:
                pass


class _Turn:
    """One model request and the tool calls of its response.

    Each finished tool_use block goes to the turn's scheduler — while streaming or after the
    stream, chosen once here — and the turn never asks which one it has."""

    def __init__(self, ctx: ToolUseContext, *, streaming: bool) -> None:
        self.ctx = ctx
        self.acc = MessageAccumulator()
        self.scheduler: ToolScheduler = StreamingToolExecutor(ctx) if streaming else AfterStreamScheduler(ctx)
        self.failure: ModelAPIError | None = None

    async def stream(self, model: Any, body: dict[str, Any], emit: Emit) -> None:
        async for event in _events_until_abort(model.stream(body, abort=self.ctx.abort), self.ctx.abort):
            for item in self.acc.feed(event):
                if isinstance(item, TextDelta):
                    emit(TextDeltaEvent(text=item.text, snapshot=item.snapshot, block_index=item.index))
                elif isinstance(item, ThinkingDelta):
                    emit(ThinkingDeltaEvent(thinking=item.thinking, block_index=item.index))
                elif isinstance(item, BlockDone) and item.block.get("type") == "tool_use":
                    self._schedule(item)

    def _schedule(self, done: BlockDone) -> None:
        if done.truncated:
            self.scheduler.add_truncated(done.block, done.truncated)
        else:
            self.scheduler.add(done.block)

    def add_cut_blocks(self) -> None:
        """tool_use blocks whose ``content_block_stop`` never came: kept, with an error result
        saying their input was cut off (never run), whether or not the stream then ended normally."""
        for done in self.acc.cut_tool_uses():
            assert done.truncated is not None
            self._schedule(done)

    async def run_tools(self) -> list[ToolCallOutcome]:
        if self.failure is not None:
            self.scheduler.stream_failed(self.failure.error_type)
        return await self.scheduler.finish()

    async def settle_after_interrupt(self) -> list[ToolCallOutcome]:
        return await self.scheduler.settle_after_interrupt()

    def abandon(self) -> list[ToolCallOutcome]:
        return self.scheduler.abandon()

    def assistant_message(self) -> dict[str, Any]:
        return self.acc.assistant_message()


def _results_message(outcomes: list[ToolCallOutcome], ctx: ToolUseContext, note: str | None) -> dict[str, Any] | None:
    content: list[dict[str, Any]] = enforce_message_budget(
        [o.result for o in outcomes], ctx.options.max_message_chars, ctx.outputs
    )
    if note:
        content.append({"type": "text", "text": note})
    return {"role": "user", "content": content} if content else None


def _commit(session: "Session", turn: _Turn, outcomes: list[ToolCallOutcome], note: str | None) -> dict[str, Any]:
    """Append the assistant message and its results to the transcript in one synchronous step."""
    message = turn.assistant_message()
    if message["content"]:
        session.messages.append(message)
        kept_ids = {b["id"] for b in message["content"] if b.get("type") == "tool_use"}
        outcomes = [o for o in outcomes if o.tool_use_id in kept_ids]
    else:
        outcomes = []
    results = _results_message(outcomes, turn.ctx, note)
    if results is not None:
        session.messages.append(results)
    return message


def prepare_messages(session: "Session", ctx: ToolUseContext, emit: Emit, *, persist: bool = True) -> list[dict[str, Any]]:
    """The transcript as the API will see it; repaired (and the repair shown) if invalid.

    ``persist`` writes the repair back to the session (not for a dry run, which changes nothing).
    """
    aliases = ctx.tools.canonical_names()
    api_messages, violations = session.normalizer.normalize_and_check(session.messages, aliases=aliases)
    if violations:
        report = repair_pairing(api_messages)
        emit(NoticeEvent(level="warning", text="The transcript was invalid and was repaired before sending:\n"
                         + report.summary()))
        if persist:
            session.messages[:] = report.messages
        api_messages = normalize_messages_for_api(report.messages, aliases=aliases)
    return api_messages


async def _run_stop_hooks(ctx: ToolUseContext, reason: str, emit: Emit) -> None:
    """Stop hooks see how the run ended; their messages are for the person only."""
    assert ctx.hooks is not None
    try:
        outcome = await ctx.hooks.stop(ctx, reason)
    except Exception as exc:  # a broken Stop hook must not hide how the run ended
        emit(NoticeEvent(level="warning", text=f"A Stop hook failed: {type(exc).__name__}: {exc}"))
        return
    for text in outcome.system_messages:
        emit(NoticeEvent(text=text))


def _leave_valid(session: "Session", emit: Emit) -> None:
    """The transcript a run leaves behind passes `check_pairing`, so the next cell (or an export)
    never starts from a broken one — e.g. after a response that repeated a tool_use id."""
    normalized, violations = session.normalizer.normalize_and_check(session.messages)
    if violations:
        report = repair_pairing(normalized)
        session.messages[:] = report.messages
        emit(NoticeEvent(level="warning", text="The transcript was repaired at the end of the run:\n"
                         + report.summary()))


async def drive_run(
    session: "Session", prompt: str, config: "RunConfig", abort: AbortSignal, emit: Emit,
    build_context: Callable[[], ToolUseContext],
) -> None:
    """Run one prompt to completion. Always ends by emitting one `RunFinishedEvent`.

    The ``build_context`` callable is called before every request: the tools, rules and
    namespace the next request sees are the ones that exist at that moment.
    """
    record = session.runs[-1]
    total = Usage()
    reason: RunFinishReason = "max_turns"
    error: str | None = None
    model = config.model
    system = build_system_prompt(config.system)
    run_start = len(session.messages)
    continuations = StreamContinuations(limit=config.max_continuations, base_delay=config.continuation_delay)
    if prompt:
        content = [{"type": "text", "text": prompt}]
        if config.prompt_note:
            content.append({"type": "text", "text": config.prompt_note})
        session.messages.append({"role": "user", "content": content})
    turn: _Turn | None = None
    ctx: ToolUseContext | None = None
    guard = ContextGuard(session, config, system, emit)
    try:
        for index in range(config.max_turns):
            ctx = build_context()
            tools = [t.to_api_schema() for t in ctx.tools]
            api_messages = await guard.messages_for_request(
                ctx, tools, lambda: prepare_messages(session, ctx, emit, persist=not config.dry_run))
            api_messages = with_listing(api_messages, ctx.deferred)  # deferred tools, by name (§13)
            body = build_request_body(
                model=model.model_name, system=system, tools=tools,
                messages=api_messages, max_tokens=config.max_tokens, thinking=config.thinking,
            )
            guard.sent(body)
            record.requests.append(body)
            if config.dry_run:
                emit(NoticeEvent(text=json.dumps(body, indent=2, ensure_ascii=False)))
                if prompt:
                    session.messages.pop()
                reason = "dry_run"
                return
            emit(RequestStartedEvent(index=index, model=model.model_name))
            turn = _Turn(ctx, streaming=config.streaming_tools)
            try:
                await turn.stream(model, body, emit)
            except ModelAPIError as exc:
                turn.failure = exc
            except Exception as exc:  # a broken stream (connection cut, protocol error)
                turn.failure = ModelAPIError(f"the response stream broke ({type(exc).__name__}: {exc})")
            turn.add_cut_blocks()
            outcomes = await turn.run_tools()
            aborted = abort.aborted
            retry_in = None if aborted else continuations.take(turn.failure, turn.acc.message is not None)
            note = INTERRUPTION_NOTE.format(reason=abort.reason) if aborted else None
            if retry_in is not None and turn.failure is not None and turn.assistant_message()["content"]:
                note = continuation_note(turn.failure)
            message = _commit(session, turn, outcomes, note)
            acc, failure = turn.acc, turn.failure
            turn = None
            usage = Usage.from_api(acc.usage) if acc.message is not None else Usage(requests=1)
            guard.observe(usage)
            total = total + usage
            record.usage = total
            record.responses.append({**message, "stop_reason": acc.stop_reason})
            record.request_ids.append(acc.request_id or (failure.request_id if failure else None))
            emit(RequestFinishedEvent(index=index, stop_reason=acc.stop_reason, usage=usage,
                                      request_id=record.request_ids[-1], message=message,
                                      context_window=guard.window))
            if aborted:
                reason = "aborted"
                return
            if failure is not None:
                if retry_in is not None:
                    emit(NoticeEvent(level="warning", text=continuations.notice(failure, retry_in)))
                    if await wait_unless_aborted(retry_in, abort):
                        continue
                    reason = "aborted"
                    return
                if not message["content"] and await guard.recover(failure, ctx, tools):
                    continue  # "prompt is too long": compacted, retried once
                reason, error = "api_error", guard.failure_text(failure)
                if continuations.is_broken_stream(failure, acc.message is not None):
                    emit(NoticeEvent(level="warning", text=continuations.exhausted_notice()))
                emit(NoticeEvent(level="error", text=error))
                return
            if any(o.stop_run for o in outcomes):
                why = next((o.stop_reason for o in outcomes if o.stop_run and o.stop_reason), "")
                emit(NoticeEvent(level="warning", text=f"A hook stopped the run{': ' + why if why else ''}."))
                reason = "hook_stopped"
                return
            stop = acc.stop_reason
            if stop == "refusal":
                withhold_refused_exchange(session.messages, run_start)
                emit(NoticeEvent(level="warning", text=refusal_notice(acc.stop_details)))
                reason = "refusal"
                return
            if outcomes:
                continue  # tool_use blocks arrived: the model gets their results
            if stop == "pause_turn":
                continue  # the API paused a long turn; sending it back lets the model go on
            if stop == "max_tokens":
                emit(NoticeEvent(level="warning", text=f"The response hit max_tokens ({config.max_tokens}) and was cut."))
                reason = "max_tokens"
                return
            if stop is None:  # a stop reason with no message_stop after it is a complete message
                emit(NoticeEvent(level="warning", text="The response ended without a stop reason; it may be truncated."))
                reason = "truncated"
                return
            reason = "stop_sequence" if stop == "stop_sequence" else "end_turn"
            return
        emit(NoticeEvent(level="warning", text=f"Stopped after {config.max_turns} model requests (--max-turns)."))
    except asyncio.CancelledError:
        # The consuming task is being cancelled (kernel interrupt): write the one result of every
        # tool_use synchronously, so the transcript is valid for the next cell, then let it go.
        abort.abort("interrupted")
        if turn is not None:
            outcomes = await turn.settle_after_interrupt()
            _commit(session, turn, outcomes, INTERRUPTION_NOTE.format(reason="kernel interrupt"))
        reason = "aborted"
        raise
    except Exception as exc:  # a bug: the run ends visibly, the transcript stays valid
        if turn is not None:
            _commit(session, turn, turn.abandon(), None)
        reason, error = "error", f"internal error: {type(exc).__name__}: {exc}"
        emit(NoticeEvent(level="error", text=error))
    finally:
        if reason != "dry_run":
            _leave_valid(session, emit)
        if ctx is not None and ctx.hooks is not None and reason not in ("aborted", "dry_run"):
            await _run_stop_hooks(ctx, reason, emit)
        if error:  # an exception's text may quote anything; the record is exported and saved
            error = session.scrubber.scrub(error)
        total = total + record.subrun_usage()  # sub-agents' requests count toward this run
        record.finish_reason, record.error, record.usage = reason, error, total
        record.finished_at = time.time()
        emit(RunFinishedEvent(reason=reason, usage=total, error=error))
