"""The terminal's ``[y/N]`` approver: answers, timeout, abort."""

from __future__ import annotations

import asyncio
import io
import os
import threading
import time

import pytest

from jupyter_toolagent.core.abort import AbortSignal
from jupyter_toolagent.core.permission_types import ApprovalRequest
from jupyter_toolagent.notebook.terminal import TerminalApprover, parse_answer, read_line

REQUEST = ApprovalRequest("Bash", {"command": "rm -rf build"}, "toolu_1", "Bash is not allowed by any rule", "Bash(rm:*)")


@pytest.mark.parametrize("line, behavior, always, reason", [
    ("y\n", "allow", False, ""), ("YES\n", "allow", False, ""), ("a\n", "allow", True, ""),
    ("\n", "deny", False, ""), ("n\n", "deny", False, ""), ("use git clean instead\n", "deny", False, "use git clean instead"),
])
def test_answers(line: str, behavior: str, always: bool, reason: str) -> None:
    answer = parse_answer(line)
    assert (answer.behavior, answer.always, answer.reason, answer.decided_by) == (behavior, always, reason, "user")


@pytest.mark.asyncio
async def test_prompt_shows_the_call_and_reads_the_answer() -> None:
    out = io.StringIO()
    answer = await TerminalApprover(AbortSignal(), 5, stdin=io.StringIO("a\n"), stdout=out)(REQUEST)
    assert answer.behavior == "allow" and answer.always
    shown = out.getvalue()
    assert 'Bash wants to run: {"command": "rm -rf build"}' in shown
    assert "why it asks: Bash is not allowed by any rule" in shown
    assert "[a]lways (Bash(rm:*))" in shown and "[N]o" in shown


@pytest.mark.asyncio
async def test_no_answer_in_time_is_a_deny() -> None:
    read_end, write_end = os.pipe()
    try:
        with os.fdopen(read_end, "r", closefd=False) as stdin:
            started = time.monotonic()
            answer = await TerminalApprover(AbortSignal(), 0.3, stdin=stdin, stdout=io.StringIO())(REQUEST)
        assert answer.behavior == "deny" and answer.decided_by == "timeout"
        assert 0.25 < time.monotonic() - started < 2
    finally:
        os.close(read_end)
        os.close(write_end)


@pytest.mark.asyncio
async def test_abort_ends_the_wait() -> None:
    read_end, write_end = os.pipe()
    abort = AbortSignal()
    try:
        with os.fdopen(read_end, "r", closefd=False) as stdin:
            asyncio.get_running_loop().call_later(0.2, abort.abort)
            answer = await TerminalApprover(abort, 30, stdin=stdin, stdout=io.StringIO())(REQUEST)
        assert answer.behavior == "deny" and answer.decided_by == "interrupt"
    finally:
        os.close(read_end)
        os.close(write_end)


def test_read_line_from_a_pipe() -> None:
    read_end, write_end = os.pipe()
    os.write(write_end, b"y\n")
    with os.fdopen(read_end, "r") as stdin:
        assert read_line(stdin, 2, threading.Event()) == "y\n"
    os.close(write_end)
