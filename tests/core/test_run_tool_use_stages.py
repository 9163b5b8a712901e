"""SPEC §3: one tool call through `run_tool_use`, one test per stage and per error text."""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from jupyter_toolagent.core.events import ToolProgressEvent
from jupyter_toolagent.tools.function_tool import FunctionTool
from jupyter_toolagent.core.hook_types import PreToolUseOutcome
from jupyter_toolagent.core.permission_types import PermissionDecision
from jupyter_toolagent.core.run_tool_use import run_tool_use
from jupyter_toolagent.core.simple_policy import SimplePolicy
from jupyter_toolagent.core.tool import Progress, Tool, ToolUseContext

from runtime_support import Probe, StubHooks, ctx_for, result_text


class Item(BaseModel):
    model_config = ConfigDict(extra="forbid")
    x: int


class ShapeInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    count: int
    items: list[Item] = []


class Shape(Tool):
    name = "Shape"
    aliases = ("OldShape",)
    description = "records its input"
    input_model = ShapeInput

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []

    async def validate_input(self, input: BaseModel, ctx: ToolUseContext) -> str | None:
        assert isinstance(input, ShapeInput)
        if input.count < 0:
            return "count must not be negative; pass 0 or more."
        return None

    async def call(self, input: BaseModel, ctx: ToolUseContext, progress: Progress) -> Any:
        self.received.append(input.model_dump())
        return f"shape {input.model_dump_json()}"


def use(name: str, input: Any, id: str = "toolu_1") -> dict[str, Any]:
    return {"type": "tool_use", "id": id, "name": name, "input": input}


GOOD = {"name": "a", "count": 1}


# --- 1. lookup --------------------------------------------------------------------------

@pytest.mark.asyncio
async def test_unknown_tool_names_the_tool_and_is_invalid() -> None:
    shape = Shape()
    out = await run_tool_use(use("Frobnicate", {}), ctx_for(shape))
    assert out.status == "invalid"
    assert out.result["is_error"] is True
    assert out.result["tool_use_id"] == "toolu_1"
    text = result_text(out.result)
    assert "'Frobnicate'" in text
    assert "Shape" not in text  # lists nothing
    assert shape.received == []


@pytest.mark.asyncio
async def test_alias_lookup_runs_the_canonical_tool() -> None:
    shape = Shape()
    out = await run_tool_use(use("OldShape", GOOD), ctx_for(shape))
    assert out.status == "done"
    assert out.name == "Shape"
    assert shape.received == [{"name": "a", "count": 1, "items": []}]


# --- 2. abort check ----------------------------------------------------------------------

@pytest.mark.asyncio
async def test_aborted_run_gives_cancelled_result_and_no_call() -> None:
    shape = Shape()
    ctx = ctx_for(shape)
    ctx.abort.abort("Stop button")
    out = await run_tool_use(use("Shape", GOOD), ctx)
    assert out.status == "cancelled"
    assert out.result["is_error"] is True
    text = result_text(out.result).lower()
    assert "cancelled" in text and "stop button" in text and "did not run" in text
    assert shape.received == []


# --- 3. schema validation -----------------------------------------------------------------

async def _invalid(input: Any) -> str:
    shape = Shape()
    out = await run_tool_use(use("Shape", input), ctx_for(shape))
    assert out.status == "invalid"
    assert out.result["is_error"] is True
    assert shape.received == []
    return result_text(out.result)


@pytest.mark.asyncio
async def test_missing_required_parameters_are_each_listed() -> None:
    text = await _invalid({})
    assert "missing required parameter `name`" in text
    assert "missing required parameter `count`" in text
    assert "Fix the input" in text


@pytest.mark.asyncio
async def test_unexpected_parameter_is_named() -> None:
    text = await _invalid({**GOOD, "colour": "red"})
    assert "unexpected parameter `colour`" in text


@pytest.mark.asyncio
async def test_wrong_type_says_expected_and_given() -> None:
    text = await _invalid({"name": "a", "count": "many"})
    assert '`count`: expected integer, got string "many"' in text


@pytest.mark.asyncio
async def test_nested_wrong_type_gives_the_parameter_path() -> None:
    text = await _invalid({**GOOD, "items": [{"x": 1}, {"x": "two"}]})
    assert '`items[1].x`: expected integer, got string "two"' in text
    assert "items[0]" not in text


@pytest.mark.asyncio
async def test_several_problems_are_reported_together() -> None:
    text = await _invalid({"count": [1], "extra": 1})
    assert "missing required parameter `name`" in text
    assert "unexpected parameter `extra`" in text
    assert "`count`: expected integer, got array [1]" in text


@pytest.mark.asyncio
async def test_input_that_is_not_an_object() -> None:
    text = await _invalid(["a"])
    assert "must be a JSON object" in text


class LooseInput(BaseModel):  # a tool author's model with pydantic's default config
    path: str


class Loose(Tool):
    name = "Loose"
    input_model = LooseInput

    async def call(self, input: BaseModel, ctx: ToolUseContext, progress: Progress) -> Any:
        return "ran"


@pytest.mark.asyncio
async def test_unexpected_parameter_is_refused_for_models_with_default_config() -> None:
    out = await run_tool_use(use("Loose", {"path": "a", "recursive": True}), ctx_for(Loose()))
    assert out.status == "invalid"
    assert "unexpected parameter `recursive`" in result_text(out.result)


# --- 4. semantic validation ---------------------------------------------------------------

@pytest.mark.asyncio
async def test_validate_input_message_reaches_the_model() -> None:
    text = await _invalid({"name": "a", "count": -1})
    assert text == "InputValidationError: count must not be negative; pass 0 or more."


class BrokenValidator(Shape):
    async def validate_input(self, input: BaseModel, ctx: ToolUseContext) -> str | None:
        raise KeyError("oops")


@pytest.mark.asyncio
async def test_raising_validator_becomes_an_invalid_result() -> None:
    tool = BrokenValidator()
    out = await run_tool_use(use("Shape", GOOD), ctx_for(tool))
    assert out.status == "invalid"
    assert "KeyError" in result_text(out.result)
    assert tool.received == []


# --- 5. observable input ------------------------------------------------------------------

class PathInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str


class PathTool(Tool):
    """Hooks and permissions see ``abs_path``; the call gets the input as sent."""

    name = "PathTool"
    input_model = PathInput

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []

    async def validate_input(self, input: BaseModel, ctx: ToolUseContext) -> str | None:
        assert isinstance(input, PathInput)
        return "paths outside the project are refused" if input.path.startswith("/etc") else None

    def observable_input(self, input: BaseModel, ctx: ToolUseContext) -> dict[str, Any]:
        data = input.model_dump()
        data["abs_path"] = os.path.join("/project", data["path"])
        return data

    async def call(self, input: BaseModel, ctx: ToolUseContext, progress: Progress) -> Any:
        assert isinstance(input, PathInput)
        self.received.append(input.model_dump())
        return f"wrote {input.path}"


class RecordingPolicy:
    def __init__(self, decision: PermissionDecision | None = None) -> None:
        self.decision = decision or PermissionDecision.allow("test")
        self.seen: list[dict[str, Any]] = []
        self.hook_decisions: list[PermissionDecision | None] = []

    async def __call__(self, call, ctx, *, hook_decision):  # noqa: ANN001
        input = call.observable
        self.seen.append(dict(input))
        self.hook_decisions.append(hook_decision)
        return self.decision


@pytest.mark.asyncio
async def test_hooks_and_permissions_see_derived_fields_but_the_call_gets_the_original() -> None:
    tool, hooks, policy = PathTool(), StubHooks(), RecordingPolicy()
    out = await run_tool_use(use("PathTool", {"path": "a.txt"}), ctx_for(tool, hooks=hooks, can_use_tool=policy))
    assert out.status == "done"
    assert hooks.seen == [("PathTool", {"path": "a.txt", "abs_path": "/project/a.txt"})]
    assert policy.seen == [{"path": "a.txt", "abs_path": "/project/a.txt"}]
    assert tool.received == [{"path": "a.txt"}]


@pytest.mark.asyncio
async def test_hook_updated_input_reaches_the_call() -> None:
    tool = PathTool()
    hooks = StubHooks(lambda name, input: PreToolUseOutcome(updated_input={"path": "safe.txt"}))
    out = await run_tool_use(use("PathTool", {"path": "a.txt"}), ctx_for(tool, hooks=hooks))
    assert out.status == "done"
    assert tool.received == [{"path": "safe.txt"}]


@pytest.mark.asyncio
async def test_hook_updated_input_is_schema_validated() -> None:
    tool = PathTool()
    hooks = StubHooks(lambda name, input: PreToolUseOutcome(updated_input={"path": 3}))
    out = await run_tool_use(use("PathTool", {"path": "a.txt"}), ctx_for(tool, hooks=hooks))
    assert out.status == "invalid"
    text = result_text(out.result)
    assert text.startswith("A hook supplied invalid input")
    assert "`path`: expected string, got integer 3" in text
    assert tool.received == []


@pytest.mark.asyncio
async def test_permission_sees_derived_fields_of_hook_updated_input() -> None:
    tool, policy = PathTool(), RecordingPolicy()
    hooks = StubHooks(lambda name, input: PreToolUseOutcome(updated_input={"path": "b.txt"}))
    await run_tool_use(use("PathTool", {"path": "a.txt"}), ctx_for(tool, hooks=hooks, can_use_tool=policy))
    assert policy.seen == [{"path": "b.txt", "abs_path": "/project/b.txt"}]


@pytest.mark.asyncio
async def test_hook_updated_input_is_semantically_validated() -> None:
    tool = PathTool()
    hooks = StubHooks(lambda name, input: PreToolUseOutcome(updated_input={"path": "/etc/passwd"}))
    out = await run_tool_use(use("PathTool", {"path": "a.txt"}), ctx_for(tool, hooks=hooks))
    assert tool.received == []
    assert out.status == "invalid"


@pytest.mark.asyncio
async def test_permission_updated_input_reaches_the_call() -> None:
    tool = PathTool()
    policy = RecordingPolicy(PermissionDecision.allow("user", updated_input={"path": "edited.txt"}))
    out = await run_tool_use(use("PathTool", {"path": "a.txt"}), ctx_for(tool, can_use_tool=policy))
    assert out.status == "done"
    assert tool.received == [{"path": "edited.txt"}]


@pytest.mark.asyncio
async def test_permission_updated_input_is_schema_validated() -> None:
    tool = PathTool()
    policy = RecordingPolicy(PermissionDecision.allow("user", updated_input={"file": "x"}))
    out = await run_tool_use(use("PathTool", {"path": "a.txt"}), ctx_for(tool, can_use_tool=policy))
    assert out.status == "invalid"
    text = result_text(out.result)
    assert text.startswith("The approval supplied invalid input")
    assert "unexpected parameter `file`" in text and "missing required parameter `path`" in text
    assert tool.received == []


# --- 6. PreToolUse hooks ---------------------------------------------------------------------

@pytest.mark.asyncio
async def test_hook_deny_with_the_policy_stops_the_call_with_the_hook_reason() -> None:
    tool = PathTool()
    hooks = StubHooks(lambda name, input: PreToolUseOutcome(decision="deny", reason="no writes on Fridays"))
    policy = SimplePolicy(allow=["PathTool"])
    out = await run_tool_use(use("PathTool", {"path": "a.txt"}), ctx_for(tool, hooks=hooks, can_use_tool=policy))
    assert out.status == "denied"
    assert result_text(out.result) == "no writes on Fridays"
    assert tool.received == []


@pytest.mark.asyncio
async def test_hook_decision_is_handed_to_the_permission_check() -> None:
    tool, policy = PathTool(), RecordingPolicy()
    hooks = StubHooks(lambda name, input: PreToolUseOutcome(decision="ask", reason="check this"))
    await run_tool_use(use("PathTool", {"path": "a.txt"}), ctx_for(tool, hooks=hooks, can_use_tool=policy))
    [decision] = policy.hook_decisions
    assert decision is not None and decision.behavior == "ask" and decision.message == "check this"
    assert decision.decided_by == "hook"


@pytest.mark.asyncio
async def test_hook_deny_is_final_whatever_the_permission_callback() -> None:
    tool = PathTool()
    hooks = StubHooks(lambda name, input: PreToolUseOutcome(decision="deny", reason="blocked by hook"))
    out = await run_tool_use(use("PathTool", {"path": "a.txt"}), ctx_for(tool, hooks=hooks))
    assert tool.received == []
    assert out.status == "denied"


@pytest.mark.asyncio
async def test_hook_error_stops_the_call_with_an_error_result() -> None:
    tool, policy = PathTool(), RecordingPolicy()
    hooks = StubHooks(lambda name, input: PreToolUseOutcome(error="ValueError: hook crashed"))
    out = await run_tool_use(use("PathTool", {"path": "a.txt"}), ctx_for(tool, hooks=hooks, can_use_tool=policy))
    assert out.status == "error"
    assert out.result["is_error"] is True
    text = result_text(out.result)
    assert "Hook error: ValueError: hook crashed" in text and "did not run" in text
    assert tool.received == [] and policy.seen == []


@pytest.mark.asyncio
async def test_hook_stop_lets_the_call_finish_and_asks_the_run_to_end() -> None:
    tool = PathTool()
    hooks = StubHooks(lambda name, input: PreToolUseOutcome(stop=True, stop_reason="budget reached"))
    out = await run_tool_use(use("PathTool", {"path": "a.txt"}), ctx_for(tool, hooks=hooks))
    assert out.status == "done"
    assert tool.received == [{"path": "a.txt"}]
    assert out.stop_run is True and out.stop_reason == "budget reached"


@pytest.mark.asyncio
async def test_hook_additional_context_is_appended_to_the_result() -> None:
    tool = PathTool()
    hooks = StubHooks(lambda name, input: PreToolUseOutcome(additional_context=["the repo is read-mostly"]))
    out = await run_tool_use(use("PathTool", {"path": "a.txt"}), ctx_for(tool, hooks=hooks))
    text = result_text(out.result)
    assert text.startswith("wrote a.txt")
    assert "[additional context] the repo is read-mostly" in text


# --- 7. permission ----------------------------------------------------------------------------

@pytest.mark.asyncio
async def test_denial_message_goes_back_verbatim() -> None:
    message = "The user denied this PathTool call. Reason: use the scratch folder\n  (not a.txt)."
    tool = PathTool()
    policy = RecordingPolicy(PermissionDecision.deny(message, "user"))
    events: list[Any] = []
    out = await run_tool_use(use("PathTool", {"path": "a.txt"}), ctx_for(tool, can_use_tool=policy, emit=events.append))
    assert out.status == "denied"
    assert out.result == {"type": "tool_result", "tool_use_id": "toolu_1", "content": message, "is_error": True}
    assert tool.received == []
    decided = [e for e in events if e.kind == "permission_decided"]
    assert [(e.behavior, e.decided_by) for e in decided] == [("deny", "user")]


@pytest.mark.asyncio
async def test_ask_returned_by_the_callback_does_not_reach_the_call() -> None:
    tool = PathTool()
    policy = RecordingPolicy(PermissionDecision.ask("needs a person"))
    out = await run_tool_use(use("PathTool", {"path": "a.txt"}), ctx_for(tool, can_use_tool=policy))
    assert out.status == "denied"
    assert tool.received == []


# --- 8. the call ---------------------------------------------------------------------------------

class Raiser(Tool):
    name = "Raiser"
    input_model = PathInput

    def __init__(self, message: str) -> None:
        self.message = message

    async def call(self, input: BaseModel, ctx: ToolUseContext, progress: Progress) -> Any:
        raise ValueError(self.message)


@pytest.mark.asyncio
async def test_exception_becomes_an_error_result() -> None:
    out = await run_tool_use(use("Raiser", {"path": "x"}), ctx_for(Raiser("disk full")))
    assert out.status == "error"
    assert out.started is True
    assert out.result["is_error"] is True
    assert result_text(out.result) == "ValueError: disk full"


@pytest.mark.asyncio
async def test_long_exception_message_is_cut_in_the_middle() -> None:
    message = "HEAD-" + "m" * 40_000 + "-TAIL"
    out = await run_tool_use(use("Raiser", {"path": "x"}), ctx_for(Raiser(message)))
    text = result_text(out.result)
    assert text.startswith("ValueError: HEAD-")
    assert text.endswith("-TAIL")
    assert "characters cut from the middle" in text
    assert len(text) <= 10_000
    assert len(text) < len("ValueError: " + message)


class Reporter(Tool):
    name = "Reporter"
    input_model = PathInput

    async def call(self, input: BaseModel, ctx: ToolUseContext, progress: Progress) -> Any:
        progress("reading chunk 1 of 2", 0.5, output="PARTIAL-LINE")
        progress("reading chunk 2 of 2", 1.0)
        return "final answer"


@pytest.mark.asyncio
async def test_progress_is_emitted_and_never_in_the_result() -> None:
    events: list[Any] = []
    out = await run_tool_use(use("Reporter", {"path": "x"}), ctx_for(Reporter(), emit=events.append))
    progress = [e for e in events if isinstance(e, ToolProgressEvent)]
    assert [(e.message, e.fraction, e.output) for e in progress] == [
        ("reading chunk 1 of 2", 0.5, "PARTIAL-LINE"), ("reading chunk 2 of 2", 1.0, "")]
    assert all(e.tool_use_id == "toolu_1" for e in progress)
    assert out.result["content"] == "final answer"
    kinds = [e.kind for e in events]
    assert kinds.index("tool_started") < kinds.index("tool_progress")


def noisy_sync(path: str) -> str:
    print("SYNC-PRINTED-LINE")
    print("SYNC-STDERR-LINE", file=sys.stderr)
    return f"sync {path}"


async def noisy_async(path: str) -> str:
    print("ASYNC-PRINTED-LINE")
    return f"async {path}"


@pytest.mark.asyncio
async def test_prints_go_to_the_result_not_to_the_real_stdout(capfd: pytest.CaptureFixture[str]) -> None:
    ctx = ctx_for(FunctionTool(noisy_sync), FunctionTool(noisy_async))
    sync_out = await run_tool_use(use("noisy_sync", {"path": "p"}, "toolu_s"), ctx)
    async_out = await run_tool_use(use("noisy_async", {"path": "p"}, "toolu_a"), ctx)
    sync_text, async_text = result_text(sync_out.result), result_text(async_out.result)
    assert sync_text.startswith("sync p")
    assert "SYNC-PRINTED-LINE" in sync_text and "SYNC-STDERR-LINE" in sync_text
    assert "ASYNC-PRINTED-LINE" in async_text and "SYNC-STDERR-LINE" not in async_text
    assert "SYNC-PRINTED-LINE" in sync_out.captured_output
    print("OUTSIDE-ANY-TOOL")
    captured = capfd.readouterr()
    assert "PRINTED-LINE" not in captured.out and "STDERR-LINE" not in captured.err
    assert "OUTSIDE-ANY-TOOL" in captured.out  # the proxy still passes other prints through


@pytest.mark.asyncio
async def test_a_successful_call_reports_start_and_duration() -> None:
    probe = Probe("P")
    out = await run_tool_use(use("P", {"tag": "t1"}), ctx_for(probe))
    assert out.status == "done" and out.started
    assert probe.calls == ["t1"]
    assert out.duration is not None and out.duration >= 0
