"""Bash exit codes that answer "no" (SPEC §4.2): ``grep``/``rg`` 1 = no match, ``diff``/``cmp``
1 = differ, ``test``/``[``/``[[`` 1 = false are normal results with a short note; every other
non-zero exit, and these programs' exit 2, stays an error. Real commands run in ``tmp_path``.

The family is generated: each program case (with its real exit code) is placed in shell
shapes whose effect on the status is known by construction — shapes where that program's
status is what bash reports, and shapes where it is not (negation, a later failing command, a
failing command before ``&&``, the program name only quoted in text) — so the decision is
shown to follow the parse tree, not the words of the command."""

from __future__ import annotations

import asyncio
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tool_support import call, make_ctx, text_of

from jupyter_toolagent.permissions.shell.exit import no_answer


@dataclass(frozen=True)
class Program:
    command: str
    exit_code: int
    answers_no: bool
    """Exit 1 of this program means "no" (grep, rg, diff, cmp, test, [, [[)."""
    keyword: bool = False
    """A shell keyword (``[[``): cannot run under a wrapper such as ``timeout``."""


PROGRAMS = [
    Program("grep needle hay.txt", 0, True),
    Program("grep absent hay.txt", 1, True),
    Program("grep -c absent hay.txt", 1, True),
    Program("grep -q absent hay.txt", 1, True),
    Program("grep absent missing.txt", 2, True),
    Program("grep -E '(' hay.txt", 2, True),
    Program("rg needle hay.txt", 0, True),
    Program("rg absent hay.txt", 1, True),
    Program("rg absent missing.txt", 2, True),
    Program("diff hay.txt hay.txt", 0, True),
    Program("diff hay.txt other.txt", 1, True),
    Program("diff hay.txt missing.txt", 2, True),
    Program("cmp hay.txt other.txt", 1, True),
    Program("cmp hay.txt missing.txt", 2, True),
    Program("test -f hay.txt", 0, True),
    Program("test -f missing.txt", 1, True),
    Program("test 1 -eq x", 2, True),
    Program("[ -d missing.txt ]", 1, True),
    Program("[ -s hay.txt ]", 0, True),
    Program("[[ -f missing.txt ]]", 1, True, keyword=True),
    Program("[[ -f hay.txt ]]", 0, True, keyword=True),
    Program("false", 1, False),
    Program("cat missing.txt", 1, False),
    Program("ls missing.txt", 2, False),
    Program("sh -c 'exit 1'", 1, False),
    Program("sort --bogus-option hay.txt", 2, False),
]


@dataclass(frozen=True)
class Shape:
    template: str
    status: str
    """``"same"``: the program's status is the command's; ``"zero"``, ``"one"``: fixed;
    ``"negated"``: 1 if the program succeeded, else 0."""
    deciding: bool
    """The program's status is the one bash reports, as far as the text can tell."""
    wraps: bool = False


SHAPES = [
    Shape("{x}", "same", True),
    Shape("cat hay.txt | {x}", "same", True),
    Shape("true; {x}", "same", True),
    Shape("false || {x}", "same", True),
    Shape("{x} 2>/dev/null", "same", True),
    Shape("timeout 10 {x}", "same", True, wraps=True),
    Shape("env LC_ALL=C {x}", "same", True, wraps=True),
    Shape("{x} | cat", "zero", False),
    Shape("{x}; true", "zero", False),
    Shape("{x}; false", "one", False),
    Shape("false && {x}", "one", False),
    Shape("echo {quoted}; false", "one", False),
    Shape("! {x}", "negated", False),
    Shape("({x})", "same", False),
]


def expected_status(program: Program, shape: Shape) -> int:
    return {"same": program.exit_code, "zero": 0, "one": 1,
            "negated": 0 if program.exit_code else 1}[shape.status]


@pytest.fixture
def hay(tmp_path: Path) -> Path:
    (tmp_path / "hay.txt").write_text("a needle here\nand hay\n")
    (tmp_path / "other.txt").write_text("something else\n")
    return tmp_path


cases = st.tuples(st.sampled_from(PROGRAMS), st.sampled_from(SHAPES)).filter(
    lambda c: not (c[0].keyword and c[1].wraps)
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=cases)
def test_a_no_exit_is_a_normal_result_and_every_other_failure_an_error(case: tuple[Program, Shape], hay: Path) -> None:
    program, shape = case
    command = shape.template.format(x=program.command, quoted=shlex.quote(program.command))
    outcome = asyncio.run(call(make_ctx(hay), "Bash", command=command))
    text = text_of(outcome)
    status = expected_status(program, shape)
    answer = status == 1 and shape.deciding and program.answers_no
    if status == 0:
        assert not outcome.is_error, (command, text)
        assert "exit code" not in text.lower(), (command, text)
    elif answer:
        assert not outcome.is_error and outcome.status == "done", (command, text)
        assert text.endswith(")") and "(exit code 1: " in text, (command, text)
    else:
        assert outcome.is_error, (command, text)
        assert text.startswith(f"Exit code {status}"), (command, text)


@pytest.mark.asyncio
async def test_a_grep_without_match_keeps_its_output_and_says_why(hay: Path) -> None:
    outcome = await call(make_ctx(hay), "Bash", command="grep -c absent hay.txt")
    assert not outcome.is_error
    assert text_of(outcome) == "0\n(exit code 1: no match)"
    empty = await call(make_ctx(hay), "Bash", command="grep absent hay.txt")
    assert text_of(empty) == "(exit code 1: no match)"
    differ = await call(make_ctx(hay), "Bash", command="diff hay.txt other.txt")
    assert not differ.is_error and text_of(differ).startswith("1,2c1") and "the inputs differ" in text_of(differ)


@pytest.mark.parametrize(
    ("command", "meaning"),
    [
        ("grep x f", "no match"),
        ("/usr/bin/grep -r x .", "no match"),
        ("X=1 rg x", "no match"),
        ("time grep x f", "no match"),
        ("nice -n 5 diff a b", "the inputs differ"),
        ("[[ -n $A ]]", "the condition is false"),
        ("cd d; [ -f x ]", "the condition is false"),
        ("ls || cmp a b", "the inputs differ"),
        ("grep x f && test -f y", "no match or the condition is false"),
        ("grep x f\n", "no match"),
    ],
)
def test_the_deciding_program_is_found_on_the_parse_tree(command: str, meaning: str) -> None:
    assert no_answer(command, 1) == meaning
    assert no_answer(command, 2) is None and no_answer(command, 0) is None


@pytest.mark.parametrize(
    "command",
    [
        "grep x f | wc -l", "cd d && grep x f", "! grep x f", "(grep x f)", "{ grep x f; }",
        "if grep x f; then :; fi", "set -o pipefail; grep x f | sort", "grep x f || exit 1",
        "grep x f &", "$G x f", "echo 'grep x f'", "grep x f; false", "cd d && [[ -n a && -n b ]]",
        "for f in *; do grep x $f; done", "unparseable 'quote",
    ],
)
def test_anything_else_keeps_exit_1_a_failure(command: str) -> None:
    assert no_answer(command, 1) is None


@pytest.mark.asyncio
async def test_cancelling_a_running_bash_call_logs_nothing(hay: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Cancelling the call cancels its output readers; they are awaited, so the gather that
    held them leaves no "exception was never retrieved" behind (asyncio logs that at
    collection)."""
    import gc

    loop = asyncio.get_running_loop()
    reported: list[dict[str, Any]] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    try:
        with caplog.at_level("DEBUG", logger="asyncio"):
            for _ in range(3):
                task = asyncio.ensure_future(call(make_ctx(hay), "Bash", command="echo started; sleep 30"))
                await asyncio.sleep(0.3)
                task.cancel()
                try:
                    await task
                except asyncio.CancelledError:
                    pass
            for _ in range(3):
                await asyncio.sleep(0)
            gc.collect()
            await asyncio.sleep(0.05)
            gc.collect()
    finally:
        loop.set_exception_handler(previous)
    messages = [str(c.get("message")) + repr(c.get("exception")) for c in reported]
    messages += [r.getMessage() for r in caplog.records if r.name == "asyncio"]
    assert not [m for m in messages if "never retrieved" in m or "CancelledError" in m], messages
