"""A saved session survives a killed kernel (SPEC §14), through real kernels and the real SDK.

Kernel 1 runs ``%%agent --session lab`` against the fake server: two RunPython calls (one
prints the API key from the environment), then the server stalls the third response and the
test SIGKILLs the kernel by pid, mid-run. Kernel 2, started fresh in the same directory:
``%agent sessions`` lists ``lab``; ``%agent resume lab`` loads it (valid pairing, nothing to
repair); the next *plain* ``%%agent`` cell continues it — the request the server receives
carries kernel 1's tool results. The key is in none of the saved bytes.
"""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path
from typing import Any

import pytest

from jupyter_toolagent.core.pairing import check_pairing
from jupyter_toolagent.testing import FakeAnthropicServer
from jupyter_toolagent.models import ScriptedTurn, text_block, tool_use_block
from kernel_harness import TEST_KEY, execute_and_wait, kernel_env, kernel_spec_manager

pytestmark = pytest.mark.kernel


class Script:
    def __init__(self) -> None:
        self.stalled = threading.Event()
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, body: dict[str, Any]) -> Any:
        self.bodies.append(body)
        n = len(self.bodies)
        if n == 1:
            return [tool_use_block("RunPython", {"code": "import os\nprint('key is', os.environ['ANTHROPIC_API_KEY'])"})]
        if n == 2:
            return [tool_use_block("RunPython", {"code": "MEASURED = 41 + 1\nprint(MEASURED)"})]
        if n == 3:
            self.stalled.set()
            return ScriptedTurn(content=[text_block("never delivered")], delay=30)
        return "Continued from where we stopped: MEASURED was 42."


def start_kernel(python: str, env: dict[str, str], workdir: Path) -> tuple[Any, Any]:
    from jupyter_client import KernelManager

    ksm, name = kernel_spec_manager(python, workdir)
    km = KernelManager(kernel_name=name, kernel_spec_manager=ksm)
    km.start_kernel(env=env, cwd=str(workdir))
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    return km, kc


def stop_kernel(km: Any, kc: Any) -> None:
    kc.stop_channels()
    try:
        km.shutdown_kernel(now=True)
    except Exception:
        pass


def test_a_killed_kernel_leaves_a_session_that_resumes(tmp_path: Path) -> None:
    import sys

    script = Script()
    workdir = tmp_path / "work"
    workdir.mkdir()
    with FakeAnthropicServer(turns=script) as server:
        env = kernel_env(server.base_url)
        km, kc = start_kernel(sys.executable, env, workdir)
        try:
            reply, _ = execute_and_wait(kc, "%load_ext jupyter_toolagent")
            assert reply["status"] == "ok"
            kc.execute(f"%%agent --session lab --allow RunPython --no-interactive\n"
                       f"Measure it. (My key {TEST_KEY} must stay out of any file.)")
            assert script.stalled.wait(60), "the run reached its third request"
            pid = km.provisioner.pid
            assert pid and pid != os.getpid()
            os.kill(pid, signal.SIGKILL)  # mid-run: the third response never arrives
            km.provisioner.process.wait(timeout=10) if getattr(km.provisioner, "process", None) else None
        finally:
            stop_kernel(km, kc)

        saved = workdir / ".toolagent" / "sessions" / "lab.jsonl"
        data = saved.read_bytes()
        assert TEST_KEY.encode() not in data and TEST_KEY[::-1].encode() not in data
        assert b'"type":"session"' in data.splitlines()[0]

        km, kc = start_kernel(sys.executable, env, workdir)
        try:
            execute_and_wait(kc, "%load_ext jupyter_toolagent")
            reply, listing = execute_and_wait(kc, "%agent sessions")
            assert reply["status"] == "ok" and "lab" in listing and "saved in .toolagent/sessions/" in listing, listing
            reply, resumed = execute_and_wait(kc, "%agent resume lab")
            assert reply["status"] == "ok", resumed
            assert "resumed session 'lab'" in resumed and "repaired" not in resumed, resumed
            reply, state = execute_and_wait(kc, "from jupyter_toolagent import current_session\n"
                                                 "s = current_session()\n"
                                                 "print(s.name, len(s.messages), s.check_pairing(), s.resumed.kernel_restarted)")
            assert state.split() == ["lab", "5", "[]", "True"], state
            reply, out = execute_and_wait(kc, "%%agent --no-interactive\nGo on.", timeout=60)
            assert reply["status"] == "ok", out
            assert "Continued from where we stopped" in out
        finally:
            stop_kernel(km, kc)

    last = script.bodies[-1]
    assert check_pairing(last["messages"]) == []
    sent = str(last["messages"])
    assert "42" in sent and "Measure it." in sent, "the plain cell continued the resumed conversation"
    assert last["messages"][-1]["content"][-1]["text"].startswith("Go on.") or "Go on." in str(last["messages"][-1])
    assert "The kernel was restarted since this conversation last ran" in str(last["messages"][-1]), \
        "the resumed cell's kernel-change note says the kernel restarted (SPEC §15)"
    data = saved.read_bytes()
    assert TEST_KEY.encode() not in data
    assert data.count(b'"type":"process"') == 1, "the resuming kernel announced itself once"
