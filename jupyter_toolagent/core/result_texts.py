"""Every sentence a tool_result carries when the call did not (fully) run (SPEC §3, §4).

The model reads these to decide what to do next, so one situation has one wording whichever
scheduler (after the stream, while streaming) or stage wrote it: a text that drifted between two
paths would teach the model two meanings for one event. Each text says what happened and, where
it can, what the model may do about it.
"""

from __future__ import annotations

__all__ = [
    "cancelled_before_run",
    "hook_denied",
    "hook_error",
    "internal_error",
    "interrupted_while_running",
    "invalid_replacement",
    "permission_denied",
    "replacement_problem",
    "semantic_problem",
    "stream_failed_before_start",
    "truncated_input",
    "unknown_tool",
]


def unknown_tool(name: str) -> str:
    """Stage 1: no tool of that name (or alias) in the pool; lists nothing."""
    return (f"Error: no tool named {name!r} is available in this session. "
            "Use only the tools listed in your tool definitions.")


def cancelled_before_run(name: str, reason: str | None) -> str:
    """The run was aborted before the call started (stage 2, or a scheduler giving up on it)."""
    return f"Cancelled: the run was stopped ({reason}) before {name} ran. It did not run."


def interrupted_while_running(name: str, reason: str | None) -> str:
    """The run was aborted while the call ran: its effects may be partial."""
    return f"Interrupted: the run was stopped ({reason}) while {name} was running. It may have partly run."


def stream_failed_before_start(error_type: str | None) -> str:
    """The response stream failed; this complete call had not started and never will."""
    return (f"Not run: the response stream failed ({error_type or 'error'}) before this call started. "
            "It did not run.")


def truncated_input(name: str, why: str) -> str:
    """A block whose input was cut off is never executed (SPEC §4.2). ``why`` is a clause from
    the accumulator (``json_problem`` or ``CUT_OFF``), set off with a colon."""
    return (
        f"Error: the input of this {name} call was truncated, so it was not executed: {why}. "
        "Send the call again with the complete input (keep it shorter if it was cut by max_tokens)."
    )


def internal_error(name: str, exc: BaseException) -> str:
    """A bug in a hook runner or permission engine: the call still gets its one result."""
    return f"Internal error while running {name}: {type(exc).__name__}: {exc}"


def semantic_problem(problem: str) -> str:
    """Stage 4: the tool's own `validate_input` refused the input."""
    return f"InputValidationError: {problem}"


def hook_error(name: str, error: str) -> str:
    """Stage 6: a PreToolUse hook raised, timed out or returned an invalid result."""
    return f"Hook error: {error}. {name} did not run."


def hook_denied(name: str) -> str:
    """Stage 6: a PreToolUse hook denied the call without giving a reason."""
    return f"A PreToolUse hook denied this {name} call."


def permission_denied(name: str) -> str:
    """Stage 7: a denial that carried no message of its own."""
    return f"Permission to use {name} was denied."


def invalid_replacement(who: str, description: str) -> str:
    """Input replaced by a hook or an approval that fails the schema (``who``: "A hook supplied")."""
    return f"{who} invalid input: {description}"


def replacement_problem(who: str, problem: str) -> str:
    """Input replaced by a hook or an approval that fails the tool's own check."""
    return f"{who} input that fails its check: {problem}"
