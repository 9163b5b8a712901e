"""Running an `%%agent` cell's coroutine inside the kernel, so that clicks reach it.

While a cell executes, the kernel's shell channel is busy: a widget click (a ``comm_msg``)
waits behind the running execute request, so a cell that blocks on a click deadlocks. How the
wait is made to work depends on the kernel (measured, see KERNEL_NOTES.md):

* **ipykernel ≥ 7.4** — an input transformer rewrites a ``%%agent`` cell into an *awaited*
  call (top-level ``await``). While a cell awaits, the kernel dispatches comm messages without
  waiting for the cell's lock: no private API is needed. Queued cells wait for the lock and run
  afterwards, in order.
* **ipykernel 6.x** (shell messages go through ``kernel.msg_queue``) — an awaiting cell still
  blocks the dispatch queue, so `ShellPump` takes the queue's messages while the cell waits:
  comm messages (and other non-execute requests) are dispatched at once; execute requests of
  queued cells are held back and put back at the head of the queue, in their order, when the
  cell ends. The kernel then runs them after this cell's reply — or aborts them, as it always
  does, when this cell failed with ``stop_on_error``.
* **ipykernel 7.0–7.3** — neither path exists; the cell still awaits (interrupts work) but
  nothing can be clicked (`kernel_can_deliver_clicks` is False).
* **terminal IPython** (no ``kernel``) — `run_blocking` runs the coroutine on its own event
  loop; Ctrl-C aborts the run (a second Ctrl-C cancels it).

In every case the wait happens in short slices: a kernel interrupt is delivered as a
``CancelledError`` only when the loop wakes up, and one long wait would notice it late.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from typing import Any, Awaitable, Callable, Iterator, Literal, TypeVar

from ..core.abort import KERNEL_INTERRUPT, AbortSignal

T = TypeVar("T")

WAIT_SLICE = 0.1
"""Seconds between checks while a cell waits (interrupt latency ≈ this)."""
PUMP_SLICE = 0.02
"""Seconds between two looks at the ipykernel 6 message queue (click latency ≈ this)."""

last_pump: "ShellPump | None" = None
"""The pump of the latest cell (diagnostics: what it dispatched and held)."""

KernelStrategy = Literal["await", "pump", "await-no-clicks", "terminal"]


def kernel_of(shell: Any) -> Any | None:
    """The ipykernel kernel behind ``shell``, or None in terminal IPython."""
    return getattr(shell, "kernel", None)


def uses_message_queue(kernel: Any) -> bool:
    """ipykernel 6.x (and 7.0 without a shell-channel thread): shell messages wait in
    ``kernel.msg_queue`` and are dispatched one at a time by ``dispatch_shell``."""
    return (
        getattr(kernel, "shell_channel_thread", None) is None
        and hasattr(kernel, "msg_queue")
        and hasattr(kernel, "dispatch_shell")
        and hasattr(kernel, "session")
    )


def dispatches_comms_while_awaiting(kernel: Any) -> bool:
    """ipykernel ≥ 7.4 dispatches comm messages while a cell awaits (the cell holds the
    shell lock; comms skip it). Earlier 7.x releases had no such path and no public way to
    process one message, and there is no attribute that reveals the behaviour, so this one
    check reads the version."""
    try:
        import ipykernel
    except ImportError:  # pragma: no cover - a kernel without ipykernel
        return False
    version = getattr(ipykernel, "version_info", (0,))
    return tuple(int(p) for p in version[:2] if isinstance(p, int)) >= (7, 4)


def strategy_for(shell: Any) -> KernelStrategy:
    kernel = kernel_of(shell)
    if kernel is None:
        return "terminal"
    if uses_message_queue(kernel):
        return "pump"
    if dispatches_comms_while_awaiting(kernel):
        return "await"
    return "await-no-clicks"


def kernel_can_deliver_clicks(shell: Any) -> bool:
    return strategy_for(shell) in ("await", "pump")


# --------------------------------------------------------------------------------------
# kernels: awaited cells
# --------------------------------------------------------------------------------------


async def run_in_kernel(shell: Any, main: Awaitable[T], abort: AbortSignal) -> T:
    """Await ``main`` inside an executing cell, pumping the kernel where needed.

    A kernel interrupt (``CancelledError``, or ``KeyboardInterrupt``) aborts the run; the
    run still finishes (it repairs the transcript), then ``KeyboardInterrupt`` is raised so
    the cell ends as interrupted and queued cells follow the kernel's stop-on-error rule.
    """
    __tracebackhide__ = True  # noqa: F841 - IPython leaves this frame out of tracebacks
    global last_pump
    task = asyncio.ensure_future(main)
    kernel = kernel_of(shell)
    pump = ShellPump(kernel) if kernel is not None and uses_message_queue(kernel) else None
    if pump is not None:
        pump.start()
        last_pump = pump
    try:
        interrupted = await wait_in_slices(task, abort)
    finally:
        if pump is not None:
            await pump.stop()
    if interrupted or abort.reason == KERNEL_INTERRUPT:  # also caught inside RunPython's code
        raise interrupted_error()
    return task.result()


def interrupted_error() -> KeyboardInterrupt:
    """A KeyboardInterrupt that IPython shows as one line (its ``_render_traceback_``), not as a
    traceback through the awaited call the cell was rewritten into."""
    error = KeyboardInterrupt("the agent run was interrupted; the transcript stays valid and the next %%agent cell continues")
    # IPython prints `_render_traceback_()` instead of the traceback when an exception has one
    error._render_traceback_ = lambda: [f"KeyboardInterrupt: {error}"]  # type: ignore[attr-defined]
    return error


async def wait_in_slices(task: "asyncio.Future[Any]", abort: AbortSignal) -> bool:
    """Wait for ``task``; return True if an interrupt arrived meanwhile (the run was
    aborted and then awaited to its end). A second interrupt cancels the task itself."""
    interrupted = False
    while not task.done():
        try:
            await asyncio.wait({task}, timeout=WAIT_SLICE)
        except (asyncio.CancelledError, KeyboardInterrupt):
            _uncancel_current_task()
            if interrupted:
                task.cancel()
            interrupted = True
            abort.abort(KERNEL_INTERRUPT)
    return interrupted


def _uncancel_current_task() -> None:
    """Forget a delivered cancellation so that later awaits (the run's clean-up) work."""
    current = asyncio.current_task()
    uncancel = getattr(current, "uncancel", None)
    if current is not None and uncancel is not None:
        while current.cancelling():
            uncancel()


class ShellPump:
    """Handles an ipykernel 6 kernel's shell messages while a cell awaits.

    Every ``PUMP_SLICE`` it moves waiting messages from the socket into ``kernel.msg_queue``
    and takes them out: comm (and other non-execute) messages are dispatched at once, with the
    cell's parent header and the kernel's saved SIGINT handler restored afterwards (a nested
    ``dispatch_shell`` overwrites both); execute requests — queued cells — and anything that is
    not a shell message are held. `stop` puts the held items back at the head of the queue in
    their original order, so the kernel runs them after this cell, or aborts them if this cell
    failed with stop-on-error (the kernel's own ``_aborting`` path).
    """

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel
        self.held: list[tuple[Any, ...]] = []
        self.dispatched: list[str] = []
        """Message types dispatched during the cell (for tests and diagnostics)."""
        self._task: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        self._stopping.set()
        if self._task is not None:
            with contextlib.suppress(BaseException):
                await asyncio.shield(self._task)
        await self.pump_once()
        self._requeue_held()

    async def _run(self) -> None:
        while not self._stopping.is_set():
            await self.pump_once()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), PUMP_SLICE)

    async def pump_once(self) -> None:
        kernel = self.kernel
        stream = getattr(kernel, "shell_stream", None)
        if stream is not None:
            stream.flush()
        while True:
            try:
                item = kernel.msg_queue.get_nowait()
            except Exception:  # tornado.queues.QueueEmpty / asyncio.QueueEmpty
                return
            msg_type = self._shell_msg_type(item)
            if msg_type is None or msg_type == "execute_request":
                self.held.append(item)
                continue
            await self._dispatch(item, msg_type)

    def _shell_msg_type(self, item: tuple[Any, ...]) -> str | None:
        """The type of a queued shell message, read from its header only (deserialising with
        content would record the signature and make the real dispatch reject it)."""
        _, dispatch, args = item
        if dispatch != self.kernel.dispatch_shell or not args:
            return None
        try:
            _, frames = self.kernel.session.feed_identities(args[0], copy=False)
            header = self.kernel.session.deserialize(frames, content=False, copy=False)["header"]
            return str(header["msg_type"])
        except Exception:
            return None

    async def _dispatch(self, item: tuple[Any, ...], msg_type: str) -> None:
        kernel = self.kernel
        parent = kernel.get_parent("shell")
        ident = getattr(kernel, "_parent_ident", {}).get("shell", b"")
        saved_sigint = getattr(kernel, "saved_sigint_handler", None)
        _, dispatch, args = item
        try:
            await dispatch(*args)
            self.dispatched.append(msg_type)
        except Exception:  # a broken handler must not break the running cell
            kernel.log.exception("error while handling %s during an agent cell", msg_type)
        finally:
            kernel.set_parent(ident, parent, "shell")
            if saved_sigint is not None:
                kernel.saved_sigint_handler = saved_sigint

    def _requeue_held(self) -> None:
        queue = self.kernel.msg_queue
        later: list[Any] = []
        while True:
            try:
                later.append(queue.get_nowait())
            except Exception:
                break
        for item in [*self.held, *later]:
            queue.put_nowait(item)
        self.held = []


# --------------------------------------------------------------------------------------
# terminal IPython: a private event loop
# --------------------------------------------------------------------------------------


def run_blocking(make_main: Callable[[], Awaitable[T]], abort: AbortSignal) -> T:
    """Run the coroutine made by ``make_main`` to its end from synchronous code.

    Terminal IPython runs cells synchronously with no loop running, so the run gets a loop of
    its own. Ctrl-C aborts the run (it then finishes cleanly); a second Ctrl-C cancels it.
    If a loop is already running in this thread (a kernel with ``%autoawait off``, an
    embedding), the run goes to a worker thread.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _run_on_new_loop(make_main, abort)
    result: list[T] = []
    error: list[BaseException] = []

    def worker() -> None:
        try:
            result.append(_run_on_new_loop(make_main, abort, handle_sigint=False))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            error.append(exc)

    thread = threading.Thread(target=worker, name="toolagent-run", daemon=True)
    thread.start()
    while thread.is_alive():
        try:
            thread.join(WAIT_SLICE)
        except KeyboardInterrupt:
            abort.abort("interrupted (Ctrl-C)")
    if error:
        raise error[0]
    return result[0]


def _run_on_new_loop(make_main: Callable[[], Awaitable[T]], abort: AbortSignal, *, handle_sigint: bool = True) -> T:
    loop = asyncio.new_event_loop()
    try:
        task = loop.create_task(_as_coroutine(make_main))
        with _sigint_aborts(loop, task, abort, enabled=handle_sigint):
            while True:
                try:
                    return loop.run_until_complete(task)
                except KeyboardInterrupt:  # delivered before the handler was installed
                    if task.done():
                        raise
                    abort.abort("interrupted (Ctrl-C)")
    finally:
        with contextlib.suppress(Exception):
            loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


async def _as_coroutine(make_main: Callable[[], Awaitable[T]]) -> T:
    return await make_main()


@contextlib.contextmanager
def _sigint_aborts(loop: asyncio.AbstractEventLoop, task: "asyncio.Task[Any]", abort: AbortSignal, *,
                   enabled: bool) -> Iterator[None]:
    if not enabled or threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_sigint() -> None:
        if abort.aborted:
            task.cancel()
        else:
            abort.abort("interrupted (Ctrl-C)")

    try:
        loop.add_signal_handler(signal.SIGINT, on_sigint)
    except (NotImplementedError, RuntimeError, ValueError):  # e.g. Windows
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)
