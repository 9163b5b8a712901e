"""The settings files: the project's ``.toolagent/settings.json`` and the user's (SPEC §5.2).

    {"permissions": {"allow": [], "deny": [], "ask": []}, "mode": "default",
     "sandbox": {"network": true, "write": ["../shared"], "required": true}}

Two files are read, and no other: the user's own ``settings.json`` in the user's config
directory (``$TOOLAGENT_CONFIG_DIR``, else ``$XDG_CONFIG_HOME/toolagent``, else
``~/.config/toolagent``) and the working directory's ``.toolagent/settings.json``. Parent
directories are never searched: a world-writable ``/tmp/.toolagent/`` or a cloned repository
around the notebook would otherwise choose the mode and the allow rules without anyone
noticing. A project file that widens permissions is announced (`widening`).

A broken file must never be half-applied: every problem is collected and reported at once,
each as ``<file>: field 'permissions.deny[1]': …``, and the run does not start (a deny rule
that silently failed to load would be worse than no run).

Unknown keys are errors at every level (``"alow"`` or ``"permisions"`` is a typo that would
drop rules), with the key it most likely meant.
"""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..core.validation import field_path, json_type_name
from ..errors import ConfigError, RuleSyntaxError, SettingsFileError
from .modes import Mode, parse_mode
from .rules import parse_rule

SETTINGS_DIR = ".toolagent"
SETTINGS_NAME = "settings.json"


class AgentEntry(BaseModel):
    """One ``"agents"`` entry: a sub-agent definition (SPEC §12). ``tools``: names of the
    caller's tools, or ``"read_only"``; absent: all of them."""

    model_config = ConfigDict(extra="forbid")

    description: str = ""
    system: Optional[str] = None
    tools: Optional[list[str] | Literal["read_only"]] = None
    model: Optional[str] = None
    max_turns: int = Field(default=20, ge=1)


class PermissionLists(BaseModel):
    model_config = ConfigDict(extra="forbid")

    allow: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)
    ask: list[str] = Field(default_factory=list)


class SandboxSettings(BaseModel):
    """``"sandbox"``: how approved and rule-allowed Bash commands are confined (SPEC §5.5).

    ``network``: whether they may use the network (commands allowed only because they look
    read-only never may). ``write``: directories they may write besides the working
    directory (relative to the project directory). ``required``: where no sandbox works,
    false lets read-only commands still be auto-allowed, unsandboxed."""

    model_config = ConfigDict(extra="forbid")

    network: bool = True
    write: list[str] = Field(default_factory=list)
    required: bool = True


class Settings(BaseModel):
    """A parsed settings file. ``path`` is where it was read from (None if built in code);
    `project_dir` is the directory that holds ``.toolagent/``: relative file patterns in its
    rules are resolved against it, not against the notebook's directory.

    Unknown keys are refused at every level: a misspelled ``"permisions"`` would otherwise load
    as a file without rules, and the person's deny rules would silently not apply. ``$schema``
    (editors' JSON-schema hint) is the one extra key accepted."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: Optional[str] = Field(default=None, alias="$schema", exclude=True)

    permissions: PermissionLists = Field(default_factory=PermissionLists)
    mode: Optional[Mode] = None
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    mcp_servers: Optional[dict[str, Any]] = Field(default=None, alias="mcpServers")
    """MCP servers (SPEC §11); each entry is checked by `jupyter_toolagent.mcp.config`."""
    enable_project_mcp_servers: bool = Field(default=False, alias="enableProjectMcpServers")
    agents: Optional[dict[str, AgentEntry]] = None
    """Sub-agent definitions (SPEC §12): ``{NAME: {"description", "system", "tools", "model", "max_turns"}}``."""
    path: Optional[Path] = Field(default=None, exclude=True)

    @field_validator("mode", mode="before")
    @classmethod
    def _mode(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        try:
            return parse_mode(value)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None

    @property
    def project_dir(self) -> Path | None:
        return None if self.path is None else self.path.parent.parent


    def widening(self) -> list[str]:
        """What in this file grants more than the defaults do (a mode other than default,
        allow rules, sandbox write directories, an unsandboxed opt-out), in words."""
        found = []
        if self.mode is not None and self.mode != "default":
            found.append(f"mode {self.mode}")
        if self.permissions.allow:
            found.append("allow rules " + ", ".join(self.permissions.allow))
        if self.sandbox.write:
            found.append("sandbox write directories " + ", ".join(self.sandbox.write))
        if not self.sandbox.required:
            found.append('"sandbox": {"required": false}')
        return found


def find_settings_file(cwd: str | os.PathLike[str]) -> Path | None:
    """``cwd``'s own ``.toolagent/settings.json``, if there is one (never a parent's)."""
    candidate = Path(os.path.realpath(os.fspath(cwd))) / SETTINGS_DIR / SETTINGS_NAME
    return candidate if candidate.is_file() else None


USER_DIR_ENV = "TOOLAGENT_CONFIG_DIR"


def user_settings_file() -> Path | None:
    """The user's ``settings.json`` in their config directory, if there is one."""
    explicit = os.environ.get(USER_DIR_ENV)
    if explicit:
        directory = Path(explicit).expanduser()
    else:
        xdg = os.environ.get("XDG_CONFIG_HOME")
        directory = (Path(xdg) if xdg else Path.home() / ".config") / "toolagent"
    candidate = directory / SETTINGS_NAME
    return candidate if candidate.is_file() else None


def load_settings(path: str | os.PathLike[str]) -> Settings:
    """Read and validate one settings file; raise one `SettingsFileError` listing every problem."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise _error(path, [f"cannot be read ({exc.strerror or exc})"]) from None
    except UnicodeDecodeError as exc:
        raise _error(path, [f"is not UTF-8 text ({exc.reason})"]) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _error(path, [f"is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"]) from None
    if not isinstance(data, dict):
        raise _error(path, [f"must contain a JSON object, not {_json_type(data)}"])
    problems: list[str] = []
    try:
        settings = Settings.model_validate(data)
    except ValidationError as exc:
        problems.extend(_describe(err) for err in exc.errors(include_url=False))
        settings = None
    problems.extend(_rule_problems(data.get("permissions")))
    if problems:
        raise _error(path, problems)
    assert settings is not None
    settings.path = path
    return settings


def _rule_problems(section: Any) -> list[str]:
    """Each rule that does not parse (checked even when other fields are wrong, so one run of
    the file shows every problem)."""
    if not isinstance(section, dict):
        return []
    problems = []
    for behavior in ("allow", "deny", "ask"):
        rules = section.get(behavior)
        for i, rule in enumerate(rules if isinstance(rules, list) else []):
            if not isinstance(rule, str):
                continue  # reported by the schema
            try:
                parse_rule(rule)
            except RuleSyntaxError as err:
                problems.append(f"field 'permissions.{behavior}[{i}]': {err}")
    return problems


def _error(path: Path, problems: list[str]) -> SettingsFileError:
    lines = [f"{path}: {p}" for p in problems]
    error = SettingsFileError("\n".join(lines))
    # the file and its problems ride on the error for callers that show them
    error.path = path  # type: ignore[attr-defined]
    error.problems = lines  # type: ignore[attr-defined]
    return error


def _describe(err: Any) -> str:
    where = field_path(tuple(err.get("loc", ())), root="(top level)")
    kind = err.get("type", "")
    if kind == "extra_forbidden":
        loc = tuple(err.get("loc", ()))
        expected = _TOP_LEVEL_KEYS if len(loc) == 1 else _SECTION_KEYS.get(str(loc[0]), ("allow", "deny", "ask"))
        return f"field '{where}': unknown key{_did_you_mean(str(loc[-1]) if loc else '', expected)} " \
               f"(expected {', '.join(expected[:-1])} or {expected[-1]})"
    if kind == "value_error" and "ctx" in err and "error" in err["ctx"]:
        message = str(err["ctx"]["error"])
    else:
        message = err.get("msg", "invalid value")
    given = err.get("input")
    return f"field '{where}': {message} (got {_json_type(given)} {json.dumps(given, default=repr)[:60]})"


_TOP_LEVEL_KEYS = ("permissions", "mode", "sandbox", "mcpServers", "enableProjectMcpServers", "agents", "$schema")
_SECTION_KEYS = {"permissions": ("allow", "deny", "ask"), "sandbox": ("network", "write", "required")}


def _did_you_mean(key: str, expected: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(key.lower(), expected, n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


def _json_type(value: Any) -> str:
    """``a string``, ``an array``… — the JSON type of ``value`` as a sentence says it."""
    name = json_type_name(value)
    if name in ("integer", "number"):
        name = "number"
    if name == "null" or name not in _JSON_NAMES:
        return name
    return ("an " if name[0] in "aeiou" else "a ") + name


_JSON_NAMES = {"boolean", "number", "string", "array", "object"}
