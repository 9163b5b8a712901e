"""Where settings come from (the working directory's file and the user's, never a parent's), the
``"sandbox"`` section, the announcement of a widening project file, and the working directory
that follows the process's current directory."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_toolagent import Agent
from jupyter_toolagent.core.events import NoticeEvent
from jupyter_toolagent.errors import SettingsFileError
from jupyter_toolagent.models import ScriptedModel
from jupyter_toolagent.permissions import PermissionContext, load_settings


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def user_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "user-config"
    monkeypatch.setenv("TOOLAGENT_CONFIG_DIR", str(directory))
    return directory


def test_the_users_settings_file_is_read_and_the_project_file_wins_on_mode(tmp_path: Path, user_dir: Path) -> None:
    write(user_dir / "settings.json", {"mode": "plan", "permissions": {"deny": ["Bash(rm:*)"]},
                                       "sandbox": {"network": False, "write": ["/srv"]}})
    project = tmp_path / "project"
    write(project / ".toolagent" / "settings.json", {"mode": "acceptEdits", "sandbox": {"write": ["out"]}})
    perms = PermissionContext.from_sources(cwd=project)
    assert perms.mode == "acceptEdits"
    assert [(str(e.rule), e.source) for e in perms.entries("deny")] == [("Bash(rm:*)", "user settings")]
    merged = perms.sandbox_settings
    assert (merged.network, merged.write, merged.required) == (False, ["out"], True)  # key by key, project on top
    assert "user settings file:" in perms.describe()
    only_user = PermissionContext.from_sources(cwd=tmp_path)
    assert only_user.mode == "plan" and only_user.settings is None


@settings(max_examples=30, deadline=None)
@given(depth=st.integers(min_value=1, max_value=4),
       data=st.sampled_from([{"mode": "bypassPermissions"}, {"permissions": {"allow": ["Bash"]}},
                             {"sandbox": {"required": False}}]))
def test_no_parent_directorys_settings_file_is_ever_read(tmp_path_factory: pytest.TempPathFactory,
                                                         depth: int, data: dict[str, Any]) -> None:
    root = tmp_path_factory.mktemp("parents")
    write(root / ".toolagent" / "settings.json", data)
    nested = root.joinpath(*[f"d{i}" for i in range(depth)])
    nested.mkdir(parents=True)
    perms = PermissionContext.from_sources(cwd=nested)
    assert (perms.settings, perms.mode, perms.rules) == (None, "default", [])
    assert perms.sandbox_settings.required


def test_sandbox_section_keys_are_checked(tmp_path: Path) -> None:
    path = write(tmp_path / ".toolagent" / "settings.json", {"sandbox": {"netwrok": True, "write": "x"}})
    with pytest.raises(SettingsFileError) as info:
        load_settings(path)
    text = str(info.value)
    assert "field 'sandbox.netwrok': unknown key; did you mean 'network'? (expected network, write or required)" in text
    assert "field 'sandbox.write'" in text


@pytest.mark.parametrize("data, widened", [
    ({"mode": "bypassPermissions"}, "mode bypassPermissions"),
    ({"permissions": {"allow": ["Bash(make:*)"]}}, "allow rules Bash(make:*)"),
    ({"sandbox": {"write": ["/data"]}}, "sandbox write directories /data"),
    ({"sandbox": {"required": False}}, '"sandbox": {"required": false}'),
])
def test_what_widens_permissions(tmp_path: Path, data: dict[str, Any], widened: str) -> None:
    assert load_settings(write(tmp_path / "s.json", data)).widening() == [widened]


def test_what_does_not_widen(tmp_path: Path) -> None:
    data = {"mode": "default", "permissions": {"deny": ["Bash"], "ask": ["Read"]}, "sandbox": {"network": False}}
    assert load_settings(write(tmp_path / "s.json", data)).widening() == []


@pytest.mark.asyncio
async def test_a_widening_project_file_is_announced_in_the_first_run_only(tmp_path: Path, user_dir: Path) -> None:
    write(tmp_path / ".toolagent" / "settings.json", {"mode": "acceptEdits", "permissions": {"allow": ["Read"]}})
    agent = Agent(ScriptedModel(["one", "two"]), cwd=tmp_path)
    first = await agent.run("a")
    second = await agent.run("b")
    notices = [e.text for e in first.events if isinstance(e, NoticeEvent)]
    assert len(notices) == 1 and "widens permissions: mode acceptEdits; allow rules Read" in notices[0]
    assert str(tmp_path / ".toolagent" / "settings.json") in notices[0]
    assert not [e for e in second.events if isinstance(e, NoticeEvent)]


def test_the_working_directory_follows_the_current_directory_unless_pinned(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    live = PermissionContext.from_sources(settings=False)
    pinned = PermissionContext(cwd=tmp_path / "a")
    assert live.cwd == pinned.cwd == (tmp_path / "a").resolve()
    os.chdir(tmp_path / "b")
    assert live.cwd == (tmp_path / "b").resolve() and pinned.cwd == (tmp_path / "a").resolve()
