"""Kernel interrupts (Kernel → Interrupt in JupyterLab's menu) at the three places a run waits:
while the model's answer streams, while an approval is pending, and while a tool runs (a shell
command, and Python code blocking the kernel's thread in ``time.sleep``).

After each interrupt the cell ends promptly, nothing that was interrupted keeps running or
takes effect, and the next ``%%agent`` cell continues the conversation: its request is valid
(the fake server refuses a broken transcript with a 400, and none was refused) and it tells the
model what happened to the interrupted call.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import psutil
import pytest
from lab_page import LabNotebook, open_notebook
from suite_counts import report

from jupyter_toolagent.core.pairing import check_pairing
from jupyter_toolagent.models import ScriptedTurn

pytestmark = pytest.mark.browser

LOAD = "%load_ext jupyter_toolagent"
INTERRUPT_BUDGET = 10.0
INTERRUPTS: dict[str, float] = {}
"""Seconds from the interrupt to the cell's end, by place, for the R3 count."""


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def tool_use_block(name: str, input: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": input}


def user_blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message["content"]
    return [text_block(content)] if isinstance(content, str) else list(content)


def last_user_text(body: dict[str, Any]) -> str:
    return " ".join(b.get("text", "") for b in user_blocks(body["messages"][-1]) if b.get("type") == "text")


def all_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for m in body["messages"] if m["role"] == "user" for b in user_blocks(m) if b.get("type") == "tool_result"]


def result_text(result: dict[str, Any]) -> str:
    content = result.get("content")
    return content if isinstance(content, str) else " ".join(b.get("text", "") for b in content or [])


def conversation(first: Callable[[], Any]) -> Callable[[dict[str, Any]], Any]:
    """The first prompt gets ``first()``; a tool result gets text; "second question" gets
    "Second answer."."""

    def script(body: dict[str, Any]) -> Any:
        if "second question" in last_user_text(body):
            return [text_block("Second answer.")]
        if any(b.get("type") == "tool_result" for b in user_blocks(body["messages"][-1])):
            return [text_block("The call finished.")]
        return first()

    return script


def interrupt_and_wait(nb: LabNotebook, cell: int) -> float:
    clicked = time.monotonic()
    nb.interrupt_kernel()
    nb.wait_cell_done(cell, timeout=30)
    seconds = time.monotonic() - clicked
    print(f"interrupt → cell {cell} finished in {seconds:.2f} s")
    assert seconds < INTERRUPT_BUDGET
    return seconds


def count_interrupt(place: str, seconds: float) -> None:
    """Called once the conversation went on after the interrupt: the interrupt is survived."""
    INTERRUPTS[place] = round(seconds, 2)
    report("r3_browser_interrupts_survived", len(INTERRUPTS))
    report("r3_interrupt_to_cell_end_seconds", dict(INTERRUPTS))


def run_follow_up(nb: LabNotebook, cell: int) -> None:
    """The interrupted cell failed, so Run All stopped before the next one: run it by hand."""
    if "Second answer." in nb.output_text(cell):
        return
    nb.page.wait_for_function(
        "(i) => !document.querySelectorAll('.jp-Notebook .jp-InputPrompt')[i].innerText.includes('*')",
        arg=cell, timeout=30_000)
    nb.run_cell(cell)
    nb.page.wait_for_function(
        "(i) => document.querySelectorAll('.jp-Notebook .jp-Cell')[i].innerText.includes('Second answer.')",
        arg=cell, timeout=30_000)


def assert_conversation_continues(fake_api: Any, tag: str) -> dict[str, Any]:
    bodies = fake_api.bodies(tag)  # asserts that no request was refused (400)
    last = bodies[-1]
    assert "second question" in last_user_text(last)
    assert check_pairing(last["messages"]) == []
    return last


def wait_for_text(nb: LabNotebook, cell: int, text: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while text not in nb.output_text(cell):
        assert time.monotonic() < deadline, f"{text!r} never appeared in cell {cell}: {nb.output_text(cell)[-500:]}"
        time.sleep(0.05)


# --- while the answer streams ----------------------------------------------------------------------------

STORY = "Chapter one. " + " ".join(f"Sentence {n} of a long story that streams slowly." for n in range(60))


def test_interrupt_while_the_answer_streams(page, jupyter_lab, fake_api):
    tag = fake_api.script(conversation(lambda: ScriptedTurn(content=[text_block(STORY)], event_delay=0.1)))
    nb = open_notebook(page, jupyter_lab, "interrupt_stream.ipynb",
                       [LOAD, f"%%agent\n{tag} tell me a long story", f"%%agent\n{tag} second question"])
    nb.run_all()
    wait_for_text(nb, 1, "Chapter one.")
    seconds = interrupt_and_wait(nb, 1)
    shown = nb.output_text(1)
    assert "Sentence 59" not in shown, "the stream was cut, not played to its end"
    run_follow_up(nb, 2)
    last = assert_conversation_continues(fake_api, tag)
    count_interrupt("streaming", seconds)
    sent = " ".join(b.get("text", "") for m in last["messages"] for b in user_blocks(m) if b.get("type") == "text")
    assert "interrupted" in sent.lower(), "the model is told the run was interrupted"
    assert "Sentence 59" not in str(last["messages"]), "the cut answer is not passed off as complete"


# --- while an approval is pending --------------------------------------------------------------------------

def test_interrupt_during_an_approval_wait_for_a_shell_command(page, jupyter_lab, fake_api):
    marker = jupyter_lab.root / "made_by_the_agent.txt"
    tag = fake_api.script(conversation(lambda: [tool_use_block("Bash", {"command": f"touch {marker.name}"})]))
    nb = open_notebook(page, jupyter_lab, "interrupt_approval.ipynb",
                       [LOAD, f"%%agent\n{tag} make a file", f"%%agent\n{tag} second question"])
    nb.run_all()
    nb.wait_button(1, "Allow once")
    seconds = interrupt_and_wait(nb, 1)
    assert nb.buttons_all_disabled(1), "the approval can no longer be given"
    assert nb.card_status(nb.card(1).first) in ("interrupted", "cancelled", "denied")
    run_follow_up(nb, 2)
    last = assert_conversation_continues(fake_api, tag)
    count_interrupt("approval wait", seconds)
    (result,) = all_results(last)
    assert result.get("is_error") is True
    assert not marker.exists(), "the command that was never approved did not run"


# --- while a tool runs --------------------------------------------------------------------------------------

def sleep_processes(seconds: str) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline"]):
        if (process.info.get("cmdline") or [])[-2:] == ["sleep", seconds]:
            found.append(process)
    return found


def test_interrupt_during_a_running_shell_command(page, jupyter_lab, fake_api):
    duration = "31.7"  # a duration no other process uses, to find this one
    tag = fake_api.script(conversation(lambda: [tool_use_block("Bash", {"command": f"sleep {duration}"})]))
    nb = open_notebook(page, jupyter_lab, "interrupt_bash.ipynb",
                       [LOAD, f"%%agent --allow 'Bash(sleep:*)'\n{tag} wait a while", f"%%agent\n{tag} second question"])
    nb.run_all()
    nb.wait_card_status(1, "running")
    deadline = time.monotonic() + 10
    while not sleep_processes(duration):
        assert time.monotonic() < deadline, "the command never started"
        time.sleep(0.1)
    seconds = interrupt_and_wait(nb, 1)
    deadline = time.monotonic() + 5
    while sleep_processes(duration):
        assert time.monotonic() < deadline, "the interrupted command outlived the cell"
        time.sleep(0.1)
    assert nb.card_status(nb.card(1).first) == "interrupted"
    run_follow_up(nb, 2)
    last = assert_conversation_continues(fake_api, tag)
    count_interrupt("running shell command", seconds)
    (result,) = all_results(last)
    assert result.get("is_error") is True and "interrupt" in result_text(result).lower()


def test_interrupt_during_python_that_blocks_the_kernel(page, jupyter_lab, fake_api):
    """While an awaited cell runs, ipykernel's SIGINT handler only schedules a cancellation on the
    loop, which code blocking the kernel's thread never lets run; RunPython makes SIGINT raise in
    the code instead, so the call ends with an error and the run is aborted."""
    code = "import time\ntime.sleep(16)\nslow_done = True"
    tag = fake_api.script(conversation(lambda: [tool_use_block("RunPython", {"code": code})]))
    nb = open_notebook(page, jupyter_lab, "interrupt_python.ipynb",
                       [LOAD, f"%%agent --allow RunPython\n{tag} sleep a while", f"%%agent\n{tag} second question",
                        "print('slow_done defined:', 'slow_done' in globals())"])
    nb.run_all()
    deadline = time.monotonic() + 30
    while not fake_api.answered_for(tag):  # the model's answer (the RunPython call) went out
        assert time.monotonic() < deadline, "the model was never asked"
        time.sleep(0.1)
    nb.wait_card_status(1, "running", timeout=10)
    time.sleep(1.0)  # the code is in time.sleep now
    seconds = interrupt_and_wait(nb, 1)
    run_follow_up(nb, 2)
    last = assert_conversation_continues(fake_api, tag)
    count_interrupt("python blocking the kernel", seconds)
    (result,) = all_results(last)
    assert result.get("is_error") is True
    nb.run_cell(3)
    nb.page.wait_for_function(
        "() => document.querySelectorAll('.jp-Notebook .jp-Cell')[3].innerText.includes('slow_done defined:')",
        timeout=30_000)
    assert "slow_done defined: False" in nb.output_text(3), "the interrupted code did not go on"


def test_python_that_blocks_the_kernel_shows_its_running_card(page, jupyter_lab, fake_api):
    """The person must see what is running when deciding to interrupt: RunPython lets the front
    end draw the call's card (``ctx.flush_events()``) before its code blocks the loop."""
    code = "import time\ntime.sleep(6)"
    tag = fake_api.script(conversation(lambda: [tool_use_block("RunPython", {"code": code})]))
    nb = open_notebook(page, jupyter_lab, "blocking_card.ipynb", [LOAD, f"%%agent --allow RunPython\n{tag} sleep"])
    nb.run_all()
    try:
        nb.wait_card_status(1, "running", timeout=5)
    finally:
        nb.wait_cell_done(1, timeout=30)
