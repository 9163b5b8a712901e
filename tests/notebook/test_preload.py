"""`notebook.preload` on its own: the steps name real modules, failures are kept and reported,
the IPython events start the loading after an execution and make the next one wait.

The real-kernel path (nbclient, the SDK poisoned in the kernel) is in
``tests/kernel/test_preload_kernel.py``.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
import types
import uuid
from typing import Any

import pytest
from IPython.core.events import EventManager, available_events

from jupyter_toolagent.notebook import preload as preload_module
from jupyter_toolagent.notebook.preload import STEPS, Preload, Step, preload_for, schedule, unschedule


def missing_name() -> str:
    return f"toolagent_missing_{uuid.uuid4().hex}"


def test_every_step_names_a_module_that_exists() -> None:
    for step in STEPS:
        assert importlib.util.find_spec(step.name) is not None, step.name
    assert STEPS[0].name == "anthropic" and STEPS[0].required


def test_a_failed_required_step_fails_ready_naming_the_module_and_the_background_attempt() -> None:
    name = missing_name()
    preload = Preload(steps=(Step("json"), Step(name), Step("textwrap")))
    preload.load()
    assert set(preload.failures) == {name}  # the steps after a failure still load
    with pytest.raises(ImportError) as raised:
        preload.ready()
    message = str(raised.value)
    assert f"jupyter_toolagent needs {name!r}" in message
    assert "No module named" in message and "while loading before this cell" in message  # never started: here
    assert raised.value.name == name
    with pytest.raises(ImportError):  # every later cell says so again, it is not swallowed once reported
        preload.ready()


def test_a_step_that_works_on_the_main_thread_is_retried_there() -> None:
    module_name = missing_name()
    preload = Preload(steps=(Step(module_name),))
    preload.load()
    assert module_name in preload.failures
    sys.modules[module_name] = types.ModuleType(module_name)  # importable now
    try:
        preload.ready()
    finally:
        del sys.modules[module_name]
    assert preload.failures == {}


def test_a_failed_warm_up_that_is_not_required_is_quiet() -> None:
    def broken(module: Any) -> object:
        raise ValueError("cache could not be filled")

    preload = Preload(steps=(Step(missing_name(), required=False), Step("json", required=False, warm=broken)))
    preload.ready()  # loads here (never started), and does not raise
    assert len(preload.failures) == 2 and preload.done.is_set()


def test_ready_before_the_loading_started_loads_on_this_thread() -> None:
    seen: list[str] = []
    preload = Preload(steps=(Step("json", warm=lambda m: seen.append(threading.current_thread().name)),))
    preload.ready()
    assert seen == [threading.current_thread().name] and preload.thread is None
    preload.start()  # already done: no thread
    assert preload.thread is None


class Info:
    def __init__(self, raw_cell: str) -> None:
        self.raw_cell = raw_cell


class Shell:
    def __init__(self) -> None:
        self.events = EventManager(self, available_events)


def test_the_events_start_after_the_execution_and_the_next_execution_waits() -> None:
    shell = Shell()
    release = threading.Event()
    loaded: list[str] = []

    def slow(module: Any) -> object:
        release.wait(10)
        loaded.append(threading.current_thread().name)
        return None

    preload = preload_for(shell)
    preload.steps = (Step("json", warm=slow),)
    schedule(shell)
    schedule(shell)  # idempotent
    assert shell.events.callbacks["post_execute"].count(shell._toolagent_preload_hooks["post_execute"]) == 1

    shell.events.trigger("pre_run_cell", Info("%load_ext jupyter_toolagent"))  # nothing to wait for yet
    assert preload.thread is None
    shell.events.trigger("post_execute")
    assert preload.thread is not None and preload.thread.is_alive()
    shell.events.trigger("pre_run_cell", Info("  %%agent\nhello"))  # the magic waits itself
    assert not preload.done.is_set()
    threading.Timer(0.2, release.set).start()
    shell.events.trigger("pre_run_cell", Info("x = 1"))  # returns only when the load is done
    assert preload.done.is_set() and loaded == ["toolagent-preload"]
    assert shell._toolagent_preload_hooks["pre_run_cell"] not in shell.events.callbacks["pre_run_cell"]
    assert shell._toolagent_preload_hooks["post_execute"] not in shell.events.callbacks["post_execute"]


def test_unschedule_removes_the_events() -> None:
    shell = Shell()
    schedule(shell)
    unschedule(shell)
    hooks = shell._toolagent_preload_hooks
    assert all(hooks[name] not in shell.events.callbacks[name] for name in hooks)


def test_a_shell_that_cannot_hold_the_state_shares_one_preload() -> None:
    assert preload_for(object()) is preload_module._FALLBACK
