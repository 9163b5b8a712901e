"""The vocabulary shared by tools, the rule engine, hooks and the approval UI.

A tool describes *what* a call touches (`FileAccess`, `ShellCommand`); the rule engine
decides; the approval callback (supplied by the notebook layer) answers asks. The core only
ever sees `PermissionDecision` values.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Literal, Protocol, get_args, runtime_checkable

if TYPE_CHECKING:
    from .tool import ToolUseContext
    from .tool_call import ToolCall

Behavior = Literal["allow", "deny", "ask", "passthrough"]

PermissionMode = Literal["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"]
"""The permission modes of SPEC §5.1. Named here because the core's `RunConfig` carries one;
what each mode does to a decision is the rule engine's business (`permissions.modes`)."""
PERMISSION_MODES: tuple[PermissionMode, ...] = get_args(PermissionMode)

RuleSurface = Literal["python", "cell"]
"""Where the person configures the run: `Agent(...)` in Python, or a ``%%agent`` cell."""


def how_to_allow(rule: str, surface: RuleSurface) -> str:
    """The instruction that adds the allow rule ``rule`` on the surface the person is using:
    a ``--allow`` flag means nothing to someone calling `Agent(...)`, and ``allow=[...]``
    nothing in a cell."""
    if surface == "cell":
        quoted = "'" + rule.replace("'", "'\"'\"'") + "'"
        return f"add `--allow {quoted}`"
    return f"pass `allow=[{json.dumps(rule)}]` to `Agent(...)`"


@dataclass(frozen=True)
class FileAccess:
    """A call reads or edits ``path`` (absolute, normalised, symlinks resolved)."""

    path: str
    access: Literal["read", "edit"]
    written: str | None = field(default=None, compare=False)
    """The path as the call wrote it (absolute, ``..`` folded, links kept), where a name matters:
    a link called ``.env`` is as secret-looking as the file it points at."""


@dataclass(frozen=True)
class ShellCommand:
    """A call runs ``command`` in a shell."""

    command: str
    unconfined: str | None = None
    """Why a misread of the command would not be contained (the tool runs it where no sandbox
    works), or None. The engine then asks instead of allowing it because it looks read-only
    (SPEC §5.5); the tool says so because the tool is what runs the command and knows where."""


@dataclass(frozen=True)
class NotebookEdit:
    """A call changes the notebook document itself (e.g. proposes a new cell). An edit like a
    file edit in the working directory: it asks unless allowed, and ``acceptEdits`` allows it."""

    action: str


PermissionSubject = FileAccess | ShellCommand | NotebookEdit


@dataclass
class PermissionDecision:
    """One step's verdict.

    ``message`` is, for a deny, the text the model receives verbatim; for an ask, why the
    runtime asks (shown to the person). ``decided_by`` says which stage decided: ``rule``,
    ``tool``, ``safety``, ``mode``, ``hook``, ``user``, ``policy``, ``timeout``, ``default``,
    ``read_only``. ``suggested_rule`` is the allow rule that would have permitted the call.
    ``asked``: for an allow a person gave, which stage had asked (``safety``, ``rule``,
    ``default`` …) — a safety approval means the person saw the protected path named.
    A tool that confines its call by why it was allowed (the Bash sandbox) reads both from
    ``ToolUseContext.decision``.
    """

    behavior: Behavior
    message: str = ""
    updated_input: dict[str, Any] | None = None
    decided_by: str = ""
    rule: str | None = None
    suggested_rule: str | None = None
    rule_added: str | None = None
    asked: str | None = None

    @classmethod
    def allow(cls, decided_by: str = "", **kw: Any) -> "PermissionDecision":
        return cls("allow", decided_by=decided_by, **kw)

    @classmethod
    def deny(cls, message: str, decided_by: str = "", **kw: Any) -> "PermissionDecision":
        return cls("deny", message=message, decided_by=decided_by, **kw)

    @classmethod
    def ask(cls, message: str, decided_by: str = "", **kw: Any) -> "PermissionDecision":
        return cls("ask", message=message, decided_by=decided_by, **kw)

    @classmethod
    def passthrough(cls) -> "PermissionDecision":
        return cls("passthrough")


class CanUseTool(Protocol):
    """The core's single permission entry point.

    Called after PreToolUse hooks with the typed call (its parsed input and its observable
    input, read once) and the hooks' combined proposal (allow or ask, or ``None``: a hook deny
    is final and never reaches here). Must return ``allow`` or ``deny``; asks are resolved
    inside (by the approval UI or by policy). The default implementation is the rule engine of
    `permissions`.
    """

    def __call__(
        self, call: "ToolCall", ctx: "ToolUseContext", *, hook_decision: PermissionDecision | None
    ) -> Awaitable[PermissionDecision]: ...


@runtime_checkable
class PermissionState(Protocol):
    """The session's permission state as the core sees it (``ToolUseContext.permissions``):
    the working directory its rules are anchored at, and the decision log. The rules themselves
    are the permission engine's business; the core only records decisions it makes without the
    engine (a PreToolUse hook's deny), so the log holds every decision of the session."""

    @property
    def cwd(self) -> Path: ...

    def record_decision(self, call: "ToolCall", decision: PermissionDecision) -> Any: ...


@dataclass
class ApprovalRequest:
    """An ask put to a person (or to a headless policy).

    ``suggested_rule`` is the session rule that "Always allow" would add (e.g. ``Bash(git log:*)``);
    ``reason`` says which rule or check asks.
    """

    tool_name: str
    input: dict[str, Any]
    tool_use_id: str
    reason: str
    suggested_rule: str | None = None
    agent: str | None = None
    """The sub-agent that asks (``explore: find the config``); None for the cell's own run."""


@dataclass
class ApprovalResponse:
    """The person's answer. ``decided_by``: ``user``, ``timeout``, ``policy``, ``interrupt``."""

    behavior: Literal["allow", "deny"]
    always: bool = False
    reason: str = ""
    decided_by: str = "user"
    updated_input: dict[str, Any] | None = None


class Approver(Protocol):
    """Supplied by the front end: widgets in the running cell, a terminal prompt, or a policy."""

    def __call__(self, request: ApprovalRequest) -> Awaitable[ApprovalResponse]: ...
