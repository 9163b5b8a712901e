"""Rule syntax (SPEC §5.2): what parses, what each bad rule's error says, and file patterns."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jupyter_toolagent.errors import ConfigError, RuleSyntaxError
from jupyter_toolagent.permissions import PermissionRule, RuleEntry, parse_rule
from jupyter_toolagent.permissions.file_rules import compile_pattern, is_inside, path_rule_content, resolve_for_rules
from jupyter_toolagent.permissions.rules import parse_rule_text

VALID = [
    ("Bash", PermissionRule("Bash")),
    ("  Bash  ", PermissionRule("Bash")),
    ("Bash(*)", PermissionRule("Bash")),
    ("Bash( * )", PermissionRule("Bash")),
    ("Bash(git push:*)", PermissionRule("Bash", "git push:*")),
    ("Bash(npm run *)", PermissionRule("Bash", "npm run *")),
    ("Bash(make test)", PermissionRule("Bash", "make test")),
    ("Bash(echo \"(\")", PermissionRule("Bash", "echo \"(\"")),
    ("Bash(echo '(' )", PermissionRule("Bash", "echo '('")),
    ("Bash(echo \\()", PermissionRule("Bash", "echo \\(")),
    ("Bash((ls))", PermissionRule("Bash", "(ls)")),
    ("Read(./data/**)", PermissionRule("Read", "./data/**")),
    ("Edit(~/notes/*.md)", PermissionRule("Edit", "~/notes/*.md")),
    ("Read(/abs/**)", PermissionRule("Read", "/abs/**")),
    ("Read(*.csv)", PermissionRule("Read", "*.csv")),
    ("RunPython", PermissionRule("RunPython")),
    ("my_function", PermissionRule("my_function")),
    ("mcp__server__tool", PermissionRule("mcp__server__tool")),
    ("tool-name.v2", PermissionRule("tool-name.v2")),
    ("Bash(make\ttest)", PermissionRule("Bash", "make\ttest")),
]


@pytest.mark.parametrize(("text", "expected"), VALID)
def test_valid_rules(text: str, expected: PermissionRule) -> None:
    assert parse_rule(text) == expected


@pytest.mark.parametrize("text", ["Bash(git push:*)", "Read(./data/**)", "Bash", "Bash(make test)"])
def test_rule_text_round_trips(text: str) -> None:
    assert str(parse_rule(text)) == text
    assert parse_rule(str(parse_rule(text))) == parse_rule(text)


INVALID = [
    ("", "empty rule"),
    ("   ", "empty rule"),
    ("Bash(", "must end with ')'"),
    ("Bash(ls", "must end with ')'"),
    ("Bash)", "')' without '('"),
    ("Bash(ls))", "')' without '('"),
    ("Bash((ls)", "'(' without ')'"),
    ("(ls)", "empty tool name"),
    ("Bash()", "empty content"),
    ("Bash(   )", "empty content"),
    ("Ba sh", "bad tool name"),
    ("Bash!(x)", "bad tool name"),
    ("1Bash", "bad tool name"),
    ("Bash(ls\nrm x)", "control characters"),
    ("Bash(:*)", "empty command prefix"),
    ("Bash(echo 'unterminated:*)", "does not split into words"),
    ("Bash(\"git:*)", "does not split into words"),
]


@pytest.mark.parametrize(("text", "problem"), INVALID)
def test_invalid_rules_name_the_problem(text: str, problem: str) -> None:
    with pytest.raises(RuleSyntaxError) as info:
        parse_rule(text)
    assert problem in str(info.value)
    assert info.value.rule == text
    assert isinstance(info.value, ConfigError)


def test_non_string_rule_is_a_syntax_error() -> None:
    with pytest.raises(RuleSyntaxError, match="must be a string"):
        parse_rule(42)  # type: ignore[arg-type]


def test_prefix_split_check_is_for_shell_rules_only() -> None:
    assert parse_rule("Read(file 'x:*)").content == "file 'x:*"


def test_entries_compare_by_identity() -> None:
    a = RuleEntry(parse_rule("Bash"), "allow", "flag")
    b = RuleEntry(parse_rule("Bash"), "allow", "flag")
    rules = [a, b]
    rules.remove(b)
    assert rules == [a] and rules[0] is a


@pytest.mark.parametrize(("text", "behavior", "rule"), [
    ("Bash(ls:*)", "allow", "Bash(ls:*)"),
    ("deny:Bash(rm:*)", "deny", "Bash(rm:*)"),
    ("ask:Edit(./x)", "ask", "Edit(./x)"),
])
def test_session_rule_text(text: str, behavior: str, rule: str) -> None:
    assert parse_rule_text(text) == (behavior, parse_rule(rule))


# --- file patterns ------------------------------------------------------------------------------------

@pytest.fixture
def base(tmp_path: Path) -> Path:
    root = Path(os.path.realpath(tmp_path)) / "base"
    (root / "data" / "sub").mkdir(parents=True)
    return root


@pytest.mark.parametrize(("pattern", "relative", "widening", "expected"), [
    ("./data/**", "data/a.csv", True, True),
    ("./data/**", "data/sub/b.csv", True, True),
    ("./data/**", "other/a.csv", True, False),
    ("./data/**", "data", True, False),
    ("data/*.csv", "data/a.csv", True, True),
    ("data/*.csv", "data/sub/a.csv", True, False),
    ("*.csv", "x.csv", True, True),
    ("*.csv", "deep/down/x.csv", True, True),
    ("*.csv", "x.txt", True, False),
    ("data", "data/sub/b.csv", False, True),
    ("data/", "data/a.csv", False, True),
    ("./data/a.csv", "data/a.csv", True, True),
    ("./data/a.csv", "data/a.csvx", True, False),
    ("!important", "!important", True, True),
    ("#notes", "#notes", True, True),
])
def test_patterns_relative_to_base(base: Path, pattern: str, relative: str, widening: bool, expected: bool) -> None:
    assert compile_pattern(pattern, str(base)).matches(str(base / relative), widening=widening) is expected


def test_unanchored_pattern_matches_outside_base_only_when_narrowing(base: Path, tmp_path: Path) -> None:
    outside = str(Path(os.path.realpath(tmp_path)) / "elsewhere" / "x.csv")
    pattern = compile_pattern("*.csv", str(base))
    assert pattern.matches(outside, widening=False)
    assert not pattern.matches(outside, widening=True)


def test_parent_relative_pattern(base: Path) -> None:
    shared = base.parent / "shared" / "f.txt"
    assert compile_pattern("../shared/**", str(base)).matches(str(shared), widening=True)


def test_absolute_and_home_patterns(base: Path, home: Path) -> None:
    assert compile_pattern(f"{base}/**", "/").matches(str(base / "data" / "a"), widening=True)
    assert compile_pattern("~/notes/**", str(base)).matches(str(home / "notes" / "n.md"), widening=True)
    assert compile_pattern("~", str(base)).matches(str(home / "anything"), widening=True)
    assert not compile_pattern("~/notes/**", str(base)).matches(str(home / "other" / "n.md"), widening=True)


def test_resolve_path_resolves_symlinks_and_dots(base: Path, tmp_path: Path) -> None:
    target = Path(os.path.realpath(tmp_path)) / "target"
    target.mkdir()
    (base / "link").symlink_to(target)
    assert resolve_for_rules("link/f", base) == str(target / "f")
    assert resolve_for_rules("data/../data/./a", base) == str(base / "data" / "a")


def test_is_inside(base: Path) -> None:
    assert is_inside(str(base / "data"), base)
    assert is_inside(str(base), base)
    assert not is_inside(str(base) + "x/file", base)
    assert not is_inside(str(base.parent), base)


def test_path_rule_content_escapes_glob_characters(base: Path) -> None:
    assert path_rule_content(str(base / "data" / "a[1].csv"), base) == "./data/a\\[1\\].csv"
    assert path_rule_content("/etc/hosts", base) == "/etc/hosts"
    weird = base / "data" / "a[1].csv"
    assert compile_pattern(path_rule_content(str(weird), base), str(base)).matches(str(weird), widening=True)
    assert not compile_pattern(path_rule_content(str(weird), base), str(base)).matches(
        str(base / "data" / "a1.csv"), widening=True)
