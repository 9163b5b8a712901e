"""A kernel interrupt stops RunPython code that blocks the kernel's thread (``time.sleep``).

While an awaited cell runs, ipykernel's SIGINT handler only schedules a cancellation on the
loop, which blocking code never lets run. RunPython makes SIGINT raise in the code while it
runs; afterwards the kernel's own interrupt handling is intact (an awaiting cell is cancelled,
a blocking cell gets KeyboardInterrupt) and the conversation continues.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kernel_harness import collect_output, execute_and_wait, kernel_env, running_kernel, wait_reply

pytestmark = pytest.mark.kernel

SETUP = """
%load_ext jupyter_toolagent
from jupyter_toolagent import current_session
from jupyter_toolagent.models import tool_use_block
code = "import pathlib, time\\npathlib.Path('started').touch()\\ntime.sleep(20)\\nslow_done = True"
sleeper = [[tool_use_block('RunPython', {'code': code})], 'The call finished.']
quick = ['quick answer']
"""

REPORT = """
s = current_session()
result = s.messages[2]['content'][0]
print('SLOW_DONE', 'slow_done' in globals())
print('PAIRING', s.check_pairing())
print('IS_ERROR', result.get('is_error'))
print('INTERRUPTED', 'KeyboardInterrupt' in str(result.get('content')))
print('REASON', s.runs[-1].finished.reason)
"""


def wait_for_file(path: Path, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.05)


def interrupt_cell(km, kc, code: str, wait: float = 1.0) -> dict:  # noqa: ANN001
    msg_id = kc.execute(code)
    time.sleep(wait)
    km.interrupt_kernel()
    reply = wait_reply(kc, msg_id, timeout=20)
    collect_output(kc, msg_id)
    return reply


def test_interrupt_stops_blocking_run_python_code_and_the_kernel_keeps_its_interrupts(
        kernel_python: str, workdir: Path) -> None:
    with running_kernel(kernel_python, kernel_env(None), workdir) as (km, kc):
        reply, out = execute_and_wait(kc, SETUP)
        assert reply["status"] == "ok", out
        agent = kc.execute("%%agent --allow RunPython --script sleeper\nsleep a while")
        wait_for_file(workdir / "started")
        time.sleep(0.5)  # in time.sleep now
        sent = time.monotonic()
        km.interrupt_kernel()
        reply = wait_reply(kc, agent, timeout=30)
        latency = time.monotonic() - sent
        collect_output(kc, agent)
        _, report = execute_and_wait(kc, REPORT)
        # the kernel's own interrupt handling is back: an awaiting cell, then a blocking one
        # (in short slices: ipykernel 7 notices an interrupt only when its loop wakes up)
        awaiting = interrupt_cell(km, kc, "import asyncio\nfor _ in range(300):\n    await asyncio.sleep(0.1)")
        blocking = interrupt_cell(km, kc, "import time\ntime.sleep(30)")
        again, out = execute_and_wait(kc, "%%agent --script quick\nanything")
        _, pairing = execute_and_wait(kc, "print('PAIRING', current_session().check_pairing())")
    assert latency < 3.0, f"the interrupted code ran on for {latency:.1f} s"
    # the agent cell ends as interrupted (so Run All stops there), like an interrupt during its wait
    assert reply["status"] == "error" and reply["ename"] == "KeyboardInterrupt", reply
    assert "SLOW_DONE False" in report, report
    assert "PAIRING []" in report and "IS_ERROR True" in report and "INTERRUPTED True" in report, report
    assert "REASON aborted" in report, report
    assert awaiting["status"] == "error" and awaiting["ename"] in ("CancelledError", "KeyboardInterrupt"), awaiting
    assert blocking["status"] == "error" and blocking["ename"] == "KeyboardInterrupt", blocking
    assert again["status"] == "ok", out
    assert "PAIRING []" in pairing
    print(f"[measure] interrupt -> RunPython cell ended {latency:.3f} s (reply {reply['status']})")
