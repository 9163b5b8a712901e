"""What the first ``%%agent`` cell needs, loaded while the kernel is idle after ``%load_ext``.

Why: the first cell imports the ``anthropic`` SDK (about a second on a small machine, mostly its
pydantic models), ipywidgets, bashlex, the price table and the product's own run and display
modules. A person who has just loaded the extension is usually writing the prompt; those
imports can happen while the kernel waits for them. In a notebook run top to bottom nothing
is gained or lost: imports hold the GIL, so the work is the same, only done earlier.

How it stays safe:

* It starts once the execution that loaded the extension has finished (IPython's
  ``post_execute`` event), so the imports of that cell never run beside it.
* Until it has finished, every cell waits for it first (``pre_run_cell``). A cell that
  needs a module the thread is importing would wait on the module's import lock anyway; what
  the lock cannot handle is two threads importing a circular pair of modules from opposite
  ends (Python then raises ``_DeadlockError`` in one of them). With the wait, no cell imports
  anything beside the thread. The wait is bounded (`WAIT_SECONDS`). An ``%%agent`` cell is not
  held there: its magic waits (`ready`, before the run starts; on the kernel's loop, so an
  interrupt sent during that wait is noticed once the loading is done, then aborts the run). (IPython
  runs a cell whose ``pre_run_cell`` callback was interrupted, so another cell interrupted while
  waiting goes ahead; silent executions do not wait.)
* The thread only imports modules and fills pure caches (the price table's snapshot, the
  markdown renderer's compiled patterns): no kernel state, no output.
* A failure is kept, not lost. The first ``%%agent`` cell (`ready`) imports every required
  module again, on the kernel's main thread — so a module that can only be imported there
  works — and if that fails too, the cell fails with one `ImportError` naming the module, the
  error, and that it first failed while loading in the background. A warm-up step that is not
  required (a product module, a cache) fails quietly: the code that needs it imports it again
  and raises there as it always did.
"""

from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = ["Preload", "STEPS", "Step", "preload_for", "ready", "schedule", "unschedule"]

WAIT_SECONDS = 120.0
"""How long an execution waits for the loading before it goes ahead regardless."""


@dataclass(frozen=True)
class Step:
    """One thing to load: a module to import, or a cache to fill (``warm``)."""

    name: str
    """The module imported (and, for a warm-up, named in messages)."""
    required: bool = True
    """A required module's failure fails the first ``%%agent`` cell (after a retry)."""
    warm: Callable[[Any], object] | None = None
    """Called with the imported module: fills a cache the first cell would otherwise fill."""


def _price_table(module: Any) -> object:
    return module.get_snapshot()


def _markdown(module: Any) -> object:
    return module.markdown_html("**preloaded** `text`\n\n- a list\n")


STEPS: tuple[Step, ...] = (
    Step("anthropic"),
    Step("bashlex"),  # its parser tables are rebuilt on every import (~0.1 s); the permission checks need it
    Step("ipywidgets"),
    Step("genai_prices.data_snapshot", required=False, warm=_price_table),
    Step("jupyter_toolagent.models.anthropic", required=False),
    Step("jupyter_toolagent.core.query", required=False),
    Step("jupyter_toolagent.sessions", required=False),
    Step("jupyter_toolagent.notebook.display", required=False),
    Step("jupyter_toolagent.notebook.view_state", required=False),
    Step("jupyter_toolagent.notebook.approval", required=False),
    Step("jupyter_toolagent.notebook.kernel_changes", required=False),
    Step("jupyter_toolagent.notebook.python_runner", required=False),
    Step("jupyter_toolagent.notebook.markdown_text", required=False, warm=_markdown),
)
"""In the order the first cell needs them. `tests/notebook/test_preload.py` checks every name imports."""


@dataclass
class Preload:
    """The loading of `STEPS` for one shell: not started, running in its thread, or done."""

    steps: tuple[Step, ...] = STEPS
    failures: dict[str, Exception] = field(default_factory=dict)
    """Step name → what the background import raised."""
    thread: threading.Thread | None = None
    done: threading.Event = field(default_factory=threading.Event)
    current: str = ""
    """The step being loaded (named when a wait times out)."""

    def start(self) -> None:
        """Load in a daemon thread (once)."""
        if self.thread is None and not self.done.is_set():
            self.thread = threading.Thread(target=self.load, name="toolagent-preload", daemon=True)
            self.thread.start()

    def load(self) -> None:
        try:
            for step in self.steps:
                self.current = step.name
                try:
                    module = importlib.import_module(step.name)
                    if step.warm is not None:
                        step.warm(module)
                except Exception as exc:  # kept and reported by `ready`; the loading goes on
                    self.failures[step.name] = exc
        finally:
            self.current = ""
            self.done.set()

    def wait(self, timeout: float = WAIT_SECONDS) -> bool:
        """Wait for a running load; True when nothing is loading any more."""
        if self.thread is None:
            return True
        return self.done.wait(timeout)

    def ready(self, timeout: float = WAIT_SECONDS) -> None:
        """Everything is loaded, or an `ImportError` says what could not be.

        Not started yet (the extension was loaded in this same execution): load here, on this
        thread. Running: wait for it. Then retry each failed required step on this thread.
        """
        if self.thread is None and not self.done.is_set():
            self.load()
        elif not self.wait(timeout):
            raise ImportError(f"jupyter_toolagent: still loading {self.current or 'its modules'} in the "
                              f"background after {timeout:g} s; the kernel's imports are stuck (restart it)")
        where = "in the background after %load_ext jupyter_toolagent" if self.thread is not None else "before this cell"
        for step in self.steps:
            failure = self.failures.get(step.name)
            if failure is None or not step.required:
                continue
            try:
                importlib.import_module(step.name)
            except Exception as exc:  # an interrupt stays an interrupt
                raise ImportError(
                    f"jupyter_toolagent needs {step.name!r}, which could not be imported: "
                    f"{type(exc).__name__}: {exc} (it first failed while loading {where}: "
                    f"{type(failure).__name__}: {failure})",
                    name=step.name,
                ) from exc
            del self.failures[step.name]


_ATTRIBUTE = "_toolagent_preload"


_FALLBACK = Preload()
"""For a shell that cannot carry an attribute (a stand-in in a unit test)."""


def preload_for(shell: Any) -> Preload:
    """The shell's `Preload` (made on first use)."""
    preload = getattr(shell, _ATTRIBUTE, None)
    if isinstance(preload, Preload):
        return preload
    preload = Preload()
    try:
        setattr(shell, _ATTRIBUTE, preload)
    except (AttributeError, TypeError):
        return _FALLBACK
    return preload


def ready(shell: Any) -> None:
    """For the first ``%%agent`` cell: see `Preload.ready`."""
    preload_for(shell).ready()



def schedule(shell: Any) -> None:
    """Start loading after the current execution; make every execution wait until it is done.

    Idempotent. A shell without IPython's events (a stand-in in a unit test) loads nothing
    ahead: `ready` then loads on first use, as before.
    """
    events = getattr(shell, "events", None)
    if events is None:
        return
    hooks = _hooks_for(shell)
    for name, callback in hooks.items():
        if callback not in events.callbacks.get(name, []):
            events.register(name, callback)


def unschedule(shell: Any) -> None:
    """Remove the events (a running load finishes on its own; it only imports)."""
    events = getattr(shell, "events", None)
    hooks = getattr(shell, "_toolagent_preload_hooks", None)
    if events is None or hooks is None:
        return
    for name, callback in hooks.items():
        if callback in events.callbacks.get(name, []):
            events.unregister(name, callback)


def _hooks_for(shell: Any) -> dict[str, Callable[..., None]]:
    hooks = getattr(shell, "_toolagent_preload_hooks", None)
    if hooks is not None:
        return hooks
    preload = preload_for(shell)

    def start_after_execution(*_: Any) -> None:
        preload.start()
        _drop(shell, "post_execute", start_after_execution)

    def wait_before_execution(info: Any = None) -> None:
        if preload.thread is None:
            return  # not started: this execution is the one that loads the extension, or loads nothing
        if str(getattr(info, "raw_cell", "") or "").lstrip().startswith("%%agent"):
            return  # the magic waits itself (`ready`), where an interrupt fails the cell as it should
        if not preload.wait():
            print(f"jupyter_toolagent: still loading {preload.current} in the background; running the cell anyway")
        if preload.done.is_set():
            _drop(shell, "pre_run_cell", wait_before_execution)

    hooks = {"post_execute": start_after_execution, "pre_run_cell": wait_before_execution}
    shell._toolagent_preload_hooks = hooks
    return hooks


def _drop(shell: Any, name: str, callback: Callable[..., None]) -> None:
    """Unregister a one-time hook (IPython allows that from inside the callback)."""
    try:
        shell.events.unregister(name, callback)
    except ValueError:
        pass
