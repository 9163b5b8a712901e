"""sed scripts that run commands (``e``, ``s///e``) are opaque to deny rules.

Three layers: the reader on hand-picked scripts; the reader against GNU sed itself, which in
``--sandbox`` mode refuses a script with an ``e`` command or flag *while compiling it* (so
nothing runs: the script is compiled against ``/dev/null`` and refused before any input);
and the engine's decision for a deny rule and an allow rule for sed.

The scripts here are data for the classifier and for a sandboxed sed compile: no shell ever
parses them (``subprocess`` gets a word list).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from fakes import BASH, make_ctx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jupyter_toolagent.permissions import PermissionContext
from jupyter_toolagent.permissions.engine import decide_input
from jupyter_toolagent.permissions.shell.interpreters import inline_program, reads_program_from_input
from jupyter_toolagent.permissions.shell.sed import sed_runs_commands

RUNS = [
    "s/.*/id/e", "1e id", "$e id", "/x/e id", "s/a/b/ge", "s/a/b/gpe", "s|a|b|e", "1~2d;e date", "1{e id\n}",
    "/start/,/end/{p;e id\n}", "s/[^/]/x/ge", "/[/]/e id", "n;n;e id", "x;G;s/\\n/;/e",
    "s/[/]/;a/e",  # a bracket hides the delimiter: the replacement is `;a`, the flag `e`
    "s/x", "s/a/b/ w", "s/[[:alpha:/x/", "k",  # not readable: counted as running commands
]
QUIET = [
    "s/e/x/", "1,5p", "/start/,/end/{s/a/b/;p}", ":a;N;$!ba;s/\\n/ /g", "$!d", "s/x/y/w out.txt", "\\%x%d",
    "0,/re/d", "s/[]/]/x/g", "s/[[:alpha:]/]/x/g;p", "#n\np", "1!G;h;$!d", "l 5;q 2", "/x/I,+3 s/a/b/",
    "s/a/b/3", "/foo/{p;q}", "=",
    "1a hello; 2e id",  # `a` takes the rest of the line as its text
    "y/[/]/;a/e",  # `y` knows no brackets and no flags: then `a` with the text `/e`
]


@pytest.mark.parametrize("script", RUNS)
def test_scripts_that_run_commands(script: str) -> None:
    assert sed_runs_commands(("sed", script, "f"))
    assert sed_runs_commands(("sed", "-n", "-e", "p", "-e", script, "f"))
    assert inline_program(("gsed", "--expression=" + script)) is not None


@pytest.mark.parametrize("script", QUIET)
def test_scripts_that_do_not(script: str) -> None:
    assert not sed_runs_commands(("sed", "--", script, "f"))
    assert not sed_runs_commands(("sed", "-i.bak", "-e", script, "f"))
    assert inline_program(("sed", "-n", script)) is None


def test_options() -> None:
    assert not sed_runs_commands(("sed", "--sandbox", "1e id", "f"))  # sed refuses `e` there
    assert sed_runs_commands(("sed", "-e", "1e id", "--", "--sandbox"))  # there it is a file name
    assert sed_runs_commands(("sed", "-f", "--sandbox", "-e", "1e id"))  # there the script file
    assert sed_runs_commands(("sed", "f", "--expression=s/x/y/ge"))  # GNU sed permutes arguments
    assert not sed_runs_commands(("sed", "-f", "script.sed", "f"))  # a script file: a documented limit
    assert reads_program_from_input(("sed", "-f", "-", "f")) and reads_program_from_input(("sed", "-f/dev/stdin"))
    assert not reads_program_from_input(("sed", "-f", "x.sed", "f"))


# --- against GNU sed ------------------------------------------------------------------------------

SED = shutil.which("sed")
SANDBOX_REFUSAL = "disabled in sandbox mode"


def gnu_sed_would_run(script: str) -> bool | None:
    """True: sed refuses the script in sandbox mode (it has `e`, or reads or writes a file with
    `r`/`w` — keep those out of the scripts compared); False: sed compiles it; None: sed rejects
    it for another reason (it never runs)."""
    assert SED is not None, "sed is part of every Debian system"
    done = subprocess.run([SED, "--sandbox", "-n", "-e", script, "/dev/null"], capture_output=True, text=True,
                          timeout=10, check=False)
    if SANDBOX_REFUSAL in done.stderr:
        return True
    return False if done.returncode == 0 else None


@pytest.mark.parametrize("script", [s for s in [*RUNS[:15], *QUIET] if "w out" not in s])
def test_the_examples_agree_with_gnu_sed(script: str) -> None:
    gnu = gnu_sed_would_run(script)
    if gnu is not None:  # scripts sed rejects (`s/x`) run nothing; the reader asks for them anyway
        assert sed_runs_commands(("sed", script)) is gnu, (script, gnu)


PIECES = st.sampled_from([
    "s/a/b/", "s/[/]/x/", "s/[]/]/x/", "s|a|b|", "s/a/b/g", "s/a/b/p", "s/a/b/e", "e", "e id", "p", "d", "n", "x",
    "G", "1", "$", "/a/", "/[/]/", "\\%a%", ",", "!", "{", "}", ";", "\n", " ", "a ", "a\\\n", "i x", "c x",
    "y/ab/cd/", "y/[/]/", ":l", "b l", "t", "#", "q", "l 3", "=", "/", "[", "]", "\\", "e;", "s", "g", "a", "b",
])


@settings(max_examples=600, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(PIECES, min_size=1, max_size=8).map("".join))
def test_never_quiet_when_gnu_sed_would_run_a_command(script: str) -> None:
    """Random scripts from sed's own pieces: whenever GNU sed sees an `e`, so does the reader.
    (The reader may ask about a script sed would not run: that costs a question, not a pass.)"""
    if gnu_sed_would_run(script):
        assert sed_runs_commands(("sed", script)), script


# --- the engine -------------------------------------------------------------------------------------

@pytest.mark.asyncio
async def test_a_deny_rule_cannot_be_passed_with_sed_e(project: Path) -> None:
    perms = PermissionContext(cwd=project, allow=("Bash(sed:*)",), deny=("Bash(rm:*)",))
    # A command whose name is in the script is found by the text search (denied); `e` alone
    # runs the lines of the file, which nobody can see: these must ask.
    for command in ("sed 's/.*/rm -rf data/e' notes.txt", "sed '1e rm -rf data' notes.txt"):
        decision = await decide_input(BASH, {"command": command}, make_ctx(perms))
        assert decision.behavior == "deny", (command, decision)
    for command in ("sed e commands.txt", "sed -n 's/^/r/;s/^r/&m /e' list.txt", "sudo sed -n '$e' notes.txt",
                    "sed -f - notes.txt < script.sed", "find . -name '*.txt' -exec sed e {} +"):
        decision = await decide_input(BASH, {"command": command}, make_ctx(perms))
        assert decision.behavior == "ask", (command, decision)
    everyday = await decide_input(BASH, {"command": "sed -i 's/old/new/g' notes.txt"}, make_ctx(perms))
    assert (everyday.behavior, everyday.decided_by) == ("allow", "rule")
