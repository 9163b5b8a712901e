"""Approvals in terminal IPython: a ``[y/N]`` prompt with a timeout (SPEC §8.3).

The answer is read in a worker thread that polls stdin in short slices, so the wait ends on
time (no answer ⇒ deny) or when the run is aborted, without leaving a thread blocked in
``input()`` that would swallow the next line typed at the IPython prompt.
"""

from __future__ import annotations

import asyncio
import json
import select
import sys
import threading
import time
from typing import Any, TextIO

from ..core.abort import AbortSignal
from ..core.permission_types import ApprovalRequest, ApprovalResponse

POLL_SLICE = 0.1
_FOLD = 300


class TerminalApprover:
    """Asks at the terminal. ``y`` allows once, ``a`` allows always (adds the suggested session
    rule), ``n`` or Enter denies; any other text denies and goes to the model as the reason."""

    def __init__(self, abort: AbortSignal, timeout: float = 600.0, *,
                 stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        self.abort = abort
        self.timeout = timeout
        self._stdin = stdin
        self._stdout = stdout

    async def __call__(self, request: ApprovalRequest) -> ApprovalResponse:
        for _ in range(5):  # let the display print the events queued before this ask first
            await asyncio.sleep(0)
        out = self._stdout or sys.stdout
        out.write(format_question(request, self.timeout))
        out.flush()
        cancel = threading.Event()
        reader = asyncio.ensure_future(asyncio.to_thread(read_line, self._stdin or sys.stdin, self.timeout, cancel))
        aborted = asyncio.ensure_future(self.abort.wait())
        try:
            await asyncio.wait({reader, aborted}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            cancel.set()
            aborted.cancel()
        if not reader.done() or self.abort.aborted:
            out.write("\n")
            return ApprovalResponse("deny", reason="the run was interrupted", decided_by="interrupt")
        line = reader.result()
        if line is None:
            out.write(f"\nno answer within {self.timeout:g} s: denied\n")
            return ApprovalResponse("deny", reason=f"no answer within {self.timeout:g} s", decided_by="timeout")
        return parse_answer(line)


def format_question(request: ApprovalRequest, timeout: float) -> str:
    shown = json.dumps(request.input, ensure_ascii=False)
    if len(shown) > _FOLD:
        shown = shown[: _FOLD // 2] + f" … ({len(shown) - _FOLD} characters folded) … " + shown[-_FOLD // 2 :]
    lines = [f"\n{request.tool_name} wants to run: {shown}"]
    if request.reason:
        lines.append(f"  why it asks: {request.reason}")
    always = f"[a]lways ({request.suggested_rule}) / " if request.suggested_rule else ""
    lines.append(f"Allow? [y]es / {always}[N]o, or type a reason to deny (denied in {timeout:g} s): ")
    return "\n".join(lines)


def parse_answer(line: str) -> ApprovalResponse:
    answer = line.strip()
    low = answer.lower()
    if low in ("y", "yes"):
        return ApprovalResponse("allow", decided_by="user")
    if low in ("a", "always"):
        return ApprovalResponse("allow", always=True, decided_by="user")
    if low in ("", "n", "no"):
        return ApprovalResponse("deny", decided_by="user")
    return ApprovalResponse("deny", reason=answer, decided_by="user")


def read_line(stream: Any, timeout: float, cancel: threading.Event) -> str | None:
    """One line from ``stream``, or None on timeout or cancel. Polls with ``select`` where the
    stream has a file descriptor; otherwise (a test double) reads directly."""
    deadline = time.monotonic() + timeout
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        line = stream.readline()
        return line if line else None
    while not cancel.is_set():
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        ready, _, _ = select.select([fd], [], [], min(POLL_SLICE, left))
        if ready:
            line = stream.readline()
            return line if line else None
    return None
