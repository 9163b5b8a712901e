"""Every exception the product raises on purpose, in one tree (this module is their one home).

    ToolAgentError                      root: catch this to catch them all
    ├── ConfigError                     bad option, rule, settings file or tool definition
    │   ├── UnknownKeywordError         a keyword `Agent()` does not take (also a TypeError)
    │   ├── RuleSyntaxError             a permission rule that does not parse
    │   ├── SettingsFileError           `.toolagent/settings.json` invalid (names file + field)
    │   ├── ToolDefinitionError         a function that cannot become a tool (all problems listed)
    │   └── McpConfigError              a bad ``mcpServers`` entry (names the server)
    ├── ModelAPIError                   the model API failed after the SDK's retries
    │   ├── ScriptExhaustedError        a `ScriptedModel` has no turn left for a request
    │   └── ContextOverflowError        the conversation does not fit even after compaction
    ├── StreamProtocolError             stream events out of order or naming unknown blocks
    ├── SessionFileError                a saved session file that cannot be loaded
    ├── AgentRunFailed                  a ``%%agent`` cell whose run ended on an error
    ├── McpServerGone                   an MCP server that is not connected (failed, exited, removed)
    ├── ShellParseError                 a shell command the parser cannot split (also a ValueError)
    ├── BraceOverflow                   a brace expansion over the word limit (also a ValueError)
    ├── BraceUnreadable                 quoting brace expansion does not read (also a ValueError)
    ├── InputSchemaError                input that breaks a tool's JSON Schema (also a ValueError)
    ├── EditError                       an edit that cannot be applied
    ├── InspectPathError                an ``InspectVariable`` path that cannot be followed (also a ValueError)
    ├── PatternRejected                 a Grep pattern the backend cannot compile (also a ValueError)
    └── TimedOut                        user code that did not return in time (also a TimeoutError)

The last group never leaves a run: the permission checks treat an unreadable command as unknown,
and a tool turns its own failure into an ``is_error`` tool result, so that the model sees it and
the conversation stays valid. They are here so that the whole tree is one picture (a test checks
this drawing against the classes).
"""

from __future__ import annotations

import difflib
from typing import Any, Iterable, Sequence

__all__ = [
    "AgentRunFailed",
    "BraceOverflow",
    "BraceUnreadable",
    "ConfigError",
    "ContextOverflowError",
    "EditError",
    "InputSchemaError",
    "InspectPathError",
    "McpConfigError",
    "McpServerGone",
    "ModelAPIError",
    "PatternRejected",
    "RuleSyntaxError",
    "ScriptExhaustedError",
    "SessionFileError",
    "SettingsFileError",
    "ShellParseError",
    "StreamProtocolError",
    "TimedOut",
    "ToolAgentError",
    "ToolDefinitionError",
    "UnknownKeywordError",
]


class ToolAgentError(Exception):
    """Root of the product's exceptions."""


class ConfigError(ToolAgentError):
    """A configuration problem the person has to fix; shown as one line."""


class UnknownKeywordError(ConfigError, TypeError):
    """Keywords a call does not take (a misspelled option would otherwise do nothing). A
    `TypeError` as well, like Python's own for an unexpected keyword; names the likely meant one."""

    def __init__(self, where: str, unknown: Sequence[str], known: Iterable[str]) -> None:
        self.where = where
        self.unknown = tuple(unknown)
        known = sorted(known)
        self.meant = {name: self.closest(name, known) for name in self.unknown}
        """unknown keyword -> the known one it most likely meant (None: nothing close)."""
        parts = []
        for name, meant in self.meant.items():
            hint = f"did you mean {meant!r}?" if meant else f"it takes {', '.join(known)}"
            parts.append(f"{where} got an unexpected keyword argument {name!r}; {hint}")
        super().__init__("\n".join(parts))

    @staticmethod
    def closest(name: str, known: Iterable[str]) -> str | None:
        """The known name nearest to ``name`` (case and ``-``/``_`` ignored), if any is close.
        Among difflib's close matches, one with exactly the same letters wins: two swapped
        letters (``modle``) mean ``model``, not the shorter ``mode`` difflib ranks first."""
        def norm(text: str) -> str:
            return text.lower().replace("-", "_")

        by_norm = {norm(k): k for k in known}
        typed = norm(name)
        found = difflib.get_close_matches(typed, list(by_norm), n=3, cutoff=0.6)
        same_letters = [f for f in found if sorted(f) == sorted(typed)]
        ranked = same_letters or found
        return by_norm[ranked[0]] if ranked else None


class RuleSyntaxError(ConfigError):
    """A permission rule that does not parse."""

    def __init__(self, rule: str, problem: str) -> None:
        self.rule = rule
        self.problem = problem
        super().__init__(f"invalid permission rule {rule!r}: {problem}")


class SettingsFileError(ConfigError):
    """A settings file that is not valid JSON or does not match the schema."""


class ToolDefinitionError(ConfigError):
    """A Python callable that cannot be turned into a tool."""


class McpConfigError(ConfigError):
    """A bad MCP server entry; the message is one line that names the server."""


class ModelAPIError(ToolAgentError):
    """The model API failed in a way the SDK's retries did not fix.

    Carries what a person needs to act: HTTP status, the API's error type, the request id,
    and a hint on what to do next. Never carries the API key.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        error_type: str | None = None,
        request_id: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.message = message
        self.status = status
        self.error_type = error_type
        self.request_id = request_id
        self.hint = hint
        super().__init__(self.one_line())

    def one_line(self) -> str:
        parts = ["API error"]
        if self.status is not None:
            parts.append(f"HTTP {self.status}")
        if self.error_type:
            parts.append(self.error_type)
        head = " ".join(parts)
        text = f"{head}: {self.message}"
        if self.request_id:
            text += f" (request id {self.request_id})"
        if self.hint:
            text += f". {self.hint}"
        return text


class SessionFileError(ToolAgentError):
    """A saved session file that cannot be loaded (corrupt, foreign, unreadable); one line."""


class ScriptExhaustedError(ModelAPIError):
    """The script has no turn left for a request."""


class ContextOverflowError(ModelAPIError):
    """The conversation does not fit the window even after compaction."""


class StreamProtocolError(ToolAgentError):
    """The stream's events are out of order or refer to unknown blocks."""


class AgentRunFailed(ToolAgentError):
    """The run ended on an API or runtime error. The cell fails — so nbclient and papermill
    stop, and queued cells follow the kernel's stop-on-error rule — with one line; the details
    (status, request id, hint) are already in the cell's output."""

    def _render_traceback_(self) -> list[str]:  # IPython shows this instead of a traceback
        return [f"{type(self).__name__}: {self}"]


class McpServerGone(ToolAgentError):
    """The server is not connected (it failed, exited or was removed); the text says why."""


class ShellParseError(ToolAgentError, ValueError):
    """A shell command the parser cannot split (the caller must treat it as unknown)."""

    def __init__(self, command: str, problem: str) -> None:
        self.command = command
        self.problem = problem
        super().__init__(f"cannot parse shell command {command!r}: {problem}")


class BraceOverflow(ToolAgentError, ValueError):
    """A brace expansion larger than `permissions.shell.braces.MAX_BRACE_WORDS`."""


class BraceUnreadable(ToolAgentError, ValueError):
    """Quoting the brace expander does not read (``$'…'`` next to braces): the caller must treat
    the word as unknown."""


class InputSchemaError(ToolAgentError, ValueError):
    """Stage 3 failed for a tool whose schema is plain JSON Schema rather than a pydantic
    model (an MCP server's). ``problems`` are already worded like pydantic's; the stage's
    message is `core.validation.format_schema_problems` of them."""

    def __init__(self, problems: list[str], schema: dict[str, Any]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems
        self.schema = schema


class EditError(ToolAgentError):
    """An edit that cannot be applied; the message tells the model what to do instead."""


class InspectPathError(ToolAgentError, ValueError):
    """A path that is not allowed or cannot be followed; the message is for the model."""


class PatternRejected(ToolAgentError, ValueError):
    """The backend cannot compile the pattern; the message is the backend's own."""


class TimedOut(ToolAgentError, TimeoutError):
    """User code did not return in time; its thread is left to finish on its own."""
