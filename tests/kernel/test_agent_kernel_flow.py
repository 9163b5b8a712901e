"""``%%agent`` cells driven through jupyter_client, as a front end that can click would.

* An ask is answered by clicking the approval card's "Allow once" button (the ``comm_msg`` a
  browser sends) while the cell is running — on ipykernel 7 through the awaited cell, on 6.29
  through the pump.
* A cell queued behind an agent cell runs after it, in order; when the agent cell fails with
  stop-on-error the queued cell is aborted, as the kernel does for any failing cell.
* A kernel interrupt aborts the run, the transcript stays valid and the next cell works.
* With ``%autoawait off`` the cell still runs (synchronously) and asks go to policy.
"""

from __future__ import annotations

import queue
import time
from typing import Any

import pytest

from kernel_harness import collect_output, execute_and_wait, kernel_env, running_kernel, wait_reply

pytestmark = pytest.mark.kernel

SETUP = """
%load_ext jupyter_toolagent
import asyncio
from jupyter_toolagent import current_session
from jupyter_toolagent.models import ScriptedTurn, tool_use_block, text_block
asks = [[tool_use_block('RunPython', {'code': 'APPROVED = 6 * 7'})], 'Done.']
slow = [ScriptedTurn(content=[text_block('slowly')], delay=1.5)]
async def slow_then_nothing(body):
    await asyncio.sleep(1.5)
    return None   # no turn: the run ends with an error
very_slow = [ScriptedTurn(content=[text_block('never')], delay=60)]
quick = ['quick answer']
"""


def find_button(kc: Any, label: str, timeout: float = 20) -> str:
    """The comm id of the first widget button labelled ``label`` opened on iopub."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            msg = kc.get_iopub_msg(timeout=0.5)
        except queue.Empty:
            continue
        if msg["msg_type"] == "comm_open":
            state = msg["content"].get("data", {}).get("state", {})
            if state.get("_model_name") == "ButtonModel" and state.get("description") == label:
                return msg["content"]["comm_id"]
    raise TimeoutError(f"no {label!r} button appeared")


def click(kc: Any, comm_id: str) -> None:
    kc.shell_channel.send(kc.session.msg(
        "comm_msg", {"comm_id": comm_id, "data": {"method": "custom", "content": {"event": "click"}}}))


def setup(kc: Any) -> None:
    reply, out = execute_and_wait(kc, SETUP)
    assert reply["status"] == "ok", out


def test_clicking_allow_once_lets_the_call_run(kernel_python: str, workdir) -> None:
    with running_kernel(kernel_python, kernel_env(None), workdir) as (_, kc):
        setup(kc)
        msg_id = kc.execute("%%agent --script asks\nplease compute", allow_stdin=True)
        comm_id = find_button(kc, "Allow once")
        time.sleep(0.2)
        sent = time.monotonic()
        click(kc, comm_id)
        reply = wait_reply(kc, msg_id, timeout=30)
        latency = time.monotonic() - sent
        assert reply["status"] == "ok", reply
        _, out = execute_and_wait(kc, "print('APPROVED', globals().get('APPROVED'))\n"
                                      "print('PAIRING', current_session().check_pairing())")
    assert "APPROVED 42" in out
    assert "PAIRING []" in out
    print(f"[measure] click 'Allow once' -> cell finished {latency:.3f} s")


def test_queued_cell_runs_after_the_agent_cell_in_order(kernel_python: str, workdir) -> None:
    with running_kernel(kernel_python, kernel_env(None), workdir) as (_, kc):
        setup(kc)
        agent = kc.execute("%%agent --script slow\nwork slowly")
        queued = kc.execute("print('QUEUED ran after', len(current_session().messages), 'messages')")
        first = wait_reply(kc, agent, timeout=30)
        second = wait_reply(kc, queued, timeout=30)
        out = collect_output(kc, queued)
    assert first["status"] == "ok"
    assert second["status"] == "ok" and second["execution_count"] == first["execution_count"] + 1
    assert "QUEUED ran after 2 messages" in out  # it saw the finished run


@pytest.mark.parametrize("stop_on_error", [True, False])
def test_failing_agent_cell_keeps_stop_on_error(kernel_python: str, workdir, stop_on_error: bool) -> None:
    with running_kernel(kernel_python, kernel_env(None), workdir) as (_, kc):
        setup(kc)
        agent = kc.execute("%%agent --script slow_then_nothing\nfail please", stop_on_error=stop_on_error)
        queued = kc.execute("print('QUEUED ran')")
        first = wait_reply(kc, agent, timeout=30)
        second = wait_reply(kc, queued, timeout=30)
        out = collect_output(kc, queued)
        _, check = execute_and_wait(kc, "print('PAIRING', current_session().check_pairing())")
    assert first["status"] == "error" and first["ename"] == "AgentRunFailed", first
    assert "script" in first["evalue"]
    if stop_on_error:
        assert second["status"] == "aborted" and "QUEUED ran" not in out
    else:
        assert second["status"] == "ok" and "QUEUED ran" in out
    assert "PAIRING []" in check


def test_interrupt_aborts_the_run_and_the_next_cell_works(kernel_python: str, workdir) -> None:
    with running_kernel(kernel_python, kernel_env(None), workdir) as (km, kc):
        setup(kc)
        agent = kc.execute("%%agent --script very_slow\nthis will be interrupted")
        time.sleep(1.5)
        sent = time.monotonic()
        km.interrupt_kernel()
        reply = wait_reply(kc, agent, timeout=20)
        latency = time.monotonic() - sent
        # wait for idle: a request sent right after an error reply can be aborted by the kernel's
        # stop-on-error window (ipykernel aborts what reached its socket before it went idle)
        collect_output(kc, agent)
        _, check = execute_and_wait(kc, "s = current_session()\nprint('PAIRING', s.check_pairing())\n"
                                        "print('REASON', s.runs[-1].finished.reason)")
        again, out = execute_and_wait(kc, "%%agent --script quick\nanything")
        _, check2 = execute_and_wait(kc, "print('PAIRING', current_session().check_pairing(), len(current_session().messages))")
    assert reply["status"] == "error" and reply["ename"] == "KeyboardInterrupt", reply
    assert latency < 3.0
    assert "PAIRING []" in check and "REASON aborted" in check
    assert again["status"] == "ok", out
    assert "PAIRING [] 4" in check2  # prompt + note of the interrupted run, then the new exchange
    print(f"[measure] interrupt -> agent cell ended {latency:.3f} s")


def test_without_autoawait_the_cell_still_runs_and_asks_go_to_policy(kernel_python: str, workdir) -> None:
    with running_kernel(kernel_python, kernel_env(None), workdir) as (_, kc):
        setup(kc)
        off, _ = execute_and_wait(kc, "%autoawait off")
        reply, out = execute_and_wait(kc, "%%agent --script asks\nplease compute", allow_stdin=True)
        _, check = execute_and_wait(kc, "print('PAIRING', current_session().check_pairing(), globals().get('APPROVED'))")
    assert off["status"] == "ok" and reply["status"] == "ok", out
    assert "without top-level await" in out and "RunPython was not run" in out
    assert "PAIRING [] None" in check
