"""The settings file, merging rule sources, session rules and grants, and `describe`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fakes import BASH, EDIT, make_ctx

from jupyter_toolagent.errors import ConfigError, RuleSyntaxError, SettingsFileError
from jupyter_toolagent.permissions import (
    ACCEPT_EDITS_GRANT,
    MODES,
    PermissionContext,
    Settings,
    find_settings_file,
    load_settings,
    parse_mode,
)
from jupyter_toolagent.permissions.engine import decide_input


def write_settings(directory: Path, data: Any) -> Path:
    path = directory / ".toolagent" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


# --- modes ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "mode"), [("default", "default"), ("acceptEdits", "acceptEdits"),
                                            ("ACCEPTEDITS", "acceptEdits"), ("accept-edits", "acceptEdits"),
                                            (" plan ", "plan"), ("bypass", "bypassPermissions"),
                                            ("dontask", "dontAsk"), ("dont-ask", "dontAsk")])
def test_parse_mode(text: str, mode: str) -> None:
    assert parse_mode(text) == mode


def test_unknown_mode_lists_the_modes() -> None:
    with pytest.raises(ConfigError) as info:
        parse_mode("yolo")
    assert "'yolo'" in str(info.value) and all(m in str(info.value) for m in MODES)


# --- settings file ---------------------------------------------------------------------------------------

def test_settings_file_is_read_from_the_working_directory_only(tmp_path: Path) -> None:
    """A parent's ``.toolagent/`` (a world-writable /tmp, a cloned repository around the
    notebook) is never read: it could set the mode and allow rules without anyone noticing."""
    path = write_settings(tmp_path, {"mode": "bypassPermissions", "permissions": {"allow": ["Bash"]}})
    nested = tmp_path / "a" / "b"
    nested.mkdir(parents=True)
    assert find_settings_file(tmp_path) == path.resolve()
    assert find_settings_file(nested) is None and find_settings_file(tmp_path / "a") is None
    perms = PermissionContext.from_sources(cwd=nested)
    assert perms.mode == "default" and perms.entries("allow") == [] and perms.settings is None


def test_no_settings_file(tmp_path: Path) -> None:
    assert find_settings_file(tmp_path) is None or not str(find_settings_file(tmp_path)).startswith(str(tmp_path))


def test_load_settings(tmp_path: Path) -> None:
    path = write_settings(tmp_path, {"permissions": {"allow": ["Read(./data/**)"], "deny": [], "ask": ["Bash"]},
                                     "mode": "acceptEdits", "$schema": "https://example.invalid/s.json"})
    settings = load_settings(path)
    assert isinstance(settings, Settings)
    assert settings.permissions.allow == ["Read(./data/**)"] and settings.permissions.ask == ["Bash"]
    assert settings.mode == "acceptEdits"
    assert settings.model_extra is None  # unknown keys are refused, "$schema" is the one extra allowed
    assert settings.project_dir == tmp_path


@pytest.mark.parametrize(("data", "problems"), [
    ("{not json", ["is not valid JSON", "line 1"]),
    ("[]", ["must contain a JSON object, not an array"]),
    ({"permissions": {"deny": ["Bash(rm:*)", "Bash(("]}},
     ["field 'permissions.deny[1]': invalid permission rule 'Bash(('"]),
    ({"permissions": {"alow": ["Bash"]}}, ["field 'permissions.alow': unknown key; did you mean 'allow'?"]),
    ({"permisions": {"deny": ["Bash(rm:*)"]}}, ["field 'permisions': unknown key; did you mean 'permissions'?"]),
    ({"theme": "dark"}, ["field 'theme': unknown key (expected permissions, mode, sandbox, mcpServers, enableProjectMcpServers, agents or $schema)"]),
    ({"permissions": {"allow": "Bash"}}, ["field 'permissions.allow'"]),
    ({"permissions": {"allow": [1]}}, ["field 'permissions.allow[0]'"]),
    ({"mode": "yolo"}, ["field 'mode'", "unknown permission mode 'yolo'"]),
    ({"permissions": {"deny": ["", "Bash)"], "ask": ["x y"]}},
     ["field 'permissions.deny[0]'", "field 'permissions.deny[1]'", "field 'permissions.ask[0]'"]),
])
def test_settings_errors_name_file_and_field(tmp_path: Path, data: Any, problems: list[str]) -> None:
    path = write_settings(tmp_path, data)
    with pytest.raises(SettingsFileError) as info:
        load_settings(path)
    text = str(info.value)
    for problem in problems:
        assert problem in text
    lines = text.splitlines()
    assert all(line.startswith(f"{path}: ") for line in lines)
    assert isinstance(info.value, ConfigError)


def test_every_problem_is_one_line(tmp_path: Path) -> None:
    path = write_settings(tmp_path, {"permissions": {"deny": ["(", ")"], "typo": []}, "mode": 3})
    with pytest.raises(SettingsFileError) as info:
        load_settings(path)
    assert len(info.value.problems) == 4  # type: ignore[attr-defined]


def test_unreadable_settings_file(tmp_path: Path) -> None:
    path = write_settings(tmp_path, "{}")
    path.write_bytes(b"\xff\xfe{")
    with pytest.raises(SettingsFileError, match="UTF-8"):
        load_settings(path)


# --- PermissionContext ---------------------------------------------------------------------------------

def test_from_sources_merges_every_source(tmp_path: Path) -> None:
    write_settings(tmp_path, {"permissions": {"deny": ["Bash(rm:*)"]}, "mode": "acceptEdits"})
    perms = PermissionContext.from_sources(cwd=tmp_path, flag={"allow": ["Bash(ls:*)"]},
                                           agent={"ask": ["RunPython"]}, config={"allow": ["Read"]})
    assert {(str(e.rule), e.behavior, e.source) for e in perms.rules} == {
        ("Bash(rm:*)", "deny", "settings"), ("Bash(ls:*)", "allow", "flag"),
        ("RunPython", "ask", "agent"), ("Read", "allow", "config")}
    assert perms.base_mode == "acceptEdits"
    assert perms.settings is not None


def test_explicit_mode_wins_over_the_settings_file(tmp_path: Path) -> None:
    write_settings(tmp_path, {"mode": "plan"})
    assert PermissionContext.from_sources(cwd=tmp_path, mode="dontAsk").base_mode == "dontAsk"
    assert PermissionContext.from_sources(cwd=tmp_path, settings=False).base_mode == "default"


def test_from_sources_with_an_explicit_settings_path(tmp_path: Path) -> None:
    path = write_settings(tmp_path / "elsewhere", {"permissions": {"ask": ["Bash"]}})
    perms = PermissionContext.from_sources(cwd=tmp_path, settings=path)
    assert [str(e.rule) for e in perms.entries("ask")] == ["Bash"]


def test_invalid_settings_fail_from_sources(tmp_path: Path) -> None:
    write_settings(tmp_path, {"permissions": {"deny": ["Bash(("]}})
    with pytest.raises(SettingsFileError):
        PermissionContext.from_sources(cwd=tmp_path)


@pytest.mark.asyncio
async def test_settings_rules_are_relative_to_the_project_directory(tmp_path: Path) -> None:
    write_settings(tmp_path, {"permissions": {"deny": ["Edit(./data/**)"]}})
    notebook_dir = tmp_path / "notebooks"
    notebook_dir.mkdir()
    perms = PermissionContext.from_sources(cwd=notebook_dir, settings=tmp_path / ".toolagent" / "settings.json")
    ctx = make_ctx(perms)
    assert (await decide_input(EDIT, {"path": str(tmp_path / "data" / "x.csv")}, ctx)).behavior == "deny"
    assert (await decide_input(EDIT, {"path": "data/x.csv"}, ctx)).behavior == "ask"  # notebooks/data is not covered


def test_add_rules_is_all_or_nothing(perms: PermissionContext) -> None:
    with pytest.raises(RuleSyntaxError):
        perms.add_rules({"allow": ["Bash(ls:*)"], "deny": ["Bash(("]}, source="flag")
    assert perms.rules == []
    with pytest.raises(ValueError, match="unknown rule behaviours"):
        perms.add_rules({"permit": ["Bash"]}, source="flag")


def test_add_rules_returns_the_entries_for_removal(perms: PermissionContext) -> None:
    perms.add_rules({"allow": ["Bash(ls:*)"]}, source="config")
    added = perms.add_rules({"allow": ["Bash(ls:*)"], "deny": "RunPython"}, source="flag")
    assert [(str(e.rule), e.behavior) for e in added] == [("Bash(ls:*)", "allow"), ("RunPython", "deny")]
    for entry in added:
        perms.rules.remove(entry)
    assert [(str(e.rule), e.source) for e in perms.rules] == [("Bash(ls:*)", "config")]


def test_constructor_rules_and_mode(project: Path) -> None:
    perms = PermissionContext(cwd=project, mode="plan", allow=["Read"], deny=["Bash"], ask=["Edit"], source="agent")
    assert perms.mode == "plan" and perms.cwd == project
    assert [len(perms.entries(b)) for b in ("allow", "deny", "ask")] == [1, 1, 1]
    with pytest.raises(ConfigError):
        PermissionContext(cwd=project, mode="nope")


def test_session_rules_and_grants(perms: PermissionContext) -> None:
    perms.add_session_rule("Bash(git push:*)")
    perms.add_session_rule("Bash(git push:*)")  # no duplicate
    perms.add_session_rule("Bash(rm:*)", "deny")
    assert perms.grant_session_mode() == ACCEPT_EDITS_GRANT
    assert perms.session_rules == ["Bash(git push:*)", "deny:Bash(rm:*)", "mode:acceptEdits"]
    assert perms.mode == "acceptEdits" and perms.base_mode == "default"
    assert perms.remove_session_rule("deny:Bash(rm:*)")
    assert perms.remove_session_rule("mode:acceptEdits")
    assert not perms.remove_session_rule("mode:acceptEdits")
    assert not perms.remove_session_rule("Bash(nothing:*)")
    assert not perms.remove_session_rule("Bash((")
    assert perms.session_rules == ["Bash(git push:*)"] and perms.mode == "default"


def test_session_rule_removal_leaves_other_sources(perms: PermissionContext) -> None:
    perms.add_rules({"allow": ["Bash(ls:*)"]}, source="flag")
    perms.add_session_rule("Bash(ls:*)")
    assert perms.remove_session_rule("Bash(ls:*)")
    assert [e.source for e in perms.rules] == ["flag"]


def test_record_and_describe(perms: PermissionContext) -> None:
    perms.add_rules({"deny": ["Bash(rm:*)"], "allow": ["Read"]}, source="flag")
    perms.add_session_rule("Bash(ls:*)")
    perms.grant_session_mode()
    record = perms.record("Bash", "toolu_1", {"command": "ls"}, "allow", "read_only")
    assert perms.decisions == [record] and record.at > 0
    text = perms.describe()
    assert "mode: acceptEdits (base default, session grant)" in text
    assert f"working directory: {perms.cwd}" in text
    assert "settings file: (none)" in text
    assert "Bash(rm:*)  [flag]" in text and "Read  [flag]" in text
    assert "session rules: Bash(ls:*), mode:acceptEdits" in text
    assert "ask rules: (none)" in text
    assert "deny=1" in repr(perms) and "acceptEdits" in repr(perms)


@pytest.mark.asyncio
async def test_bash_rules_from_settings(tmp_path: Path) -> None:
    write_settings(tmp_path, {"permissions": {"allow": ["Bash(make test)"]}})
    perms = PermissionContext.from_sources(cwd=tmp_path)
    assert (await decide_input(BASH, {"command": "make test"}, make_ctx(perms))).behavior == "allow"
