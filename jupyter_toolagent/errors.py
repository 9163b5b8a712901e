"""Every exception the product raises on purpose.

    ToolAgentError                      root: catch this to catch them all
    ├── ConfigError                     bad option, rule, settings file or tool definition
    │   ├── RuleSyntaxError             a permission rule that does not parse
    │   ├── SettingsFileError           `.toolagent/settings.json` invalid (names file + field)
    │   └── ToolDefinitionError         a function that cannot become a tool (all problems listed)
    ├── ModelAPIError                   the model API failed after the SDK's retries
    ├── TranscriptError                 a transcript that would be rejected by the API
    └── SessionFileError                a saved session file that cannot be loaded

Tool failures are *not* exceptions at this level: `run_tool_use` turns them into `is_error`
tool results so that the model sees them and the conversation stays valid.
"""

from __future__ import annotations

import difflib
from typing import Iterable, Sequence


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
        self.meant = {name: _closest(name, known) for name in self.unknown}
        """unknown keyword -> the known one it most likely meant (None: nothing close)."""
        parts = []
        for name, meant in self.meant.items():
            hint = f"did you mean {meant!r}?" if meant else f"it takes {', '.join(known)}"
            parts.append(f"{where} got an unexpected keyword argument {name!r}; {hint}")
        super().__init__("\n".join(parts))


def _closest(name: str, known: Sequence[str]) -> str | None:
    """The known name nearest to ``name`` (case and ``-``/``_`` ignored), if any is close."""
    def norm(text: str) -> str:
        return text.lower().replace("-", "_")
    by_norm = {norm(k): k for k in known}
    found = difflib.get_close_matches(norm(name), list(by_norm), n=1, cutoff=0.6)
    return by_norm[found[0]] if found else None


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


class TranscriptError(ToolAgentError):
    """A transcript fails `check_pairing`; sending it would get a 400 from the API."""


class SessionFileError(ToolAgentError):
    """A saved session file that cannot be loaded (corrupt, foreign, unreadable); one line."""
