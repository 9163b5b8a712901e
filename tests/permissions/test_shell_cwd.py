"""Each part of a compound command is checked in the directory it runs in (`shell_cwd`).

Without this, ``cd / && cd pr?c/self && cat envir?n`` under ``Bash(cd:*)`` and
``Bash(cat:*)`` was allowed: the last part was checked against the project directory, where
``envir?n`` is a harmless name, and run in ``/proc/self``, where it is the kernel's environment
(the API key). Commands are only classified here; none runs.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fakes import BASH, make_ctx

from jupyter_toolagent.permissions import PermissionContext, is_read_only_command
from jupyter_toolagent.permissions.engine import decide_input
from jupyter_toolagent.permissions.shell.parse import try_parse
from jupyter_toolagent.permissions.shell.cwd import part_directories


def directories(command: str, cwd: str | None) -> list[str | None] | None:
    parsed = try_parse(command)
    assert parsed is not None, command
    return part_directories(parsed, cwd)


def test_directories_follow_cd_in_order(project: Path) -> None:
    here = str(project)
    assert directories("ls", here) == [here]
    assert directories("cd data && ls && cat a.csv", here) == [here, f"{here}/data", f"{here}/data"]
    assert directories("cd / && cd pr?c && cat x", here) == [here, "/", "/proc"]
    assert directories("cd /etc; cd ..; ls", here) == [here, "/etc", "/"]
    assert directories("pushd data && ls", here) == [here, f"{here}/data"]
    assert directories("cd && ls", here) == [here, os.path.realpath(os.path.expanduser("~"))]
    assert directories("cd da*a && ls", here) == [here, f"{here}/data"]  # a glob the shell would expand
    (project / "link").symlink_to(project / "data")
    assert directories("cd link && ls", here) == [here, f"{here}/data"]  # where the shell ends up


@pytest.mark.parametrize("command", ["cd - && cat x", "popd; cat x", "cd $DIR && cat x", "cd \"$(pwd)\" && cat x",
                                     "pushd +1 && cat x", "pushd && cat x", "cd no?such*dir && cat x",
                                     "cd /*/*/*/x? && cat y"])  # the last: not expanded (too much to walk)
def test_a_change_nobody_can_follow_is_said(command: str, project: Path) -> None:
    assert directories(command, str(project)) is None


def test_without_a_working_directory_only_absolute_changes_are_followed() -> None:
    assert directories("ls", None) == [None]
    assert directories("cd /etc && ls", None) == [None, "/etc"]
    assert directories("cd data && ls", None) is None


# --- through the engine -----------------------------------------------------------------------------

CD_AND_CAT = ("Bash(cd:*)", "Bash(cat:*)", "Bash(grep:*)")


@pytest.mark.asyncio
@pytest.mark.parametrize("command", [
    "cd / && cd pr?c && cd self && cat env*",
    "cd / && cd pr?c/self && cat envir?n",
    "cd /etc && cd .. && cd pr[o]c/self && cat e*n",
    "cd / && grep -r API_KEY .",
    "cd / ; cd pr?c ; grep -ra KEY */environ",
    "cd - && cat envir?n",
    "cd \"$OLDPWD\" && cat envir?n",
])
async def test_allow_rules_do_not_reach_proc_through_a_change_of_directory(command: str, project: Path) -> None:
    perms = PermissionContext(cwd=project, allow=CD_AND_CAT)
    decision = await decide_input(BASH, {"command": command}, make_ctx(perms))
    assert decision.behavior == "ask", (command, decision)


@pytest.mark.asyncio
@pytest.mark.parametrize("command", ["cd data && cat a.csv", "cd /etc && cat hostname", "cd data; cat ../notes.txt",
                                     "cd data && grep -c 1 a.csv"])
async def test_everyday_changes_of_directory_are_allowed(command: str, project: Path) -> None:
    perms = PermissionContext(cwd=project, allow=CD_AND_CAT)
    decision = await decide_input(BASH, {"command": command}, make_ctx(perms))
    assert decision.behavior == "allow", (command, decision)


def test_read_only_follows_the_directory_too(project: Path) -> None:
    (project / "lp").symlink_to("/proc")
    here = str(project)
    assert is_read_only_command("cd data && ls && cat a.csv", here)
    for command in ("cd l? && cd self && cat envir?n", "cd l?/self && grep -a KEY envir?n", "cd l? && grep -r KEY .",
                    "cd - && ls"):
        assert not is_read_only_command(command, here), command
