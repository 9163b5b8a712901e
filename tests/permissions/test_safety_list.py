"""The protected list as data (`safety.protected_path_patterns`), matched as patterns, and the
safety check on every part of a command — read-only-classified parts included, so a write the
classifier misreads still asks. Commands are only classified, never run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from classifier_families import NOT_PROTECTED, PROTECTED_EXAMPLES
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_toolagent.permissions import is_read_only_command
from jupyter_toolagent.permissions.shell import readonly as shell_readonly
from jupyter_toolagent.permissions.safety import (
    PROTECTED_PATTERNS,
    check_shell,
    early_path_directories,
    is_protected_path,
    protected_path_globs,
    protected_path_patterns,
    protected_reason,
)
from jupyter_toolagent.permissions.shell.parse import try_parse


@pytest.mark.parametrize("path", PROTECTED_EXAMPLES)
def test_every_protected_place_is_matched(path: str) -> None:
    assert is_protected_path(os.path.expanduser(path)) and is_protected_path(path)


@pytest.mark.parametrize("path", NOT_PROTECTED)
def test_ordinary_paths_are_not(path: str) -> None:
    assert not is_protected_path(path)


_NAME = st.text(alphabet="abcxyz019_-", min_size=1, max_size=8)


@settings(max_examples=300, deadline=None)
@given(root=st.lists(_NAME, max_size=3), pattern=st.sampled_from(PROTECTED_PATTERNS), tail=st.lists(_NAME, max_size=2),
       upper=st.booleans())
def test_patterns_match_at_any_depth_and_in_any_case(root: list[str], pattern: object, tail: list[str],
                                                     upper: bool) -> None:
    """A concrete path for each pattern (wildcards filled in), under any directory for the
    unanchored ones, anything below a protected directory, in either case."""
    concrete = pattern.pattern.replace("*", "x")  # type: ignore[attr-defined]
    base = concrete if concrete.startswith("/") else "/" + "/".join([*root, concrete])
    path = base + ("/" + "/".join(tail) if tail and pattern.directory else "")  # type: ignore[attr-defined]
    assert is_protected_path(path.upper() if upper else path), path


def test_early_path_directories(tmp_path: Path) -> None:
    local = tmp_path / ".local" / "bin"
    path_variable = f"{local}:/opt/tools/bin:/usr/bin:/usr/local/bin"
    assert early_path_directories(path_variable) == (str(local), "/opt/tools/bin")
    globs = protected_path_globs(path_variable)
    assert f"{local}/*" in globs and "/usr/local/bin/*" not in globs and "**/.git/**" in globs
    assert len(protected_path_patterns(path_variable)) == len(PROTECTED_PATTERNS) + 2


def test_early_path_executables_are_protected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{tmp_path}/.local/bin:/usr/bin:/bin")
    assert protected_reason(f"{tmp_path}/.local/bin/git") is not None
    assert protected_reason("/usr/bin/git") is None and protected_reason(f"{tmp_path}/.local/lib/x") is None


def test_the_old_names_still_work() -> None:
    from jupyter_toolagent.permissions.safety import PROTECTED_CONFIG_DIRS, PROTECTED_DIRS, PROTECTED_FILES

    assert ".git" in PROTECTED_DIRS and ".bashrc" in PROTECTED_FILES and ("config", "git") in PROTECTED_CONFIG_DIRS
    assert protected_reason(".git/config") == ".git/ is protected"


# --- every part is checked, read-only or not -------------------------------------------------------------

WRITERS_MISREAD = ["tee", "cp", "dd", "install"]


@pytest.mark.parametrize("program", WRITERS_MISREAD)
@pytest.mark.parametrize("target", [".git/config", "~/.bashrc", ".venv/lib/python3.12/site-packages/x.pth",
                                    ".toolagent/settings.json"])
def test_a_misclassified_write_still_asks(program: str, target: str, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Pretend the classifier wrongly lists a writing program as read-only: the safety check
    still sees the protected file (it no longer skips read-only parts)."""
    monkeypatch.setitem(shell_readonly.READ_ONLY_COMMANDS, program, lambda args: True)
    for command in (f"{program} {target}", f"ls; {program} x {target}", f"cat notes.txt && {program} {target}"):
        assert is_read_only_command(command, str(tmp_path)), "the stub makes it read-only"
        assert check_shell(try_parse(command), command, str(tmp_path)) is not None, command


@pytest.mark.parametrize("command", ["ls .ssh", "du -sh .git", "grep -r x --exclude-dir=.git .", "cat notes.txt",
                                     "git status", "ls -la ~", "find . -path ./.git -prune -o -print"])
def test_reading_commands_that_only_name_a_protected_directory_do_not_ask(command: str, tmp_path: Path) -> None:
    assert check_shell(try_parse(command), command, str(tmp_path)) is None
