"""`kernel_run` in real kernels: a click reaches an awaiting cell, queued cells keep their order
and the kernel's stop-on-error rule, an interrupt ends the wait and leaves the kernel usable.

A click is what JupyterLab sends when a button is pressed: a ``comm_msg`` with
``{"method": "custom", "content": {"event": "click"}}`` to the button's comm, sent here on the
shell channel while the cell is still running.
"""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from kernel_harness import collect_output, execute_and_wait, kernel_env, running_kernel, wait_reply

pytestmark = pytest.mark.kernel

SETUP = """
import asyncio, time
import ipywidgets as w
from jupyter_toolagent.core.abort import AbortSignal
from jupyter_toolagent.notebook import kernel_run
button = w.Button(description="Allow")
display(button)
clicked = asyncio.get_running_loop().create_future()
button.on_click(lambda _: clicked.done() or clicked.set_result(time.monotonic()))
print("COMM", button.comm.comm_id, kernel_run.strategy_for(get_ipython()))
"""

WAIT_FOR_CLICK = """
started = time.monotonic()
at = await kernel_run.run_in_kernel(get_ipython(), asyncio.wait_for(clicked, 20), AbortSignal())
print(f"CLICKED after {at - started:.3f} s")
"""


def click(kc: Any, comm_id: str) -> None:
    msg = kc.session.msg("comm_msg", {"comm_id": comm_id, "data": {"method": "custom", "content": {"event": "click"}}})
    kc.shell_channel.send(msg)


def setup_button(kc: Any) -> tuple[str, str]:
    reply, out = execute_and_wait(kc, SETUP)
    assert reply["status"] == "ok", out
    match = re.search(r"COMM (\w+) ([\w-]+)", out)
    assert match, out
    return match.group(1), match.group(2)


def test_click_reaches_an_awaiting_cell_and_the_queued_cell_runs_after_it(kernel_python: str, workdir) -> None:
    with running_kernel(kernel_python, kernel_env(None), workdir) as (_, kc):
        comm_id, strategy = setup_button(kc)
        assert strategy == ("pump" if "ipykernel6" in kernel_python else "await")
        waiting = kc.execute(WAIT_FOR_CLICK)
        queued = kc.execute("print('QUEUED ran')")
        time.sleep(1.0)  # both requests are in the kernel now; the first one waits
        sent = time.monotonic()
        click(kc, comm_id)
        first = wait_reply(kc, waiting, timeout=30)
        latency = time.monotonic() - sent
        second = wait_reply(kc, queued, timeout=30)
        out_first = collect_output(kc, waiting)
        out_second = collect_output(kc, queued)
    assert first["status"] == "ok", out_first
    assert "CLICKED after" in out_first
    assert latency < 2.0, f"click took {latency:.2f} s to reach the cell"
    assert second["status"] == "ok" and "QUEUED ran" in out_second
    assert second["execution_count"] == first["execution_count"] + 1
    print(f"[measure] {strategy}: click -> cell reply {latency:.3f} s")


SLOW_FAILING_CELL = """
async def slow_failure():
    await asyncio.sleep(1.0)
    raise RuntimeError("the agent cell failed")
await kernel_run.run_in_kernel(get_ipython(), slow_failure(), AbortSignal())
"""


@pytest.mark.parametrize("stop_on_error", [True, False])
def test_a_failing_awaiting_cell_keeps_stop_on_error(kernel_python: str, workdir, stop_on_error: bool) -> None:
    with running_kernel(kernel_python, kernel_env(None), workdir) as (_, kc):
        setup_button(kc)
        failing = kc.execute(SLOW_FAILING_CELL, stop_on_error=stop_on_error)
        queued = kc.execute("print('QUEUED ran')")
        first = wait_reply(kc, failing, timeout=30)
        second = wait_reply(kc, queued, timeout=30)
        out_second = collect_output(kc, queued)
        after, out_after = execute_and_wait(kc, "print('LATER ran')")
    assert first["status"] == "error" and first["ename"] == "RuntimeError"
    if stop_on_error:
        assert second["status"] == "aborted"
        assert "QUEUED ran" not in out_second
    else:
        assert second["status"] == "ok" and "QUEUED ran" in out_second
    assert after["status"] == "ok" and "LATER ran" in out_after


def test_interrupt_ends_the_wait_and_later_interrupts_still_work(kernel_python: str, workdir) -> None:
    with running_kernel(kernel_python, kernel_env(None), workdir) as (km, kc):
        comm_id, _ = setup_button(kc)
        # a click handled during the wait (6.x: a nested dispatch) must not break SIGINT later
        msg_id = kc.execute("""
abort = AbortSignal()
async def until_aborted():
    await abort.wait()
    return abort.reason
try:
    await kernel_run.run_in_kernel(get_ipython(), until_aborted(), abort)
finally:
    print("ABORT REASON", abort.reason)
""")
        time.sleep(1.0)
        click(kc, comm_id)
        time.sleep(0.5)
        sent = time.monotonic()
        km.interrupt_kernel()
        reply = wait_reply(kc, msg_id, timeout=20)
        latency = time.monotonic() - sent
        out = collect_output(kc, msg_id)
        assert reply["status"] == "error", out
        assert reply["ename"] == "KeyboardInterrupt", reply
        assert "ABORT REASON interrupted (kernel interrupt)" in out
        assert latency < 3.0
        clicked, out_clicked = execute_and_wait(kc, "print('CLICK SEEN', clicked.done())")
        assert "CLICK SEEN True" in out_clicked
        # a plain blocking cell afterwards is still interruptible
        sleeping = kc.execute("import time; time.sleep(30)")
        time.sleep(1.0)
        km.interrupt_kernel()
        slept = wait_reply(kc, sleeping, timeout=20)
        assert slept["status"] == "error" and slept["ename"] == "KeyboardInterrupt"
    print(f"[measure] interrupt -> cell reply {latency:.3f} s")
