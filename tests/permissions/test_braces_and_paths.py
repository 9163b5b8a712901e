"""Brace expansion, long-option prefixes and paths through links, as generated families
(hypothesis): the classifier's brace expansion agrees with real bash, braces around a write
option never make it read-only, and ``..`` through symlink chains is resolved as the kernel
does. Bash only ever runs ``printf`` on generated words made of harmless characters, in a
scratch directory; no generated command is ever executed."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jupyter_toolagent.permissions import is_read_only_command
from jupyter_toolagent.permissions.shell.parse import parse_command, try_parse
from jupyter_toolagent.permissions.shell.braces import MAX_BRACE_WORDS, expand_braces
from jupyter_toolagent.permissions.shell.options import long_option_meanings, may_abbreviate
from jupyter_toolagent.permissions.shell.readonly import DANGEROUS_LONG_OPTIONS, PREFIX_SAFE_OPTIONS
from jupyter_toolagent.permissions.shell.rules import opaque_reason, restriction_matches

# --- brace expansion agrees with bash ------------------------------------------------------------------

_PLAIN = st.sampled_from(list("ab12-.x_"))
_QUOTABLE = st.text(alphabet="ab1{},.", min_size=1, max_size=4)


@st.composite
def brace_words(draw: st.DrawFn, depth: int = 0) -> str:
    """A shell word of literals, quoted and escaped pieces, comma lists and sequences, nested."""
    pieces = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["plain", "plain", "single", "double", "escape", "list", "seq", "stray"]))
        if kind == "plain":
            pieces.append(draw(_PLAIN))
        elif kind == "single":
            pieces.append(f"'{draw(_QUOTABLE)}'")
        elif kind == "double":
            pieces.append(f'"{draw(_QUOTABLE)}"')
        elif kind == "escape":
            pieces.append("\\" + draw(st.sampled_from(list("{},.a"))))
        elif kind == "stray":
            # (a stray `..` inside a list is left out: bash then reads `{{,}a..a}` as `a..a a..a`,
            # bracex as `{a..a} {a..a}` — a difference that hides no option or command)
            pieces.append(draw(st.sampled_from(["{", "}", ",", "..", "{}"] if depth == 0 else ["{", "}", ",", "{}"])))
        elif kind == "seq":
            a, b = draw(st.sampled_from([("1", "3"), ("a", "c"), ("3", "1"), ("01", "3"), ("-1", "1"), ("x", "x")]))
            step = draw(st.sampled_from(["", "..2", "..-1"]))
            pieces.append(f"{{{a}..{b}{step}}}")
        elif depth < 2:
            items = draw(st.lists(st.one_of(st.just(""), brace_words(depth + 1)), min_size=1, max_size=3))
            pieces.append("{" + ",".join(items) + "}")
    return "".join(pieces)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(word=brace_words())
def test_brace_expansion_matches_bash(word: str, tmp_path: Path) -> None:
    parsed = try_parse(f'printf "<%s>\\n" {word}')
    assert parsed is not None, word
    ours = parsed.commands[0].words[2:]
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c", f'printf "<%s>\\n" {word}'], cwd=tmp_path,
                          env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=10)
    assert done.returncode == 0, (word, done.stderr)
    theirs = tuple(line[1:-1] for line in done.stdout.splitlines())
    assert ours == theirs or (not ours and theirs == ("",)), word


@pytest.mark.parametrize("word, expected", [
    ("{a,b}", ("a", "b")), ("a{b,{c,d}}e", ("abe", "ace", "ade")), ("{1..3}", ("1", "2", "3")),
    ("{a..c}", ("a", "b", "c")), ("'{a,b}'", ("{a,b}",)), ("\\{a,b}", ("{a,b}",)), ("${x}", ("${x}",)),
    ("${a,b}", ("${a,b}",)), ('"{a,b}"', ("{a,b}",)), ("{a}", ("{a}",)), ("x{,}", ("x", "x")),
    ("'r'm'x'", ("rmx",)), ("plain", None), ("$'rm'", None),
])
def test_brace_examples(word: str, expected: tuple[str, ...] | None) -> None:
    assert expand_braces(word) == expected


def test_brace_expansion_is_bounded() -> None:
    start = time.perf_counter()
    parsed = parse_command("{rm,x}{1..1000000} f; echo {1..1000000}")
    assert time.perf_counter() - start < 2
    assert all(c.unexpandable for c in parsed.commands)
    assert opaque_reason(parsed) is not None  # nobody can check it: asks while deny rules exist
    assert not is_read_only_command("echo {1..1000000}", "/tmp")
    assert is_read_only_command("echo {1..%d}" % (MAX_BRACE_WORDS - 1), "/tmp")


# --- braces around write options, generated ------------------------------------------------------------

WRITES = [("sort", "-o"), ("sort", "--output"), ("sort", "--compress-program"), ("tree", "-o"), ("fd", "-x"),
          ("fd", "--exec"), ("rg", "--pre"), ("file", "-C"), ("git log", "--output"), ("git diff", "--ext-diff"),
          ("git grep", "-Ovi"), ("find .", "-delete"), ("find .", "-fprint"), ("find .", "-exec"), ("xxd", "-r"),
          ("printf", "-v"), ("pip list", "--outdated"), ("pip list", "--log")]


@st.composite
def hidden(draw: st.DrawFn, word: str, depth: int = 0) -> str:
    """``word`` hidden in a brace word whose expansion contains it as a word of its own."""
    junk = draw(st.sampled_from(["", "x", "F", "a.txt", "{y,z}"]))
    shape = draw(st.sampled_from(["first", "last", "split", "nest"] if depth < 2 else ["first", "last"]))
    if shape == "first":
        return f"{{{word},{junk}}}"
    if shape == "last":
        return f"{{{junk},{word}}}"
    if shape == "split" and len(word) > 1 and "{" not in word:
        cut = draw(st.integers(1, len(word) - 1))
        return f"{word[:cut]}{{{word[cut:]},{word[cut:]}}}"
    return draw(hidden(f"{{{word},}}", depth + 1)) if shape == "nest" else f"{{{word},}}"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), which=st.sampled_from(WRITES))
def test_braces_around_a_write_option_are_never_read_only(data: st.DataObject, which: tuple[str, str],
                                                           tmp_path: Path) -> None:
    program, option = which
    command = f"{program} {data.draw(hidden(option))} out x"
    words = parse_command(command).commands[0].words
    assert option in words, (command, words)  # the generator hid the option, bash will see it
    assert not is_read_only_command(command, str(tmp_path)), command


@st.composite
def leading(draw: st.DrawFn, word: str, depth: int = 0) -> str:
    """``word`` hidden in a brace word whose expansion *starts* with it (a command name)."""
    junk = draw(st.sampled_from(["", "x", "{y,z}"]))
    shape = draw(st.sampled_from(["first", "split", "seq", "nest"] if depth < 2 else ["first", "split"]))
    if shape == "split" and "{" not in word:
        cut = draw(st.integers(1, len(word) - 1))
        return f"{word[:cut]}{{{word[cut:]},{junk}}}"
    if shape == "seq" and "{" not in word:
        return f"{word[:-1]}{{{word[-1]}..{word[-1]}}}"
    if shape == "nest":
        return f"{{{draw(leading(word, depth + 1))},{junk}}}"
    return f"{{{word},{junk}}}"


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_a_command_word_in_braces_meets_the_deny_rule(data: st.DataObject) -> None:
    command = f"{data.draw(leading('rm'))} -rf x"
    assert parse_command(command).commands[0].words[0] == "rm", command
    assert restriction_matches("rm:*", command, try_parse(command)), command


# --- every unique prefix of every dangerous long option ---------------------------------------------------

def _cases() -> list[tuple[str, str]]:
    found = []
    for program, options in DANGEROUS_LONG_OPTIONS.items():
        known = set(PREFIX_SAFE_OPTIONS.get(program.split()[0], ()))
        head = {"git": "git log", "git grep": "git grep"}.get(program, program)
        for option in options:
            found += [(head, option[:n]) for n in range(3, len(option) + 1) if option[:n] not in known]
    return found


@pytest.mark.parametrize("program, prefix", _cases())
def test_every_prefix_of_a_dangerous_long_option_is_caught(program: str, prefix: str, tmp_path: Path) -> None:
    for command in (f"{program} {prefix}=v x", f"{program} {prefix} v x"):
        assert not is_read_only_command(command, str(tmp_path)), command


def test_prefix_resolution() -> None:
    assert may_abbreviate("--out", "--output") and may_abbreviate("--output", "--output")
    assert not may_abbreviate("--text", "--textconv", ["--text"]) and not may_abbreviate("--", "--output")
    assert long_option_meanings("--lo", ["--local", "--log"]) == {"--local", "--log"}
    assert long_option_meanings("--local", ["--local", "--locale"]) == {"--local"}
    assert long_option_meanings("--nope", ["--local"]) == frozenset()


# --- .. through symlink chains, resolved as the kernel does ---------------------------------------------

STEPS = ["d0", "d1", "..", ".", "to_fd", "to_d1", "to_self"]


@pytest.fixture
def chain_root(tmp_path: Path) -> Path:
    root = Path(os.path.realpath(tmp_path / "chains"))
    (root / "d0" / "d1").mkdir(parents=True)
    (root / "d1").mkdir()
    for base in (root, root / "d0", root / "d0" / "d1", root / "d1"):
        (base / "to_fd").symlink_to("/dev/fd")           # /dev/fd -> /proc/self/fd
        (base / "to_self").symlink_to("/proc/self")
        (base / "to_d1").symlink_to(root / "d0" / "d1")
    return root


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.sampled_from(STEPS), min_size=1, max_size=7), glob=st.booleans(),
       split=st.integers(0, 7), reader=st.sampled_from(["cat", "head -c 5", "wc -c", "grep -a x"]))
def test_dotdot_through_link_chains(steps: list[str], glob: bool, split: int, reader: str, chain_root: Path) -> None:
    path = "/".join([*steps, "environ"])
    reaches = os.path.realpath(chain_root / path).startswith("/proc/")
    shown = path[:-3] + "?on" if glob else path
    commands = [f"{reader} {shown}"]
    if 0 < split < len(steps):  # part of the way by `cd` (not read-only by itself when it climbs)
        commands.append(f"cd {'/'.join(steps[:split])} && {reader} {'/'.join([*steps[split:], 'environ'])}")
    for command in commands:
        if reaches:
            assert not is_read_only_command(command, str(chain_root)), command
    ordinary = "/".join([*steps, "data.txt"])
    if not any(s.startswith("to_") for s in steps) and ".." not in steps:  # everyday: stays read-only
        assert is_read_only_command(f"{reader} {ordinary}", str(chain_root)), ordinary
