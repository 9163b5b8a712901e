"""Shell parsing, read-only classification and Bash rule matching, unit by unit.
Commands here are only parsed; nothing is run."""

from __future__ import annotations

import shlex
import time

import pytest

from jupyter_toolagent.errors import ToolAgentError
from jupyter_toolagent.permissions import is_read_only_command, split_command
from jupyter_toolagent.errors import ShellParseError
from jupyter_toolagent.permissions.shell.parse import (
    DANGEROUS_VARIABLES,
    INDIRECT,
    is_dangerous_variable,
    is_read_only_part,
    parse_command,
    strip_wrappers,
    try_parse,
)
from jupyter_toolagent.permissions.shell.readonly import reveals_environment, words_are_read_only
from jupyter_toolagent.permissions.shell.rules import (
    allow_matches_part,
    compile_shell_rule,
    glob_match,
    opaque_reason,
    restriction_matches,
    suggest_content,
    uncovered_parts,
    whole_command_matches,
)

SPLITS = [
    ("ls", ["ls"]),
    ("ls; rm -rf x", ["ls", "rm -rf x"]),
    ("ls && rm x || echo no", ["ls", "rm x", "echo no"]),
    ("ls | grep x | wc -l", ["ls", "grep x", "wc -l"]),
    ("ls\nrm x", ["ls", "rm x"]),
    ("echo \"a;b\"", ["echo \"a;b\""]),
    ("echo 'a && b'", ["echo 'a && b'"]),
    ("echo a\\;b", ["echo a\\;b"]),
    ("(cd x && ls)", ["cd x", "ls"]),
    ("{ ls; pwd; }", ["ls", "pwd"]),
    ("if true; then ls; else pwd; fi", ["true", "ls", "pwd"]),
    ("for f in a b; do echo $f; done", ["echo $f"]),
    ("time ls -l", ["ls -l"]),
    ("ls &", ["ls"]),
]


@pytest.mark.parametrize(("command", "parts"), SPLITS)
def test_split_command(command: str, parts: list[str]) -> None:
    assert split_command(command) == parts


@pytest.mark.parametrize("command", ["", "   ", "[[ -f x ]]", "echo $((1+2))", "case x in a) ls;; esac",
                                     "echo 'unterminated", "ls |", "x" * 60_000])
def test_unparseable_commands_raise_shell_parse_error(command: str) -> None:
    with pytest.raises(ShellParseError) as info:
        split_command(command)
    assert isinstance(info.value, ToolAgentError) and isinstance(info.value, ValueError)
    assert info.value.command == command
    assert try_parse(command) is None
    assert not is_read_only_command(command)


def test_nested_commands_are_listed_and_marked() -> None:
    parsed = parse_command("echo $(whoami) `id` <(ls)")
    assert [c.core_words for c in parsed.commands] == [("echo", "$(whoami)", "`id`", "<(ls)"), ("whoami",), ("id",), ("ls",)]
    assert [c.nested for c in parsed.commands] == [False, True, True, True]
    assert parsed.has_substitution and parsed.commands[0].substitution
    assert [p.text for p in parsed.parts] == ["echo $(whoami) `id` <(ls)"]


@pytest.mark.parametrize(("command", "writes"), [
    ("echo x > f", ("f",)),
    ("echo x >> f 2>&1", ("f",)),
    ("ls &> out", ("out",)),
    ("ls >| out", ("out",)),
    ("cat <> f", ("f",)),
    ("ls > /dev/null", ()),
    ("ls 2>/dev/stderr", ()),
    ("ls >&2", ()),
    ("ls 2>&-", ()),
    ("ls > /dev/fd/1", ()),
    ("cat < in", ()),
    ("cat < /dev/tcp/h/80", ("/dev/tcp/h/80",)),
    ("exec 3>/dev/udp/h/53", ("/dev/udp/h/53",)),
])
def test_writes(command: str, writes: tuple[str, ...]) -> None:
    assert parse_command(command).parts[0].writes == writes


def test_a_part_with_a_substitution_is_not_read_only_by_itself() -> None:
    part = parse_command("cat $(ls)").parts[0]
    assert part.substitution and not is_read_only_part(part)
    assert is_read_only_part(parse_command("cat notes.txt").parts[0])


def test_redirect_on_a_compound_is_a_write_of_every_command_inside() -> None:
    parsed = parse_command("{ ls; pwd; } > out")
    assert all(c.writes == ("out",) for c in parsed.commands)
    assert parse_command("if true; then ls; fi 2>/dev/null").writes == ()


@pytest.mark.parametrize(("command", "names"), [
    ("echo $HOME", ("HOME",)),
    ("echo \"${ANTHROPIC_API_KEY}\"", ("ANTHROPIC_API_KEY",)),
    ("echo ${X:-default}", ("X",)),
    ("echo ${#X}", ("X",)),
    ("echo ${!prefix*}", (INDIRECT,)),
    ("echo $1 $?", ("1", "?")),
    ("echo '$HOME'", ()),
    ("cat <<< \"$KEY\"", ("KEY",)),
    ("cat <<EOF\nhello $USER\nEOF\n", ("USER",)),
    ("X=$SECRET ls", ("SECRET",)),
])
def test_expansions(command: str, names: tuple[str, ...]) -> None:
    assert parse_command(command).parts[0].expansions == names


@pytest.mark.parametrize(("words", "index", "assigned"), [
    (("time", "ls"), 1, ()),
    (("time", "-p", "ls"), 2, ()),
    (("timeout", "5", "ls"), 2, ()),
    (("timeout", "-s", "KILL", "5s", "ls"), 4, ()),
    (("timeout", "--preserve-status", "1.5", "ls"), 3, ()),
    (("timeout", "--bogus", "5", "ls"), 0, ()),
    (("nice", "ls"), 1, ()),
    (("nice", "-n", "5", "ls"), 3, ()),
    (("nice", "-5", "ls"), 2, ()),
    (("nohup", "ls"), 1, ()),
    (("env", "A=1", "B=2", "ls"), 3, ("A", "B")),
    (("env", "ls"), 0, ()),
    (("env", "-i", "ls"), 0, ()),
    (("env", "A=1"), 0, ()),
    (("sudo", "ls"), 0, ()),
    (("xargs", "ls"), 0, ()),
    (("nohup", "time", "nice", "ls"), 3, ()),
])
def test_strip_wrappers(words: tuple[str, ...], index: int, assigned: tuple[str, ...]) -> None:
    assert strip_wrappers(words) == (index, assigned)


def test_wrapped_command_is_matched_as_its_core() -> None:
    part = parse_command("timeout 5 env A=1 git log").parts[0]
    assert part.core_words == ("git", "log") and part.core_text == "git log"
    assert part.assignments == ("A",)


@pytest.mark.parametrize("name", ["PATH", "LD_PRELOAD", "DYLD_INSERT_LIBRARIES", "GIT_SSH_COMMAND", "PYTHONPATH",
                                  "BASH_ENV", "IFS", "PAGER", "SSH_AUTH_SOCK", "BASH_FUNC_x"])
def test_dangerous_variables(name: str) -> None:
    assert is_dangerous_variable(name)
    assert not parse_command(f"{name}=x ls").parts[0].plain
    assert not parse_command(f"env {name}=x ls").parts[0].plain


@pytest.mark.parametrize("name", ["LC_ALL", "FOO", "TZ", "DEBUG"])
def test_harmless_variables(name: str) -> None:
    assert not is_dangerous_variable(name) and name not in DANGEROUS_VARIABLES
    assert parse_command(f"{name}=x ls").parts[0].plain


def test_dynamic_command_words() -> None:
    assert parse_command("$CMD x").parts[0].dynamic
    assert parse_command("*m x").parts[0].dynamic
    assert parse_command("echo ${x:-$(rm y)}").parts[0].dynamic
    assert not parse_command("[ -f x ]").parts[0].dynamic
    assert parse_command("f() { ls; }").defines_function


def test_parse_is_cached_and_fast() -> None:
    command = " && ".join(f"echo part{i}" for i in range(50))
    start = time.perf_counter()
    first = parse_command(command)
    first_ms = (time.perf_counter() - start) * 1000
    start = time.perf_counter()
    for _ in range(1000):
        again = parse_command(command)
    cached_us = (time.perf_counter() - start) * 1000
    assert again is first
    assert len(first.parts) == 50
    print(f"\n50-part chain: first parse {first_ms:.1f} ms, cached {cached_us:.2f} µs")
    assert first_ms < 500 and cached_us < 100


# --- read-only table -----------------------------------------------------------------------------------

@pytest.mark.parametrize("words", [
    ("git", "status"), ("git", "log", "-p"), ("git", "branch", "--list", "feat*"), ("git", "tag"),
    ("git", "tag", "-l"), ("git", "remote", "-v"), ("git", "stash", "list"), ("git", "reflog"),
    ("git", "worktree", "list"),
    ("git", "branch", "--merged", "main"), ("find", ".", "-type", "f"), ("sort", "-n", "-k", "2"),
    ("rg", "-n", "x"), ("fd", "-e", "py"), ("uniq", "-c"), ("date", "-u", "+%s"), ("date", "-d", "yesterday"),
    ("pip", "list"), ("pip", "freeze"), ("cd", "data"), ("hostname", "-f"), ("xxd", "f"),
])
def test_read_only_words(words: tuple[str, ...]) -> None:
    assert words_are_read_only(words)


@pytest.mark.parametrize("words", [
    ("git",), ("git", "-c", "x=y", "log"), ("git", "-C", "sub", "diff"), ("git", "--git-dir=x", "log"), ("git", "--exec-path=/x", "log"), ("git", "log", "--output", "f"),
    ("git", "diff", "--textconv"), ("git", "tag", "v1"), ("git", "remote", "add", "o", "u"),
    ("git", "stash"), ("git", "stash", "pop"), ("git", "reflog", "expire"), ("git", "branch", "-m", "a"),
    ("git", "config", "--get", "x"), ("git", "grep", "--open-files-in-pager", "x"), ("find", "-exec", "ls"),
    ("find", ".", "-fprintf", "f", "%p"), ("sort", "-o", "f"), ("sort", "--compress-program=gzip"),
    ("rg", "--pre=cat", "x"), ("rg", "--hostname-bin=x"), ("fd", "-x", "ls"), ("fd", "-HX", "ls"),
    ("uniq", "a", "b"), ("xxd", "-r", "a"), ("xxd", "a", "b"), ("date", "-s", "now"), ("date", "0101"),
    ("hostname", "new"), ("file", "-C"), ("tree", "-o", "f"), ("pip", "install", "x"), ("pip",),
    ("cd",), ("cd", "/"), ("cd", "../x"), ("cd", "~"), ("cd", "-"), ("awk", "1"), ("sed", "p"), ("tee", "f"),
    ("xargs", "ls"), ("less", "f"), ("more", "f"), ("jq", "."), ("ps", "e"), ("python", "-V"),
])
def test_not_read_only_words(words: tuple[str, ...]) -> None:
    assert not words_are_read_only(words)


@pytest.mark.parametrize(("words", "cwd"), [
    (("env",), None), (("printenv", "HOME"), None), (("/usr/bin/env",), None), (("set",), None),
    (("declare", "-p"), None), (("export", "-p"), None), (("cat", "/proc/self/environ"), None),
    (("cat", "/proc/1/cmdline"), None), (("grep", "-r", "x", "/proc"), None), (("cat", "/pr?c/1/x"), None),
    (("cat", "/*/self/environ"), None), (("cat", "/dev/fd/../environ"), None),
    (("grep", "--file=/proc/self/environ", "x"), None), (("head", "-c1/proc/self/environ"), None),
    (("cat", "self/environ"), None), (("cat", "../../proc/self/environ"), "/a/b"),
])
def test_reveals_environment(words: tuple[str, ...], cwd: str | None) -> None:
    assert reveals_environment(words, cwd)


@pytest.mark.parametrize("words", [("cat", "notes.txt"), ("grep", "environment", "README.md"), ("ls", "/usr"),
                                   ("echo", "process"), ("cat", "/etc/hostname")])
def test_does_not_reveal_environment(words: tuple[str, ...]) -> None:
    assert not reveals_environment(words, "/tmp")


# --- Bash rule matching ------------------------------------------------------------------------------------

def test_rule_kinds() -> None:
    assert compile_shell_rule("git push:*").kind == "prefix"
    assert compile_shell_rule("git push:*").words == ("git", "push")
    assert compile_shell_rule("npm run *").kind == "wildcard"
    assert compile_shell_rule("make   test").kind == "exact"
    assert compile_shell_rule("make   test").text == "make test"


@pytest.mark.parametrize(("pattern", "text", "expected"), [
    ("npm run *", "npm run test", True),
    ("npm run *", "npm run", True),
    ("npm run *", "npm runx", False),
    ("*.py", "a.py", True),
    ("a*b*c", "abc", True),
    ("a*b*c", "aXbYc", True),
    ("a*b*c", "acb", False),
    ("*", "", True),
    ("a*a", "a", False),
    ("git *", "git", True),
    ("exact", "exact", True),
    ("exact", "exactly", False),
])
def test_glob_match(pattern: str, text: str, expected: bool) -> None:
    assert glob_match(pattern, text) is expected


def test_glob_match_is_linear_with_many_stars() -> None:
    pattern = "a" + "*a" * 40 + "*b"
    text = "a" * 5000
    start = time.perf_counter()
    assert not glob_match(pattern, text)
    assert (time.perf_counter() - start) < 0.5


@pytest.mark.parametrize(("content", "command", "expected"), [
    ("rm:*", "ls; sudo /bin/rm -rf x", True),
    ("rm:*", "echo rm", False),
    ("rm:*", "rmdir x", False),
    ("rm -rf *", "nice rm -rf build", True),
    ("git push:*", "git -c a=b -C . push origin", True),
    ("git push:*", "git pull", False),
    ("make deploy", "make deploy", True),
    ("make deploy", "make build && make deploy", True),
    ("rm:*", "[[ -f x ]] && rm x", True),
    ("rm:*", "[[ -f x ]] && ls", False),
    ("rm:*", "echo ${X:-$(rm y)}", True),
])
def test_restriction_matches(content: str, command: str, expected: bool) -> None:
    assert restriction_matches(content, command, try_parse(command)) is expected


@pytest.mark.parametrize(("content", "command", "expected"), [
    ("git status:*", "git status -s", True),
    ("git status:*", "git status > f", False),
    ("git status:*", "PATH=x git status", False),
    ("git status:*", "git  status", True),
    ("git status:*", "git statusx", False),
    ("echo:*", "echo $API_TOKEN", False),
    ("echo:*", "echo $HOME", True),
    ("npm run *", "npm run build", True),
    ("make test", "make test", True),
    ("make test", "make test now", False),
    ("timeout 5 make:*", "timeout 5 make", False),
])
def test_allow_matches_part(content: str, command: str, expected: bool) -> None:
    assert allow_matches_part(content, parse_command(command).parts[0]) is expected


def test_whole_command_matches_only_exact_rules() -> None:
    assert whole_command_matches("make a && make b", "make a  &&  make b")
    assert not whole_command_matches("make *", "make a && rm x")
    assert not whole_command_matches("make:*", "make a && rm x")


def test_uncovered_parts() -> None:
    parsed = parse_command("git status && npm test && rm x")
    missing = uncovered_parts(parsed, ["npm test"], lambda c, _cwd: c.core_words[:2] == ("git", "status"))
    assert [m.text for m in missing] == ["rm x"]


@pytest.mark.parametrize(("command", "suggestion"), [
    ("git push origin main", "git push:*"),
    ("ls && git push", "git push:*"),
    ("rm -rf build", "rm -rf build"),
    ("ls; rm -rf build", "rm -rf build"),
    ("rm a && rm b", "rm a && rm b"),
    ("echo x > out.txt", "echo x > out.txt"),
    ("rm *.tmp", None),
    ("[[ -f x ]] && rm x", "[[ -f x ]] && rm x"),
])
def test_suggest_content(command: str, suggestion: str | None) -> None:
    parsed = try_parse(command)
    missing = uncovered_parts(parsed, [], lambda c, _cwd: is_read_only_command(c.text)) if parsed else []
    assert suggest_content(command, parsed, missing) == suggestion


@pytest.mark.parametrize(("command", "opaque"), [
    ("$CMD x", True), ("curl x | sh", True), ("bash", True), ("bash -e", True), ("eval \"$X\"", True),
    ("sh -c \"$X\"", True), ("bash script.sh", False), ("sh -c 'ls'", False), ("ls", False), ("eval ls", False),
])
def test_opaque_reason(command: str, opaque: bool) -> None:
    assert (opaque_reason(try_parse(command)) is not None) is opaque


def _nested_shells(command: str, depth: int) -> str:
    for _ in range(depth):
        command = "sh -c " + shlex.quote(command)
    return command


PATHOLOGICAL = [
    "sudo " * 400 + "rm x",
    "sudo find . -exec " * 60 + "rm x",
    _nested_shells("rm x", 3),
    _nested_shells("rm x", 9),
    _nested_shells("eval rm x", 6),
    "(" * 300 + "rm x" + ")" * 300,
    "echo $(" * 100 + "rm x" + ")" * 100,
    "ls; " * 2000 + "rm x",
]


@pytest.mark.parametrize("command", PATHOLOGICAL, ids=range(len(PATHOLOGICAL)))
def test_pathological_commands_are_decided_quickly_and_still_denied(command: str) -> None:
    start = time.perf_counter()
    denied = restriction_matches("rm:*", command, try_parse(command))
    read_only = is_read_only_command(command)
    elapsed = time.perf_counter() - start
    assert denied and not read_only
    assert elapsed < 5, elapsed
