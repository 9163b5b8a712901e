"""The permission state of one session: rules by source, the mode, session grants, decisions.

Rules come from several sources (SPEC §5.2) — magic flags (``flag``, for one cell), ``Agent``
arguments (``agent``), ``%config`` (``config``), the project settings file (``settings``) and
"Always allow" (``session``) — and are merged into one list: where a rule came from is kept for
messages and ``%agent config``, but never changes precedence (deny > ask > allow always).

The mode has two layers: ``base_mode`` (set by ``--mode``, ``Agent(mode=…)`` or the settings
file) and the session grant "acceptEdits" that "Always allow" on a file edit adds. The grant
only lifts ``default``: it never weakens plan or dontAsk.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from ..core.permission_types import PermissionDecision

from ..errors import RuleSyntaxError
from .modes import Mode, parse_mode
from .rules import BEHAVIORS, RuleBehavior, RuleEntry, parse_rule, parse_rule_text
from .settings import SandboxSettings, Settings, find_settings_file, load_settings, user_settings_file

if TYPE_CHECKING:
    from ..core.tool_call import ToolCall

ACCEPT_EDITS_GRANT = "mode:acceptEdits"
"""The session grant "Always allow" adds for a file edit inside the working directory."""

SESSION = "session"


@dataclass
class DecisionRecord:
    """One permission decision, for ``%agent config``, ``current_session().runs`` and tests."""

    tool_name: str
    tool_use_id: str
    input: dict[str, Any]
    behavior: str
    decided_by: str
    rule: str | None = None
    message: str = ""
    rule_added: str | None = None
    at: float = field(default_factory=time.time)


class PermissionContext:
    """Rules, mode and decision log of a session (``ToolUseContext.permissions``)."""

    def __init__(
        self,
        *,
        cwd: str | os.PathLike[str] | None = None,
        mode: Mode | str | None = None,
        allow: Iterable[str] = (),
        deny: Iterable[str] = (),
        ask: Iterable[str] = (),
        source: str = "agent",
    ) -> None:
        self._pinned_cwd = Path(os.path.realpath(os.fspath(cwd))) if cwd is not None else None
        self._live_cwd: tuple[str, Path] | None = None
        self.base_mode: Mode = parse_mode(mode) if mode is not None else "default"
        self.rules: list[RuleEntry] = []
        self.decisions: list[DecisionRecord] = []
        self.settings: Settings | None = None
        """The project settings file (the working directory's ``.toolagent/settings.json``)."""
        self.user_settings: Settings | None = None
        """The user's settings file in their config directory."""
        self._notices: list[str] = []
        self._accept_edits_granted = False
        self.add_rules({"allow": allow, "deny": deny, "ask": ask}, source=source)

    @classmethod
    def from_sources(
        cls,
        cwd: str | os.PathLike[str] | None = None,
        mode: Mode | str | None = None,
        *,
        flag: Mapping[str, Iterable[str]] | None = None,
        agent: Mapping[str, Iterable[str]] | None = None,
        config: Mapping[str, Iterable[str]] | None = None,
        settings: bool | str | os.PathLike[str] = True,
    ) -> "PermissionContext":
        """Merge every source. ``settings``: True reads the user's settings file and then the
        working directory's ``.toolagent/settings.json`` (never a parent directory's), a path
        loads that one project file, False loads none. An explicit ``mode`` wins over the
        settings files'. ``cwd`` None: the working directory is the process's current
        directory at each decision. Raises `RuleSyntaxError` / `SettingsFileError`."""
        perms = cls(cwd=cwd)
        if settings is True:
            user = user_settings_file()
            if user is not None:
                perms.load_user_settings(user)
        if settings is not False:
            path = find_settings_file(perms.cwd) if settings is True else Path(settings)
            if path is not None:
                perms.load_settings(path)
        for source, rules in (("config", config), ("agent", agent), ("flag", flag)):
            if rules:
                perms.add_rules(rules, source=source)
        if mode is not None:
            perms.base_mode = parse_mode(mode)
        return perms

    # --- working directory -------------------------------------------------------------------
    @property
    def cwd(self) -> Path:
        """The directory relative rules, acceptEdits and read-only checks are anchored at: the
        one given when the context was made, else the process's current directory *now* (a
        ``%cd`` between cells, or a ``os.chdir`` between requests, moves it)."""
        if self._pinned_cwd is not None:
            return self._pinned_cwd
        now = os.getcwd()
        if self._live_cwd is None or self._live_cwd[0] != now:
            self._live_cwd = (now, Path(os.path.realpath(now)))
        return self._live_cwd[1]

    @cwd.setter
    def cwd(self, value: str | os.PathLike[str] | None) -> None:
        self._pinned_cwd = Path(os.path.realpath(os.fspath(value))) if value is not None else None

    # --- mode -----------------------------------------------------------------------------
    @property
    def mode(self) -> Mode:
        """The effective mode: the base mode, lifted to acceptEdits by a session grant."""
        if self._accept_edits_granted and self.base_mode == "default":
            return "acceptEdits"
        return self.base_mode

    def grant_session_mode(self) -> str:
        """"Always allow" on a file edit: allow edits inside the working directory from now on."""
        self._accept_edits_granted = True
        return ACCEPT_EDITS_GRANT

    # --- rules ----------------------------------------------------------------------------
    def add_rules(
        self, rules: Mapping[str, Iterable[str] | str | None], *, source: str, base_dir: Path | None = None
    ) -> list[RuleEntry]:
        """Add ``{"allow": [...], "deny": [...], "ask": [...]}``: all of them, or none if one
        does not parse (the first bad rule is raised). Returns the entries added."""
        unknown = set(rules) - set(BEHAVIORS)
        if unknown:
            raise ValueError(f"unknown rule behaviours {sorted(unknown)}; use allow, deny or ask")
        entries: list[RuleEntry] = []
        for behavior in BEHAVIORS:
            texts = rules.get(behavior) or ()
            if isinstance(texts, str):
                texts = (texts,)
            for text in texts:
                entries.append(RuleEntry(parse_rule(text), behavior, source, base_dir))
        self.rules.extend(entries)
        return entries

    def add_rule(self, rule: str, behavior: RuleBehavior = "allow", *, source: str = SESSION,
                 base_dir: Path | None = None) -> RuleEntry:
        if behavior not in BEHAVIORS:
            raise ValueError(f"unknown rule behaviour {behavior!r}; use allow, deny or ask")
        entry = RuleEntry(parse_rule(rule), behavior, source, base_dir)
        self.rules.append(entry)
        return entry

    def entries(self, behavior: RuleBehavior) -> list[RuleEntry]:
        return [e for e in self.rules if e.behavior == behavior]

    def load_settings(self, path: str | os.PathLike[str]) -> Settings:
        """Load a settings file: its rules (relative patterns resolved against its project
        directory) and its mode."""
        settings = load_settings(path)
        self.add_rules(settings.permissions.model_dump(), source="settings", base_dir=settings.project_dir)
        if settings.mode is not None:
            self.base_mode = settings.mode
        self.settings = settings
        widened = settings.widening()
        if widened:
            self._notices.append(
                f"The project settings file {settings.path} widens permissions: {'; '.join(widened)}. "
                "It applies to this session; remove it or edit it if you did not put it there."
            )
        return settings

    def load_user_settings(self, path: str | os.PathLike[str]) -> Settings:
        """Load the user's own settings file (rules with relative patterns are anchored at the
        working directory; the project file, read after it, wins on mode)."""
        settings = load_settings(path)
        self.add_rules(settings.permissions.model_dump(), source="user settings")
        if settings.mode is not None:
            self.base_mode = settings.mode
        self.user_settings = settings
        return settings

    @property
    def sandbox_settings(self) -> SandboxSettings:
        """``"sandbox"`` of the user's file, with each key the project file sets on top."""
        merged = SandboxSettings()
        for settings in (self.user_settings, self.settings):
            if settings is not None:
                section = settings.sandbox
                merged = merged.model_copy(update={k: getattr(section, k) for k in section.model_fields_set})
        return merged

    def take_notices(self) -> list[str]:
        """Announcements not yet shown (a widening project settings file): each is returned
        once per session, for the first run to show in its cell."""
        notices, self._notices = self._notices, []
        return notices

    # --- session rules ("Always allow") -----------------------------------------------------
    def add_session_rule(self, rule: str, behavior: RuleBehavior = "allow") -> RuleEntry:
        """Add a rule for the rest of the session (no duplicate of an existing session rule)."""
        parsed = parse_rule(rule)
        for entry in self.rules:
            if entry.source == SESSION and entry.behavior == behavior and entry.rule == parsed:
                return entry
        return self.add_rule(rule, behavior, source=SESSION)

    @property
    def session_rules(self) -> list[str]:
        """Session rules as text: allow rules as written, others ``deny:…`` / ``ask:…``, and
        ``mode:acceptEdits`` for the edit grant."""
        texts = [str(e.rule) if e.behavior == "allow" else f"{e.behavior}:{e.rule}"
                 for e in self.rules if e.source == SESSION]
        if self._accept_edits_granted:
            texts.append(ACCEPT_EDITS_GRANT)
        return texts

    def remove_session_rule(self, text: str) -> bool:
        """Remove a session rule given as `session_rules` lists it; False if there is none."""
        text = text.strip()
        if text == ACCEPT_EDITS_GRANT:
            granted, self._accept_edits_granted = self._accept_edits_granted, False
            return granted
        try:
            behavior, rule = parse_rule_text(text)
        except RuleSyntaxError:
            return False
        for entry in self.rules:
            if entry.source == SESSION and entry.behavior == behavior and entry.rule == rule:
                self.rules.remove(entry)
                return True
        return False

    # --- decisions --------------------------------------------------------------------------
    def record(self, tool_name: str, tool_use_id: str, input: dict[str, Any], behavior: str, decided_by: str,
               *, rule: str | None = None, message: str = "", rule_added: str | None = None) -> DecisionRecord:
        record = DecisionRecord(tool_name, tool_use_id, dict(input), behavior, decided_by, rule, message, rule_added)
        self.decisions.append(record)
        return record

    def record_decision(self, call: "ToolCall", decision: PermissionDecision) -> DecisionRecord:
        """The decision log of `core.permission_types.PermissionState`: one record per call,
        whoever decided it (the rule engine, a person, or a PreToolUse hook's deny)."""
        return self.record(call.name, call.tool_use_id, call.observable, decision.behavior, decision.decided_by,
                           rule=decision.rule, message=decision.message, rule_added=decision.rule_added)

    # --- views ------------------------------------------------------------------------------
    def describe(self) -> str:
        """Plain text for ``%agent config``: mode, working directory, settings file, rules."""
        mode = self.mode if self.mode == self.base_mode else f"{self.mode} (base {self.base_mode}, session grant)"
        lines = [f"mode: {mode}", f"working directory: {self.cwd}"]
        where = self.settings.path if self.settings is not None else None
        lines.append(f"settings file: {where if where is not None else '(none)'}")
        if self.user_settings is not None:
            lines.append(f"user settings file: {self.user_settings.path}")
        for behavior in ("deny", "ask", "allow"):
            entries = self.entries(behavior)
            lines.append(f"{behavior} rules:" + ("" if entries else " (none)"))
            lines.extend(f"  {e.rule}  [{e.source}]" for e in entries)
        session = self.session_rules
        lines.append("session rules: " + (", ".join(session) if session else "(none)"))
        return "\n".join(lines)

    def __repr__(self) -> str:
        counts = ", ".join(f"{b}={len(self.entries(b))}" for b in BEHAVIORS)
        return f"PermissionContext(cwd={str(self.cwd)!r}, mode={self.mode!r}, {counts})"
