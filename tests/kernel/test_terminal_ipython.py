"""Terminal IPython through a pseudo-terminal: ``%%agent`` asks with a ``[y/N]`` prompt.

The real prompt_toolkit front end is used (as a person would), so a multi-line cell is
submitted with Esc+Enter. The scripted model asks to run code with RunPython, which needs
approval; ``y`` lets it run (the variable it sets exists afterwards), ``n`` denies it (the
variable does not exist and the model is told).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pexpect
import pytest

from kernel_harness import PROJECT

pytestmark = pytest.mark.kernel

TIMEOUT = 30


def start_ipython(workdir: Path) -> pexpect.spawn:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "TOOLAGENT_"))}
    env.update(PYTHONPATH=str(PROJECT), TERM="xterm", MPLBACKEND="Agg", IPYTHONDIR=str(workdir / "ipython"),
               PROMPT_TOOLKIT_NO_CPR="1")
    child = pexpect.spawn(sys.executable, ["-m", "IPython", "--no-banner", "--colors=NoColor", "--no-confirm-exit",
                                           "--HistoryManager.enabled=False"],
                          cwd=str(workdir), env=env, encoding="utf-8", timeout=TIMEOUT, dimensions=(50, 200))
    child.expect(r"In \[1\]:")
    return child


def submit(child: pexpect.spawn, text: str) -> None:
    """Type a (possibly multi-line) cell and submit it with Esc+Enter."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        child.send(line)
        if i < len(lines) - 1:
            child.send("\r")  # Enter inside a cell magic starts a new line
    child.send("\x1b\r")


def run_line(child: pexpect.spawn, line: str, prompt_no: int) -> str:
    child.send(line + "\r")
    child.expect(rf"In \[{prompt_no}\]:")
    return child.before


SCRIPT = (
    "from jupyter_toolagent.models import tool_use_block\n"
    "turns = [[tool_use_block('RunPython', {'code': 'VAR = 6 * 7'})], 'Finished.']"
)


@pytest.mark.parametrize("answer, ran", [("y", True), ("n", False)])
def test_terminal_prompt_allows_or_denies(workdir: Path, answer: str, ran: bool) -> None:
    child = start_ipython(workdir)
    try:
        run_line(child, "%load_ext jupyter_toolagent", 2)
        run_line(child, "%load_ext jupyter_toolagent", 3)  # twice is harmless
        child.send(SCRIPT.replace("\n", "; ") + "\r")
        child.expect(r"In \[4\]:")
        submit(child, "%%agent --script turns\nplease set VAR")
        child.expect(r"RunPython wants to run: .*VAR = 6 \* 7")
        child.expect(r"Allow\? \[y\]es .*\[N\]o.*: ")
        child.send(answer + "\r")
        child.expect("run finished: end_turn")
        child.expect(r"In \[5\]:")
        out = run_line(child, "print('VAR is', globals().get('VAR'))", 6)
        assert ("VAR is 42" in out) == ran, out
        out = run_line(child, "from jupyter_toolagent import current_session; "
                              "s = current_session(); print('PAIRING', s.check_pairing()); "
                              "print('RESULT', s.messages[2]['content'][0].get('is_error', False))", 7)
        assert "PAIRING []" in out, out
        assert f"RESULT {not ran}" in out, out
        child.send("exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
