"""One tool call, stage by stage (SPEC §3).

Every stage that can refuse ends in an `is_error` tool_result whose text tells the model what
went wrong and what it can do. Only an *allow* decision reaches `Tool.call`. Cancellation
(`asyncio.CancelledError`) is not turned into a result here: the scheduler that cancelled the
task knows whether the call had started and writes the one result for it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from .capture import capture_output
from .events import (
    NoticeEvent,
    PermissionDecidedEvent,
    ToolProgressEvent,
    ToolStartedEvent,
    ToolStatus,
)
from .hook_types import PreToolUseOutcome
from .permission_types import PermissionDecision
from . import result_texts
from .results import error_result, package_result, truncate_middle
from .tool import ContextModifier, Progress, Tool, ToolResult, ToolUseContext
from .tool_call import ToolCall, ToolUseRequest, observable_input
from .validation import describe_validation_error, format_schema_problems
from ..errors import InputSchemaError

MAX_ERROR_CHARS = 10_000


@dataclass
class ToolCallOutcome:
    """The decided result of one tool_use, plus what the scheduler needs to know."""

    tool_use_id: str
    name: str
    result: dict[str, Any]
    status: ToolStatus
    started: bool = False
    context_modifier: ContextModifier | None = None
    duration: float | None = None
    captured_output: str = ""
    stop_run: bool = False
    stop_reason: str = ""
    additional_context: list[str] = field(default_factory=list)

    @property
    def is_error(self) -> bool:
        return bool(self.result.get("is_error"))


def _fail(request: ToolUseRequest, name: str, text: str, status: ToolStatus = "error", **kw: Any) -> ToolCallOutcome:
    return ToolCallOutcome(request.id, name, error_result(request.id, text), status, **kw)


async def run_tool_use(block: "dict[str, Any] | ToolUseRequest", ctx: ToolUseContext, *,
                       batch: int | None = None) -> ToolCallOutcome:
    """Run one ``tool_use`` block through lookup, checks, hooks, permission, call, packaging,
    then secret scrubbing (stage 10): whatever a stage wrote, the outcome that leaves here —
    the one thing the transcript, the events and the next request are made from — holds no
    run of a protected value. A call's own output is scrubbed once, in `_call`, before it is
    packaged (packaging keeps an oversized output whole in the session, and PostToolUse hooks
    see the packaged result); the text of an early exit and hook context are scrubbed here.

    ``block`` is the raw block or the `ToolUseRequest` a scheduler already read (then its input
    is not parsed again)."""
    request = block.for_context(ctx) if isinstance(block, ToolUseRequest) else ToolUseRequest(block, ctx)
    outcome = await _run_stages(request, ctx, batch)
    if not outcome.started:  # an early exit's text quotes hooks, rules, the input
        outcome.result = ctx.scrubber.scrub_result(outcome.result)
    if outcome.additional_context:
        outcome.additional_context = [ctx.scrubber.scrub(c) for c in outcome.additional_context]
        outcome.result = _with_context(outcome.result, outcome.additional_context)
    return outcome


async def _run_stages(request: ToolUseRequest, ctx: ToolUseContext, batch: int | None) -> ToolCallOutcome:
    requested = request.name

    # 1. Lookup (aliases accepted).
    tool = request.tool
    if tool is None:
        if ctx.deferred and requested in ctx.deferred.unloaded:
            return _fail(request, requested, ctx.deferred.hint(requested), "invalid")
        return _fail(request, requested, result_texts.unknown_tool(requested), "invalid")
    name = tool.name

    # 2. Abort check.
    if ctx.abort.aborted:
        return _fail(request, name, result_texts.cancelled_before_run(name, ctx.abort.reason), "cancelled")

    # 3. Schema validation (done once, when the request was read).
    if request.parsed is None:
        return _fail(request, name, _schema_problem(tool, request.error), "invalid")

    # 4. Semantic validation.
    problem = await _semantic_problem(tool, request.parsed, ctx)
    if problem:
        return _fail(request, name, result_texts.semantic_problem(problem), "invalid")

    # 5. The typed call: hooks and permissions see its observable input (derived fields).
    call = ToolCall(tool, request.id, request.parsed, observable_input(tool, request.parsed, ctx))

    # 6. PreToolUse hooks.
    hook = _NO_HOOK
    if ctx.hooks is not None:
        hook = await ctx.hooks.pre_tool_use(call, ctx)
        for msg in hook.system_messages:
            ctx.emit(NoticeEvent(text=msg))
        if hook.error:
            return _fail(request, name, result_texts.hook_error(name, hook.error), stop_run=hook.stop,
                         stop_reason=hook.stop_reason)
        if hook.decision == "deny":
            # Final, and decided here only: no permission policy is asked, so none can turn
            # it into an allow; the session's decision log still records it.
            denial = PermissionDecision.deny(hook.reason or result_texts.hook_denied(name), "hook")
            _decided(ctx, call, denial)
            if ctx.permissions is not None:
                ctx.permissions.record_decision(call, denial)
            return _fail(request, name, denial.message, "denied", stop_run=hook.stop, stop_reason=hook.stop_reason)
        if hook.updated_input is not None:
            replaced = await _replace_input(call, hook.updated_input, ctx, "A hook supplied")
            if isinstance(replaced, str):
                return _fail(request, name, replaced, "invalid")
            call = replaced
    hook_decision = (
        PermissionDecision(hook.decision, message=hook.reason, decided_by="hook") if hook.decision else None
    )

    # 7. Permission decision: only allow reaches the call.
    decision = await ctx.can_use_tool(call, ctx, hook_decision=hook_decision)
    _decided(ctx, call, decision)
    if decision.behavior != "allow":
        text = decision.message or result_texts.permission_denied(name)
        return _fail(request, name, text, "denied", stop_run=hook.stop, stop_reason=hook.stop_reason)
    parsed = call.input
    if decision.updated_input is not None:
        approved = await _replace_input(call, decision.updated_input, ctx, "The approval supplied")
        if isinstance(approved, str):
            return _fail(request, name, approved, "invalid")
        parsed = approved.input

    # 8. Call, with progress and captured prints.
    outcome = await _call(tool, parsed, request.id, ctx.replace(decision=decision), batch)
    outcome.stop_run = outcome.stop_run or hook.stop
    outcome.stop_reason = outcome.stop_reason or hook.stop_reason
    if hook.additional_context:
        outcome.additional_context.extend(hook.additional_context)

    # 9. Post hooks (the result is already packaged; they see the call hooks and rules saw).
    if ctx.hooks is not None:
        post = await ctx.hooks.post_tool_use(call, outcome.result, ctx, failed=outcome.is_error)
        for msg in post.system_messages:
            ctx.emit(NoticeEvent(text=msg))
        outcome.additional_context.extend(post.additional_context)
        if post.stop:
            outcome.stop_run, outcome.stop_reason = True, post.stop_reason or outcome.stop_reason
    return outcome


_NO_HOOK = PreToolUseOutcome()
"""No hooks ran (never mutated: a run with hooks gets its own outcome from the runner)."""


def _schema_problem(tool: Tool, error: ValidationError | InputSchemaError | None) -> str:
    if isinstance(error, ValidationError):
        return describe_validation_error(tool.name, error, tool.input_model)
    if isinstance(error, InputSchemaError):
        return format_schema_problems(tool.name, error.problems, error.schema)
    return f"the input of {tool.name} could not be read"


async def _semantic_problem(tool: Tool, parsed: BaseModel, ctx: ToolUseContext) -> str | None:
    try:
        return await tool.validate_input(parsed, ctx)
    except Exception as exc:  # a buggy validator must not crash the run
        return f"the input could not be checked ({type(exc).__name__}: {exc})"


async def _replace_input(call: ToolCall, raw: dict[str, Any], ctx: ToolUseContext, who: str) -> ToolCall | str:
    """Input replaced by a hook or an approval goes through the same checks as the model's."""
    tool = call.tool
    try:
        parsed = tool.parse_input(raw)
    except ValidationError as exc:
        return result_texts.invalid_replacement(who, describe_validation_error(tool.name, exc, tool.input_model))
    except InputSchemaError as exc:
        return result_texts.invalid_replacement(who, format_schema_problems(tool.name, exc.problems, exc.schema))
    problem = await _semantic_problem(tool, parsed, ctx)
    return result_texts.replacement_problem(who, problem) if problem else call.with_input(parsed, ctx)


def _decided(ctx: ToolUseContext, call: ToolCall, decision: PermissionDecision) -> None:
    ctx.emit(
        PermissionDecidedEvent(
            tool_use_id=call.tool_use_id,
            name=call.name,
            behavior="allow" if decision.behavior == "allow" else "deny",
            decided_by=decision.decided_by or "policy",
            message=decision.message,
            rule_added=decision.rule_added,
        )
    )


async def _call(tool: Tool, parsed: BaseModel, tool_use_id: str, ctx: ToolUseContext,
                batch: int | None) -> ToolCallOutcome:

    def report(message: str, output: str, fraction: float | None) -> None:
        scrub = ctx.scrubber.scrub
        ctx.emit(ToolProgressEvent(tool_use_id=tool_use_id, message=scrub(message), fraction=fraction,
                                   output=scrub(output)))

    def label(text: str) -> None:
        ctx.emit(ToolProgressEvent(tool_use_id=tool_use_id, label=text))

    ctx.emit(ToolStartedEvent(tool_use_id=tool_use_id, name=tool.name, batch=batch))
    started = time.monotonic()
    modifier: ContextModifier | None = None
    with capture_output() as captured:
        try:
            raw = await tool.call(parsed, ctx, Progress(report, label, tool_use_id=tool_use_id))
            if isinstance(raw, ToolResult):
                content, is_error, modifier = tool.map_output(raw.content), raw.is_error, raw.context_modifier
            else:
                content, is_error = tool.map_output(raw), False
        except (Exception, SystemExit) as exc:  # the model sees the failure; the run goes on
            # SystemExit too: a tool wrapping argparse, or calling exit(), must end its own call,
            # not the kernel's event loop.
            content, is_error = truncate_middle(f"{type(exc).__name__}: {exc}", MAX_ERROR_CHARS), True
    printed = ctx.scrubber.scrub(captured.getvalue())
    if printed:
        content = _append_printed(content, printed)
    # Scrubbed before packaging too: an oversized output is kept whole in the session's store.
    content = ctx.scrubber.scrub_content(content)
    budget = tool.max_result_chars or ctx.options.max_result_chars
    result = package_result(
        tool_use_id=tool_use_id, tool_name=tool.name, content=content, is_error=is_error,
        budget=budget, store=ctx.outputs,
    )
    return ToolCallOutcome(
        tool_use_id, tool.name, result, "error" if is_error else "done", started=True,
        context_modifier=modifier, duration=time.monotonic() - started, captured_output=printed,
    )


def _append_printed(content: Any, printed: str) -> Any:
    note = f"[printed output]\n{truncate_middle(printed, 20_000)}"
    if isinstance(content, str):
        return f"{content}\n\n{note}" if content.strip() else note
    return [*content, {"type": "text", "text": note}]


def _with_context(result: dict[str, Any], extra: list[str]) -> dict[str, Any]:
    text = "\n".join(f"[additional context] {c}" for c in extra)
    content = result["content"]
    new = dict(result)
    if isinstance(content, str):
        new["content"] = f"{content}\n\n{text}"
    else:
        new["content"] = [*content, {"type": "text", "text": text}]
    return new
