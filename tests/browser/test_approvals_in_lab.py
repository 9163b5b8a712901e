"""Approvals and aborts in a real JupyterLab, clicked in a real (headless) Chromium.

Each test writes its own notebook, scripts its own conversation on the shared fake API (the
prompt carries the script's tag), runs the notebook the way a person does (Run All, clicks,
the Kernel menu) and checks both what the page shows and what the model was sent.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from lab_page import LabNotebook, open_notebook

pytestmark = pytest.mark.browser

LOAD = "%load_ext jupyter_toolagent"


# --- scripting the model and reading what it was sent ---------------------------------------------
def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def tool_use_block(name: str, input: dict[str, Any]) -> dict[str, Any]:
    """A tool_use block without an id: the fake server assigns a fresh one."""
    return {"type": "tool_use", "name": name, "input": input}


def last_user_blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    content = body["messages"][-1]["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in last_user_blocks(body) if b.get("type") == "tool_result"]


def all_tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for message in body["messages"]:
        if message["role"] == "user" and isinstance(message["content"], list):
            found += [b for b in message["content"] if b.get("type") == "tool_result"]
    return found


def last_user_text(body: dict[str, Any]) -> str:
    return " ".join(b.get("text", "") for b in last_user_blocks(body) if b.get("type") == "text")


def result_text(result: dict[str, Any]) -> str:
    content = result.get("content")
    if isinstance(content, str):
        return content
    return " ".join(b.get("text", "") for b in content or [] if b.get("type") == "text")


def record_latency(latency_log: list, test: str, click_at: float, decided_at: float) -> float:
    latency = decided_at - click_at
    latency_log.append({"test": test, "click_to_decision_s": round(latency, 4)})
    print(f"\n[B9] {test}: click → approver returned in {latency * 1000:.0f} ms")
    return latency


# --- approvals --------------------------------------------------------------------------------------
def test_allow_runs_the_code_and_the_card_shows_the_result(page, jupyter_lab, fake_api, latency_log):
    code = "agent_value = 6 * 7\nprint('agent set', agent_value)"

    def script(body):
        if not tool_results(body):
            return [text_block("I will set **agent_value**."), tool_use_block("RunPython", {"code": code})]
        return [text_block("Done: `agent_value` is set.")]

    tag = fake_api.script(script)
    nb = open_notebook(page, jupyter_lab, "allow.ipynb", [LOAD, f"%%agent\n{tag} set agent_value", "print('after:', agent_value)"])
    started = time.monotonic()
    nb.run_all()
    allow = nb.wait_button(1, "Allow once")
    card = nb.card(1).first
    assert "agent_value = 6 * 7" in card.inner_text()  # the code to approve is shown in full
    assert nb.card_status(card) == "waiting"
    click = nb.click(allow)
    nb.wait_all_done()
    print(f"test wall time after page ready: {time.monotonic() - started:.1f} s")

    assert "after: 42" in nb.output_text(2)
    card_text = nb.card(1).first.inner_text()
    assert nb.card_status(nb.card(1).first) == "done"
    assert "agent set 42" in card_text
    assert "Allowed once by you" in card_text
    assert "Done: agent_value is set." in nb.output_text(1)
    assert nb.buttons_all_disabled(1)
    record_latency(latency_log, "allow_once", click.at, nb.decided_at(1))
    bodies = fake_api.bodies(tag, expected=2)
    (result,) = tool_results(bodies[-1])
    assert not result.get("is_error") and "42" in result_text(result)


def test_deny_reason_reaches_the_model(page, jupyter_lab, fake_api, latency_log):
    def script(body):
        if not tool_results(body):
            return [tool_use_block("RunPython", {"code": "import shutil; shutil.rmtree('data')"})]
        return [text_block("Understood, I will not delete anything.")]

    tag = fake_api.script(script)
    nb = open_notebook(page, jupyter_lab, "deny.ipynb", [LOAD, f"%%agent\n{tag} clean up"])
    nb.run_all()
    nb.wait_button(1, "Deny")
    reason = "never delete the data folder, archive it instead"
    nb.cell(1).locator("input[placeholder^='Reason for denying']").fill(reason)
    click = nb.click(nb.button(1, "Deny").first)
    nb.wait_all_done()

    assert nb.card_status(nb.card(1).first) == "denied"
    assert "Understood, I will not delete anything." in nb.output_text(1)
    assert nb.buttons_all_disabled(1)
    record_latency(latency_log, "deny", click.at, nb.decided_at(1))
    bodies = fake_api.bodies(tag, expected=2)
    (result,) = tool_results(bodies[-1])
    assert result.get("is_error") is True
    assert reason in result_text(result)


def test_always_allow_is_not_asked_again_in_the_same_cell(page, jupyter_lab, fake_api, latency_log):
    code = "hits = globals().get('hits', 0) + 1\nprint('hit', hits)"

    def script(body):
        if len(all_tool_results(body)) < 2:
            return [tool_use_block("RunPython", {"code": code})]
        return [text_block("Both calls ran.")]

    tag = fake_api.script(script)
    nb = open_notebook(page, jupyter_lab, "always.ipynb", [LOAD, f"%%agent\n{tag} count twice", "print('hits =', hits)"])
    nb.run_all()
    click = nb.click(nb.wait_button(1, "Always allow"))
    nb.wait_all_done()

    assert "hits = 2" in nb.output_text(2)
    assert nb.button(1, "Always allow").count() == 1  # one ask, one set of buttons
    assert nb.card(1).count() == 2
    first = nb.card(1).first.inner_text()
    assert "Always allowed by you" in first and "RunPython" in first  # and the rule it added
    record_latency(latency_log, "always_allow", click.at, nb.decided_at(1))
    bodies = fake_api.bodies(tag, expected=3)
    results = all_tool_results(bodies[-1])
    assert len(results) == 2 and not any(r.get("is_error") for r in results)


def test_cell_queued_behind_the_agent_cell_runs_after_it(page, jupyter_lab, fake_api, latency_log):
    def script(body):
        if not tool_results(body):
            return [tool_use_block("RunPython", {"code": "queued_value = 'from the agent'"})]
        return [text_block("Set.")]

    tag = fake_api.script(script)
    nb = open_notebook(page, jupyter_lab, "queued.ipynb", [LOAD, f"%%agent\n{tag} set queued_value", "print('queued saw', queued_value)"])
    nb.run_all()
    allow = nb.wait_button(1, "Allow once")
    time.sleep(0.5)
    assert nb.prompt(2) == "[*]:"  # waiting behind the agent cell, not run yet
    assert nb.output_text(2) == ""
    click = nb.click(allow)
    nb.wait_all_done()
    assert "queued saw from the agent" in nb.output_text(2)
    assert nb.execution_count(2) == nb.execution_count(1) + 1
    record_latency(latency_log, "queued_allow", click.at, nb.decided_at(1))


# --- stopping and interrupting ------------------------------------------------------------------------
def _two_cell_script(first_call: dict[str, Any]):
    """First prompt: one tool call, then text; the follow-up prompt ("second question"): text."""

    def script(body):
        if "second question" in last_user_text(body):
            return [text_block("Second answer.")]
        if not tool_results(body):
            return [first_call]
        return [text_block("Finished the first task.")]

    return script


def _assert_valid_follow_up(nb: LabNotebook, fake_api: Any, tag: str, agent_cell: int) -> None:
    from jupyter_toolagent import check_pairing

    assert "Second answer." in nb.output_text(agent_cell)
    bodies = fake_api.bodies(tag)  # every request valid: the server answers 400 to a broken transcript
    assert "second question" in last_user_text(bodies[-1])
    assert check_pairing(bodies[-1]["messages"]) == []


def _stop_while_running(nb: LabNotebook, fake_api: Any, tag: str, agent_cell: int) -> None:
    nb.wait_card_status(agent_cell, "running")
    time.sleep(0.5)
    clicked = time.monotonic()
    nb.click(nb.cell(agent_cell).locator("button.jp-toolagent-stop"))
    nb.wait_cell_done(agent_cell, timeout=20)
    stop_seconds = time.monotonic() - clicked
    print(f"\nStop → cell finished in {stop_seconds:.2f} s")
    assert stop_seconds < 10
    assert nb.card_status(nb.card(agent_cell).first) == "interrupted"
    assert nb.cell(agent_cell).locator("[data-run-status]").first.get_attribute("data-run-status") == "stopped"
    nb.wait_cell_done(agent_cell + 1, timeout=30)
    _assert_valid_follow_up(nb, fake_api, tag, agent_cell + 1)


def test_stop_during_a_slow_shell_command_ends_the_run_and_the_next_cell_works(page, jupyter_lab, fake_api):
    tag = fake_api.script(_two_cell_script(tool_use_block("Bash", {"command": "sleep 30"})))
    nb = open_notebook(
        page, jupyter_lab, "stop_bash.ipynb",
        [LOAD, f"%%agent --allow 'Bash(sleep:*)'\n{tag} sleep a while", f"%%agent\n{tag} second question"],
    )
    nb.run_all()
    _stop_while_running(nb, fake_api, tag, 1)


SLOW_USER_TOOL = '''\
import asyncio
from jupyter_toolagent import tool

@tool
async def wait_a_while(seconds: float) -> str:
    """Wait, then report."""
    await asyncio.sleep(seconds)
    return "waited"
'''


def test_stop_during_a_slow_user_tool_ends_the_run_and_the_next_cell_works(page, jupyter_lab, fake_api):
    tag = fake_api.script(_two_cell_script(tool_use_block("wait_a_while", {"seconds": 30})))
    nb = open_notebook(
        page, jupyter_lab, "stop_tool.ipynb",
        [LOAD, SLOW_USER_TOOL, f"%%agent --allow wait_a_while\n{tag} wait a while", f"%%agent\n{tag} second question"],
    )
    nb.run_all()
    _stop_while_running(nb, fake_api, tag, 2)


def test_stop_during_run_python_awaiting(page, jupyter_lab, fake_api):
    """RunPython code that awaits leaves the loop free: Stop must take effect at the await."""
    code = "import asyncio\nawait asyncio.sleep(30)\nslow_done = True"
    tag = fake_api.script(_two_cell_script(tool_use_block("RunPython", {"code": code})))
    nb = open_notebook(
        page, jupyter_lab, "stop_python.ipynb",
        [LOAD, f"%%agent --allow RunPython\n{tag} sleep a while", f"%%agent\n{tag} second question"],
    )
    nb.run_all()
    _stop_while_running(nb, fake_api, tag, 1)


def test_kernel_interrupt_during_an_approval_wait(page, jupyter_lab, fake_api):
    tag = fake_api.script(_two_cell_script(tool_use_block("RunPython", {"code": "interrupted_value = 1"})))
    nb = open_notebook(page, jupyter_lab, "interrupt.ipynb", [LOAD, f"%%agent\n{tag} set a value", f"%%agent\n{tag} second question"])
    nb.run_all()
    nb.wait_button(1, "Allow once")
    clicked = time.monotonic()
    nb.interrupt_kernel()
    nb.wait_cell_done(1, timeout=20)
    interrupt_seconds = time.monotonic() - clicked
    print(f"\ninterrupt → cell finished in {interrupt_seconds:.2f} s")
    assert interrupt_seconds < 10
    assert nb.buttons_all_disabled(1)
    assert nb.card_status(nb.card(1).first) in ("interrupted", "cancelled", "denied")
    # the interrupted cell failed, so Run All may have dropped the queued one: run it by hand
    if "Second answer." not in nb.output_text(2):
        nb.page.wait_for_function(
            "() => !document.querySelectorAll('.jp-Notebook .jp-InputPrompt')[2].innerText.includes('*')", timeout=20_000
        )
        nb.run_cell(2)
        nb.page.wait_for_function(
            "() => document.querySelectorAll('.jp-Notebook .jp-Cell')[2].innerText.includes('Second answer.')", timeout=30_000
        )
    _assert_valid_follow_up(nb, fake_api, tag, 2)


# --- a sub-agent's ask --------------------------------------------------------------------------------
def test_sub_agent_ask_is_clicked_in_the_cell_and_names_the_sub_agent(page, jupyter_lab, fake_api, latency_log):
    """The cell's run starts a general-purpose sub-agent; the sub-agent's RunPython call asks,
    the card in the cell says which sub-agent asks, and the click lets the inner call run."""
    tags: dict[str, str] = {}

    def script(body):
        first, results = _first_user(body), all_tool_results(body)
        if "SUB" in first:
            if not results:
                return [{**tool_use_block("RunPython", {"code": "sub_value = 7 * 6"}), "id": "toolu_lab_inner"}]
            return [text_block("sub_value is set.")]
        if not results:
            return [{**tool_use_block("Agent", {"description": "set value", "prompt": f"{tags['tag']} SUB set sub_value",
                                                "subagent_type": "general-purpose"}), "id": "toolu_lab_agent"}]
        return [text_block("The sub-agent is done.")]

    tag = tags["tag"] = fake_api.script(script)
    nb = open_notebook(page, jupyter_lab, "subagent_allow.ipynb",
                       [LOAD, f"%%agent\n{tag} delegate", "print('after:', sub_value)"])
    nb.run_all()
    allow = nb.wait_button(1, "Allow once")
    shown = nb.cell(1).inner_text()
    assert "sub-agent general-purpose: set value asks" in shown
    assert "general-purpose: set value › RunPython" in shown
    # the sub-agent's card, with its approval, is drawn inside the Agent card, which says a call waits
    agent_card = nb.cell(1).locator(".jp-toolagent-card-toolu_lab_agent")
    inner = agent_card.locator(".jp-toolagent-nested .jp-toolagent-card-toolu_lab_inner")
    assert inner.count() == 1
    assert inner.locator("button.jupyter-button:has-text('Allow once')").count() == 1
    assert agent_card.locator('[data-waiting-inside="1"]').count() == 1
    click = nb.click(allow)
    nb.wait_all_done()
    assert nb.card_status(inner) == "done" and agent_card.locator("[data-waiting-inside]").count() == 0
    assert "sub_value is set." in agent_card.locator(".jp-toolagent-nested").first.inner_text()
    assert "after: 42" in nb.output_text(2)
    assert "The sub-agent is done." in nb.output_text(1)
    record_latency(latency_log, "sub_agent_allow_once", click.at, nb.decided_at(1))
    bodies = fake_api.bodies(tag, expected=4)  # the cell's two requests and the sub-agent's two
    agent_result = [r for r in tool_results(bodies[-1])]
    assert len(agent_result) == 1 and "sub_value is set." in result_text(agent_result[0])
    assert "[sub-agent general-purpose: 1 tool call(s)" in result_text(agent_result[0])


def _first_user(body: dict[str, Any]) -> str:
    content = body["messages"][0]["content"]
    return content if isinstance(content, str) else " ".join(b.get("text", "") for b in content if b.get("type") == "text")
