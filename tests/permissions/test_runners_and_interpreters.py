"""Runners, git, inline interpreter code, input redirections and protected-name case (issue 9).

Two halves: everyday commands decide exactly as before the fix (the fix must not turn ordinary
work into questions), and the helpers behind the fix say what they are meant to say. The
hostile side is `tests/reliability/test_r4_bypass.py`. Commands are only classified.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fakes import BASH, make_ctx

from jupyter_toolagent.permissions import PermissionContext, is_read_only_command
from jupyter_toolagent.permissions.engine import decide_input
from jupyter_toolagent.permissions.safety import protected_reason
from jupyter_toolagent.permissions.shell.parse import try_parse
from jupyter_toolagent.permissions.shell.git import git_opaque_reason, git_runs
from jupyter_toolagent.permissions.shell.interpreters import inline_program, reads_program_from_input
from jupyter_toolagent.permissions.shell.options import OptionSpec, option_values, scan_options
from jupyter_toolagent.permissions.shell.rules import opaque_reason, restriction_matches
from jupyter_toolagent.permissions.shell.unwrap import unwrap

DENY_RM = {"deny": ("Bash(rm:*)",)}
BYPASS = {"mode": "bypassPermissions", **DENY_RM}


def allowing(*rules: str, deny: bool = True) -> dict[str, Any]:
    return {"allow": rules, **(DENY_RM if deny else {})}


LEGITIMATE = [
    ("git status", DENY_RM, "read_only"),
    ("git rebase main", allowing("Bash(git:*)"), "rule"),
    ("git rebase main", BYPASS, "mode"),
    ("git rebase -i main", allowing("Bash(git:*)"), "rule"),
    ("git -c color.ui=always log", allowing("Bash(git:*)"), "rule"),
    ("git -C data -c user.name=x commit -m 'rm old rows'", allowing("Bash(git:*)"), "rule"),
    ("git submodule update --init", allowing("Bash(git:*)"), "rule"),
    ("git bisect start", allowing("Bash(git:*)"), "rule"),
    ("python script.py", allowing("Bash(python:*)"), "rule"),
    ("python script.py -c config.toml", allowing("Bash(python:*)"), "rule"),
    ("python -m pytest -q", allowing("Bash(python:*)"), "rule"),
    ("python3 --version", allowing("Bash(python3:*)"), "rule"),
    ("python3 -c 'print(1)'", allowing("Bash(python3:*)", deny=False), "rule"),
    ("perl -pi -e 's/a/b/' notes.txt", allowing("Bash(perl:*)", deny=False), "rule"),
    ("env FOO=1 ls", DENY_RM, "read_only"),
    ("cat README.md", allowing("Bash(cat:*)"), "read_only"),
    ("cat < README.md", allowing("Bash(cat:*)"), "read_only"),
    ("cat -A README.md data/a.csv", allowing("Bash(cat:*)"), "read_only"),
    ("awk '{print $1}' data/a.csv", allowing("Bash(awk:*)"), "rule"),
    ("awk -F'|' '{print $1}' data/a.csv", allowing("Bash(awk:*)"), "rule"),
    ("vim +10 notes.txt", allowing("Bash(vim:*)"), "rule"),
    ("tar -czf out.tgz data", allowing("Bash(tar:*)"), "rule"),
    ("tar -xf a.tar --checkpoint=100 --checkpoint-action=dot", allowing("Bash(tar:*)"), "rule"),
    ("watch -n 5 ls", BYPASS, "mode"),
    ("flock /tmp/build.lock make", BYPASS, "mode"),
    ("trap 'echo bye' EXIT", BYPASS, "mode"),
    ("env -S 'ls -la'", BYPASS, "mode"),
    ("ssh -o StrictHostKeyChecking=no host uptime", BYPASS, "mode"),
    ("sudo -u postgres psql -c 'select 1'", BYPASS, "mode"),
    ("echo x > my.bashrc.txt", BYPASS, "mode"),
    ("echo x > GitConfig.md", BYPASS, "mode"),
    ("ssh host uptime", allowing("Bash(ssh:*)"), "rule"),
    ("ssh -p 2222 host 'cd /srv && ls'", allowing("Bash(ssh:*)"), "rule"),
    ("zip -r out.zip data", allowing("Bash(zip:*)"), "rule"),
    ("zip -T -TT 'unzip -tq' out.zip data", allowing("Bash(zip:*)"), "rule"),
    ("make -j4 all", allowing("Bash(make:*)"), "rule"),
    ("make test PYTHON=python3", allowing("Bash(make:*)"), "rule"),
    ("sed -i 's/old/new/g' notes.txt", allowing("Bash(sed:*)"), "rule"),
    # `/` as a delimiter or pattern, and commands that do not walk the root, stay read-only
    ("cut -d/ -f2 notes.txt", DENY_RM, "read_only"),
    ("grep -c / notes.txt", DENY_RM, "read_only"),
    ("sort -t/ -k2 notes.txt", DENY_RM, "read_only"),
    ("echo /", DENY_RM, "read_only"),
    ("ls -la /", DENY_RM, "read_only"),
    ("du -sh /", DENY_RM, "read_only"),
    ("awk -F/ '{print $1}' notes.txt", allowing("Bash(awk:*)"), "rule"),
]


@pytest.mark.asyncio
@pytest.mark.parametrize(("command", "rules", "decided_by"), LEGITIMATE, ids=[c for c, _, _ in LEGITIMATE])
async def test_everyday_commands_are_allowed_as_before(command: str, rules: dict[str, Any], decided_by: str,
                                                       project: Path) -> None:
    (project / "README.md").write_text("# readme\n")
    decision = await decide_input(BASH, {"command": command}, make_ctx(PermissionContext(cwd=project, **rules)))
    assert (decision.behavior, decision.decided_by) == ("allow", decided_by), decision.message


@pytest.mark.asyncio
@pytest.mark.parametrize("command", ["python3 -c 'print(1)'", "perl -pi -e 's/a/b/' notes.txt", "node -e '1'",
                                     "echo 'print(1)' | python3", "sudo python3 -c 'print(1)'"])
async def test_inline_code_asks_while_deny_rules_exist_even_when_the_interpreter_is_allowed(
        command: str, project: Path) -> None:
    for rules in (allowing("Bash(python3:*)", "Bash(perl:*)", "Bash(node:*)", "Bash(echo:*)", "Bash(sudo:*)"),
                  BYPASS):
        decision = await decide_input(BASH, {"command": command}, make_ctx(PermissionContext(cwd=project, **rules)))
        assert (decision.behavior, decision.decided_by) == ("ask", "rule"), (rules, decision)
        assert "cannot be checked against the rule `Bash(rm:*)`" in decision.message


# --- input redirections and the working directory ------------------------------------------------------

def test_input_redirections_are_resolved_against_the_working_directory(project: Path) -> None:
    (project / "env_link").symlink_to("/proc/self/environ")
    assert is_read_only_command("cat < notes.txt", str(project))
    assert not is_read_only_command("cat < env_link", str(project))
    assert not is_read_only_command("cat < data/../env_link", str(project))
    assert is_read_only_command("cat < /etc/hostname")
    # Without a working directory a relative target cannot be resolved: not read-only.
    assert not is_read_only_command("cat < notes.txt")


@pytest.mark.asyncio
async def test_an_allow_rule_does_not_read_a_link_into_proc(project: Path) -> None:
    (project / "env_link").symlink_to("/proc/self/environ")
    perms = PermissionContext(cwd=project, allow=("Bash(cat:*)",))
    for command in ("cat env_link", "cat ./env_link", "cat < env_link", "echo x | cat - env_link"):
        decision = await decide_input(BASH, {"command": command}, make_ctx(perms))
        assert decision.behavior == "ask", (command, decision)
    assert (await decide_input(BASH, {"command": "cat -n notes.txt"}, make_ctx(perms))).behavior == "allow"


# --- protected names in any case ----------------------------------------------------------------------

@pytest.mark.parametrize("path", [".GIT/config", "/home/u/.BASHRC", "x/.Git/hooks/pre-commit", ".TOOLAGENT/settings.json",
                                  "/home/u/.Config/GIT/config", "~/.[B]ashrc", "/home/u/.SSH/id_rsa"])
def test_protected_names_are_compared_without_case(path: str) -> None:
    assert protected_reason(path) is not None


@pytest.mark.parametrize("path", ["GitConfig.md", "my.bashrc.txt", "data/git/config", ".gitignore", "docs/SSH.md"])
def test_similar_names_are_not_protected(path: str) -> None:
    assert protected_reason(path) is None


# --- the helpers ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("words", "spec", "values", "first_operand"), [
    (("flock", "-nc", "CMD", "L"), OptionSpec(wanted="c"), ("CMD",), 3),
    (("flock", "-cCMD", "L"), OptionSpec(wanted="c"), ("CMD",), 2),
    (("env", "-u", "HOME", "-S", "A B", "x"), OptionSpec(wanted="S", valued="u"), ("A B",), 5),
    (("env", "--split-string=A B"), OptionSpec(wanted_long=("--split-string",)), ("A B",), None),
    (("python3", "-W", "ignore", "script.py", "-c", "x"), OptionSpec(wanted="c", valued="WX"), (), 3),
    (("python3", "-m", "pytest"), OptionSpec(wanted="c", stops="m"), (), 1),
    (("perl", "-pi", "-e", "CODE"), OptionSpec(wanted="eE", attached="i"), ("CODE",), None),
    (("perl", "-pie", "CODE"), OptionSpec(wanted="eE", attached="i"), (), 2),
    (("git", "--exe=CMD"), OptionSpec(wanted_long=("--exec",), abbreviations=True), ("CMD",), None),
    (("x", "--", "-c", "CMD"), OptionSpec(wanted="c"), (), 2),
])
def test_scan_options(words: tuple[str, ...], spec: OptionSpec, values: tuple[str, ...],
                      first_operand: int | None) -> None:
    scan = scan_options(words, spec)
    assert tuple(v for v, _ in scan.values) == values
    assert scan.first_operand == first_operand


def test_option_values_finds_options_after_operands() -> None:
    assert option_values(("flock", "/tmp/l", "-c", "CMD"), OptionSpec(wanted="c")) == ["CMD"]
    assert option_values(("flock", "/tmp/l", "--", "-c", "CMD"), OptionSpec(wanted="c")) == []


@pytest.mark.parametrize(("words", "scripts", "commands"), [
    (("git", "status"), [], []),
    (("git", "-c", "color.ui=always", "log"), [], []),
    (("git", "-c", "core.pager=less -R", "log"), ["less -R"], []),
    (("git", "-c", "CORE.sshCommand=ssh -i k", "fetch"), ["ssh -i k"], []),
    (("git", "-c", "alias.x=!make all", "x"), ["make all"], []),
    (("git", "-c", "alias.co=checkout -b", "co"), [], [("git", "checkout", "-b")]),
    (("git", "rebase", "-x", "make test", "main"), ["make test"], []),
    (("git", "rebase", "main"), [], []),
    (("git", "bisect", "run", "make", "test"), [], [("make", "test")]),
    (("git", "submodule", "foreach", "git", "pull"), ["git pull"], []),
    (("git", "filter-branch", "--msg-filter", "sed s/a/b/", "HEAD"), ["sed s/a/b/"], []),
    (("git", "clone", "ext::ssh% host", "d"), ["ssh host"], []),
])
def test_git_runs(words: tuple[str, ...], scripts: list[str], commands: list[tuple[str, ...]]) -> None:
    assert git_runs(words) == (scripts, commands)


@pytest.mark.parametrize(("words", "opaque"), [
    (("git", "log"), False), (("git", "--config-env=core.editor=ED", "commit"), True),
    (("git", "--config-env", "user.name=NAME", "commit"), False), (("git", "-c", "include.path=x", "log"), True),
    (("git", "--exec-path"), False), (("git", "--exec-path=/opt/git", "log"), True),
])
def test_git_opaque_reason(words: tuple[str, ...], opaque: bool) -> None:
    assert (git_opaque_reason(words) is not None) is opaque


@pytest.mark.parametrize(("words", "inline", "reads_input"), [
    (("python3", "script.py"), False, False), (("python3", "-c", "x"), True, False), (("python3",), False, True),
    (("python3", "-"), False, True), (("python3", "-m", "http.server"), False, False),
    (("python3", "--version"), False, False), (("/usr/bin/python3.12", "-Ic", "x"), True, False),
    (("perl", "-ne", "print", "f"), True, False), (("perl", "x.pl"), False, False),
    (("ruby", "-rjson", "-e", "x"), True, False), (("node", "--eval=x"), True, False), (("node", "app.js"), False, False),
    (("php", "-r", "x"), True, False), (("php", "-f", "x.php"), False, False),
    (("awk", "{print $1}", "f"), False, False), (("awk", "BEGIN{system(\"x\")}"), True, False),
    (("awk", "-f", "prog.awk", "f"), False, False), (("vim", "+10", "f"), False, False), (("vim", "-c", "x"), True, False),
    (("deno", "eval", "x"), True, False), (("deno", "run", "x.ts"), False, False),
    (("bash",), False, True), (("bash", "script.sh"), False, False), (("sh", "-c", "ls"), False, False),
    (("source", "/dev/stdin"), False, True), (("source", "env.sh"), False, False),
    (("at", "now"), False, True), (("at", "-l"), False, False), (("at", "-f", "job", "now"), False, False),
    (("make", "--eval=all:;x"), True, False), (("gmake", "-E", "x"), True, False), (("make", "-e", "all"), False, False),
    (("crontab", "-"), False, True), (("crontab", "-l"), False, False), (("ed", "f"), False, True),
    (("script", "-q", "log"), False, True), (("script", "-qc", "ls", "log"), False, False),
])
def test_interpreters(words: tuple[str, ...], inline: bool, reads_input: bool) -> None:
    assert (inline_program(words) is not None) is inline
    assert reads_program_from_input(words) is reads_input


@pytest.mark.parametrize(("command", "inner"), [
    ("env -S 'make test' x", ("make", "test", "x")),
    ("trap 'make clean' EXIT", ("make", "clean")),
    ("watch -n 2 'make test'", ("make", "test")),
    ("flock /tmp/l -c 'make test'", ("make", "test")),
    ("script -qc 'make test' /dev/null", ("make", "test")),
    ("tar -cf a.tar --use-compress-program='zstd -19' data", ("zstd", "-19")),
    ("rsync -e 'ssh -p 22' a host:b", ("ssh", "-p", "22")),
    ("unshare -r make test", ("make", "test")),
    ("git -c core.pager='less -R' log", ("less", "-R")),
    ("git rebase --exec 'make test' main", ("make", "test")),
    ("ssh -p 22 host make test", ("make", "test")),
    ("ssh -o BatchMode=yes host 'make test; ls'", ("make", "test")),
    ("zip -T -TT 'make test' a.zip f", ("make", "test")),
    ("zip --unzip-command='make test' -T a.zip f", ("make", "test")),
])
def test_unwrap_lists_what_runs(command: str, inner: tuple[str, ...]) -> None:
    unwrapped = unwrap(command)
    assert unwrapped is not None and unwrapped.complete
    assert inner in unwrapped.commands
    assert restriction_matches(f"{inner[0]}:*", command, try_parse(command))


def test_unwrap_notes_strings_that_run_as_commands() -> None:
    assert not unwrap("git status").runs_text  # type: ignore[union-attr]
    assert unwrap("sh -c 'ls'").runs_text  # type: ignore[union-attr]
    assert unwrap("PAGER='less' man ls").runs_text  # type: ignore[union-attr]
    assert unwrap("echo hi | python3").runs_text  # type: ignore[union-attr]
    assert unwrap("make CC='gcc -O2' all").runs_text  # type: ignore[union-attr]  # a recipe may run $(CC)
    assert not unwrap("make -j4 all").runs_text  # type: ignore[union-attr]


@pytest.mark.parametrize(("command", "opaque"), [
    ("python3 -c 'print(1)'", True), ("python3 script.py", False), ("sudo python3 -c 'x'", True),
    ("sh -c 'perl -e 1'", True), ("echo x | sudo sh", True), ("sudo $CMD x", True), ("sudo ls", False),
    ("awk '{print}' f", False), ("git -c include.path=x log", True), ("git log", False),
    ("bash --version", False), ("at now <<< 'ls'", True),
])
def test_opaque_reason_looks_through_runners(command: str, opaque: bool) -> None:
    assert (opaque_reason(try_parse(command)) is not None) is opaque
