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
from .results import error_result, package_result, truncate_middle
from .tool import ContextModifier, InputT, Progress, Tool, ToolResult, ToolUseContext
from .validation import InputSchemaError, describe_validation_error

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


def parse_input(tool: Tool[InputT], raw: Any) -> InputT:
    """Validate raw tool input against the tool's schema (raises ValidationError or
    InputSchemaError)."""
    return tool.parse_input(raw)


def _fail(block: dict[str, Any], name: str, text: str, status: ToolStatus = "error", **kw: Any) -> ToolCallOutcome:
    return ToolCallOutcome(block["id"], name, error_result(block["id"], text), status, **kw)


async def run_tool_use(block: dict[str, Any], ctx: ToolUseContext, *, batch: int | None = None) -> ToolCallOutcome:
    """Run one ``tool_use`` block through lookup, checks, hooks, permission, call, packaging,
    then secret scrubbing (stage 10): whatever a stage wrote, the outcome that leaves here —
    the one thing the transcript, the events and the next request are made from — holds no
    run of a protected value. A call's own output is scrubbed once, in `_call`, before it is
    packaged (packaging keeps an oversized output whole in the session, and PostToolUse hooks
    see the packaged result); the text of an early exit and hook context are scrubbed here."""
    outcome = await _run_stages(block, ctx, batch)
    if not outcome.started:  # an early exit's text quotes hooks, rules, the input
        outcome.result = ctx.scrubber.scrub_result(outcome.result)
    if outcome.additional_context:
        outcome.additional_context = [ctx.scrubber.scrub(c) for c in outcome.additional_context]
        outcome.result = _with_context(outcome.result, outcome.additional_context)
    return outcome


async def _run_stages(block: dict[str, Any], ctx: ToolUseContext, batch: int | None) -> ToolCallOutcome:
    tool_use_id: str = block["id"]
    requested = block.get("name", "")

    # 1. Lookup (aliases accepted).
    tool = ctx.tools.find(requested)
    if tool is None and ctx.deferred and requested in ctx.deferred.unloaded:
        return _fail(block, requested, ctx.deferred.hint(requested), "invalid")
    if tool is None:
        return _fail(
            block,
            requested,
            f"Error: no tool named {requested!r} is available in this session. "
            "Use only the tools listed in your tool definitions.",
            "invalid",
        )
    name = tool.name

    # 2. Abort check.
    if ctx.abort.aborted:
        return _fail(
            block, name, f"Cancelled: the run was stopped ({ctx.abort.reason}) before {name} ran. It did not run.",
            "cancelled",
        )

    # 3. Schema validation.
    try:
        parsed = parse_input(tool, block.get("input"))
    except ValidationError as exc:
        return _fail(block, name, describe_validation_error(name, exc, tool.input_model), "invalid")
    except InputSchemaError as exc:
        return _fail(block, name, exc.describe(name), "invalid")

    # 4. Semantic validation.
    problem = await _semantic_problem(tool, parsed, ctx)
    if problem:
        return _fail(block, name, f"InputValidationError: {problem}", "invalid")

    # 5. Observable input: hooks and permissions see a copy with derived fields.
    observable = _observable(tool, parsed, ctx)

    # 6. PreToolUse hooks.
    hook = PreToolUseOutcome()
    if ctx.hooks is not None:
        hook = await ctx.hooks.pre_tool_use(tool, dict(observable), tool_use_id, ctx)
        for msg in hook.system_messages:
            ctx.emit(NoticeEvent(text=msg))
        if hook.error:
            return _fail(block, name, f"Hook error: {hook.error}. {name} did not run.", stop_run=hook.stop,
                         stop_reason=hook.stop_reason)
        if hook.decision == "deny":  # final: no permission policy can turn it into an allow
            text = hook.reason or f"A PreToolUse hook denied this {name} call."
            _decided(ctx, tool_use_id, name, PermissionDecision.deny(text, "hook"))
            _record_hook_denial(ctx, tool_use_id, name, observable, text)
            return _fail(block, name, text, "denied", stop_run=hook.stop, stop_reason=hook.stop_reason)
        if hook.updated_input is not None:
            replaced = await _replace_input(tool, hook.updated_input, ctx, "A hook supplied")
            if isinstance(replaced, str):
                return _fail(block, name, replaced, "invalid")
            parsed = replaced
            observable = _observable(tool, parsed, ctx)
    hook_decision = (
        PermissionDecision(hook.decision, message=hook.reason, decided_by="hook") if hook.decision else None
    )

    # 7. Permission decision: only allow reaches the call.
    decision = await ctx.can_use_tool(tool, dict(observable), ctx, tool_use_id=tool_use_id, hook_decision=hook_decision)
    _decided(ctx, tool_use_id, name, decision)
    if decision.behavior != "allow":
        text = decision.message or f"Permission to use {name} was denied."
        return _fail(block, name, text, "denied", stop_run=hook.stop, stop_reason=hook.stop_reason)
    if decision.updated_input is not None:
        replaced = await _replace_input(tool, decision.updated_input, ctx, "The approval supplied")
        if isinstance(replaced, str):
            return _fail(block, name, replaced, "invalid")
        parsed = replaced

    # 8. Call, with progress and captured prints.
    outcome = await _call(tool, parsed, block, ctx.replace(decision=decision), batch)
    outcome.stop_run = outcome.stop_run or hook.stop
    outcome.stop_reason = outcome.stop_reason or hook.stop_reason
    if hook.additional_context:
        outcome.additional_context.extend(hook.additional_context)

    # 9. Post hooks (the result is already packaged).
    if ctx.hooks is not None:
        post = await ctx.hooks.post_tool_use(
            tool, dict(observable), tool_use_id, outcome.result, ctx, failed=outcome.is_error
        )
        for msg in post.system_messages:
            ctx.emit(NoticeEvent(text=msg))
        outcome.additional_context.extend(post.additional_context)
        if post.stop:
            outcome.stop_run, outcome.stop_reason = True, post.stop_reason or outcome.stop_reason
    return outcome


async def _semantic_problem(tool: Tool, parsed: BaseModel, ctx: ToolUseContext) -> str | None:
    try:
        return await tool.validate_input(parsed, ctx)
    except Exception as exc:  # a buggy validator must not crash the run
        return f"the input could not be checked ({type(exc).__name__}: {exc})"


def _observable(tool: Tool, parsed: BaseModel, ctx: ToolUseContext) -> dict[str, Any]:
    try:
        return tool.observable_input(parsed, ctx)
    except Exception:
        return parsed.model_dump(mode="json")


async def _replace_input(tool: Tool, raw: dict[str, Any], ctx: ToolUseContext, who: str) -> BaseModel | str:
    """Input replaced by a hook or an approval goes through the same checks as the model's."""
    try:
        parsed = parse_input(tool, raw)
    except ValidationError as exc:
        return f"{who} invalid input: " + describe_validation_error(tool.name, exc, tool.input_model)
    except InputSchemaError as exc:
        return f"{who} invalid input: " + exc.describe(tool.name)
    problem = await _semantic_problem(tool, parsed, ctx)
    return f"{who} input that fails its check: {problem}" if problem else parsed


def _record_hook_denial(ctx: ToolUseContext, tool_use_id: str, name: str, observable: dict[str, Any],
                        text: str) -> None:
    """The permission engine never sees a call a hook denied; the session's decision log must."""
    record = getattr(ctx.permissions, "record", None)
    if record is not None:
        record(name, tool_use_id, observable, "deny", "hook", message=text)


def _decided(ctx: ToolUseContext, tool_use_id: str, name: str, decision: PermissionDecision) -> None:
    ctx.emit(
        PermissionDecidedEvent(
            tool_use_id=tool_use_id,
            name=name,
            behavior="allow" if decision.behavior == "allow" else "deny",
            decided_by=decision.decided_by or "policy",
            message=decision.message,
            rule_added=decision.rule_added,
        )
    )


async def _call(tool: Tool, parsed: BaseModel, block: dict[str, Any], ctx: ToolUseContext,
                batch: int | None) -> ToolCallOutcome:
    tool_use_id = block["id"]

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
