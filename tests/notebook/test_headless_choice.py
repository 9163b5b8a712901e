"""Who answers asks: buttons, a terminal prompt, or the policy (SPEC §8.3)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from jupyter_toolagent.notebook import headless, kernel_run


class FakeKernel:
    """Just enough of a kernel: the parent execute request, and no message queue."""

    shell_channel_thread = object()

    def __init__(self, allow_stdin: Any) -> None:
        self.parent = {"content": {} if allow_stdin is None else {"allow_stdin": allow_stdin}}

    def get_parent(self, channel: str) -> dict[str, Any]:
        return self.parent


def shell(kernel: Any = None) -> Any:
    return SimpleNamespace(kernel=kernel) if kernel is not None else SimpleNamespace()


@pytest.fixture(autouse=True)
def clicks_deliverable(monkeypatch) -> None:
    monkeypatch.setattr(kernel_run, "dispatches_comms_while_awaiting", lambda kernel: True)


@pytest.mark.parametrize("allow_stdin, requested, expected", [
    (True, None, "widgets"),      # JupyterLab
    (False, None, "policy"),      # nbclient / papermill
    (False, True, "widgets"),     # --interactive forces buttons
    (True, False, "policy"),      # --no-interactive
])
def test_kernel_front_ends(allow_stdin: bool, requested: bool | None, expected: str) -> None:
    approvals, note = headless.choose_approvals(shell(FakeKernel(allow_stdin)), requested)
    assert approvals == expected and note is None


def test_kernel_that_cannot_deliver_clicks_says_so(monkeypatch) -> None:
    monkeypatch.setattr(kernel_run, "dispatches_comms_while_awaiting", lambda kernel: False)
    approvals, note = headless.choose_approvals(shell(FakeKernel(True)), None)
    assert approvals == "policy" and "cannot deliver button clicks" in note


def test_terminal(monkeypatch) -> None:
    monkeypatch.setattr(headless, "stdin_is_terminal", lambda: True)
    assert headless.choose_approvals(shell(), None) == ("terminal", None)
    assert headless.choose_approvals(shell(), False) == ("policy", None)
    monkeypatch.setattr(headless, "stdin_is_terminal", lambda: False)
    approvals, note = headless.choose_approvals(shell(), None)
    assert approvals == "policy" and "not a terminal" in note


def test_strategy_detection() -> None:
    assert kernel_run.strategy_for(shell()) == "terminal"
    queue_kernel = SimpleNamespace(msg_queue=object(), dispatch_shell=object(), session=object())
    assert kernel_run.strategy_for(shell(queue_kernel)) == "pump"
    threaded = SimpleNamespace(msg_queue=object(), dispatch_shell=object(), session=object(), shell_channel_thread=object())
    assert kernel_run.strategy_for(shell(threaded)) == "await"
