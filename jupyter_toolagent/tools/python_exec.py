"""Running a piece of Python code the way a notebook cell runs it.

`CodeRunner` compiles the code as a module whose last expression statement is evaluated
separately (its value is the cell's result), with top-level ``await`` allowed, and registers the
source with `linecache` so tracebacks show the lines. Tracebacks leave out the product's own
frames: the model should see where *its* code failed. Names assigned before a failure keep their
values, exactly as in a cell. While the code's synchronous steps run on the main thread, SIGINT
raises `KeyboardInterrupt` in it (`keyboard_interrupts`), whatever handler the kernel has set.

`PythonRunner` is the interface `RunPython` needs; the notebook layer supplies an
``IPythonRunner`` (``%magics``, ``!`` lines, rich display capture) through
`BuiltinToolOptions.python_runner`. Neither calls IPython's ``run_cell``: that would advance the
execution count, fire cell events and draw figures into the agent's cell.
"""

from __future__ import annotations

import __future__
import ast
import contextlib
import inspect
import io
import itertools
import linecache
import os
import signal
import threading
import tokenize
import traceback
from dataclasses import dataclass, field
from types import CodeType, TracebackType
from typing import Any, Coroutine, Generator, Iterator, Protocol

__all__ = ["CodeRunner", "Execution", "InterruptibleSteps", "PythonRunner", "format_exception", "keyboard_interrupts"]

PRODUCT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FUTURE_FLAGS = 0
for _name in __future__.all_feature_names:
    FUTURE_FLAGS |= getattr(__future__, _name).compiler_flag

_counter = itertools.count(1)


@dataclass
class Execution:
    """What running one piece of code produced."""

    value: Any = None
    has_value: bool = False
    value_blocks: list[dict[str, Any]] | None = None
    """The value's rich form, if the runner formats values itself (IPython's display formatter)."""
    displays: list[dict[str, Any]] = field(default_factory=list)
    """Content blocks of ``display()`` outputs, in order."""
    error: BaseException | None = None
    traceback: str = ""


class PythonRunner(Protocol):
    async def run(self, code: str, namespace: dict[str, Any]) -> Execution: ...


class CodeRunner:
    """Plain-Python runner (no IPython): what `RunPython` uses outside a notebook."""

    def __init__(self) -> None:
        self._flags = 0
        """``__future__`` flags seen in earlier code, carried forward as a cell compiler does."""

    # --- hooks for subclasses ------------------------------------------------------------------
    def transform(self, code: str) -> str:
        return code

    def compile_flags(self) -> int:
        return self._flags

    def format_value(self, value: Any) -> list[dict[str, Any]] | None:
        return None

    def displays(self) -> contextlib.AbstractContextManager[list[dict[str, Any]]]:
        return contextlib.nullcontext([])

    def remember_flags(self, flags: int) -> None:
        self._flags |= flags

    # --- running -------------------------------------------------------------------------------
    async def run(self, code: str, namespace: dict[str, Any]) -> Execution:
        filename = f"<RunPython-{next(_counter)}>"
        try:
            source = self.transform(code)
            body, last = self._compile(source, filename)
        except SyntaxError as exc:
            return Execution(error=exc, traceback=format_exception(exc))
        except Exception as exc:  # a failing input transformer (bad %magic syntax)
            return Execution(error=exc, traceback=format_exception(exc))
        if last is not None and _ends_with_semicolon(source):
            body, last = self._compile(source + "\npass", filename)  # a trailing ';' hides the value, as in a cell
        with self.displays() as shown:
            result = await self._execute(body, last, namespace)
        result.displays = list(shown)
        if result.has_value and result.error is None:
            try:
                result.value_blocks = self.format_value(result.value)
            except Exception:
                result.value_blocks = None
        return result

    def _compile(self, source: str, filename: str) -> tuple[CodeType | None, CodeType | None]:
        tree = ast.parse(source, filename=filename, mode="exec", type_comments=False)
        linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
        flags = (self.compile_flags() & FUTURE_FLAGS) | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        last_node = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        body = compile(tree, filename, "exec", flags=flags, dont_inherit=True) if tree.body else None
        if body is not None:
            self.remember_flags(body.co_flags & FUTURE_FLAGS)
        last = None
        if last_node is not None:
            assert isinstance(last_node, ast.Expr)  # popped above only when it was one
            expression = ast.Expression(last_node.value)
            flags = (self.compile_flags() & FUTURE_FLAGS) | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
            last = compile(expression, filename, "eval", flags=flags, dont_inherit=True)
        return body, last

    async def _execute(self, body: CodeType | None, last: CodeType | None, namespace: dict[str, Any]) -> Execution:
        try:
            if body is not None:
                await _run_code(body, namespace)
            if last is not None:
                value = await _run_code(last, namespace)
                return Execution(value=value, has_value=value is not None)
            return Execution()
        except (KeyboardInterrupt, SystemExit, Exception) as exc:  # CancelledError (Stop) propagates
            return Execution(error=exc, traceback=format_exception(exc))


def _ends_with_semicolon(source: str) -> bool:
    """Whether the last code token is ``;`` (comments and blank lines after it do not count)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return False
    ignored = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER, tokenize.DEDENT, tokenize.INDENT}
    code = [t for t in tokens if t.type not in ignored]
    return bool(code) and code[-1].type == tokenize.OP and code[-1].string == ";"


async def _run_code(code: CodeType, namespace: dict[str, Any]) -> Any:
    with keyboard_interrupts():
        result = eval(code, namespace)  # noqa: S307 - running the code is the point of RunPython
    if code.co_flags & inspect.CO_COROUTINE:
        result = await InterruptibleSteps(result)
    return result


# --- kernel interrupts -------------------------------------------------------------------------
# The code runs on the loop's thread. While an awaited cell runs, ipykernel's SIGINT handler only
# schedules a cancellation on that loop (ipkernel.py ``_cancel_on_sigint``), which code blocking
# the thread (``time.sleep``, a long pandas call) never lets run: the interrupt would wait for the
# code to end. So while the code's *synchronous* steps run, SIGINT raises KeyboardInterrupt in
# the code, as in a plain cell; while the code awaits, the loop runs and the previous handler is
# back, so a KeyboardInterrupt never lands in the loop's own machinery.


@contextlib.contextmanager
def keyboard_interrupts() -> Iterator[None]:
    """SIGINT raises `KeyboardInterrupt` inside the block; the previous handler comes back after.

    Only on the main thread (the only one signals reach) and only in place of a Python-level
    handler: a nested block, ``SIG_IGN``/``SIG_DFL`` or a handler installed from C are left alone.
    The signal wake-up fd is detached meanwhile: an event loop that watches SIGINT through it
    (``loop.add_signal_handler``, terminal IPython's run loop) would otherwise act on the same
    interrupt a second time once the code has ended.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous is signal.default_int_handler or not callable(previous):
        yield
        return
    wakeup_fd = -1
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        wakeup_fd = signal.set_wakeup_fd(-1)
        yield
    finally:
        if wakeup_fd != -1:
            with contextlib.suppress(ValueError, OSError):  # the code closed the loop's socket
                signal.set_wakeup_fd(wakeup_fd)
        _restore_sigint(previous)


def _restore_sigint(handler: Any) -> None:
    """Put ``handler`` back even if the interrupt lands right now. ``signal.signal`` runs a pending
    handler *before* it installs the new one, so a KeyboardInterrupt from it means "not restored
    yet": retry, then raise the interrupt (it belongs to the code that just ran)."""
    interrupted: KeyboardInterrupt | None = None
    while True:
        try:
            signal.signal(signal.SIGINT, handler)
            break
        except KeyboardInterrupt as exc:
            interrupted = exc
    if interrupted is not None:
        raise interrupted


class InterruptibleSteps:
    """Awaits a coroutine, running each of its steps (``send``/``throw``) under
    `keyboard_interrupts`, and passing what it awaits to the loop unchanged — what
    ``await coro`` does, with the handler swapped around the code's synchronous parts only."""

    def __init__(self, coroutine: Coroutine[Any, Any, Any]) -> None:
        self._coroutine = coroutine

    def __await__(self) -> Generator[Any, Any, Any]:
        coroutine = self._coroutine
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                with keyboard_interrupts():
                    awaited = coroutine.send(value) if error is None else coroutine.throw(error)
            except StopIteration as stop:
                return stop.value
            except BaseException:
                _close_quietly(coroutine)  # an interrupt between two steps leaves it suspended
                raise
            try:
                value, error = (yield awaited), None
            except GeneratorExit:
                _close_quietly(coroutine)
                raise
            except BaseException as exc:  # a cancellation (Stop) goes to the code, as ``await`` would
                value, error = None, exc


def _close_quietly(coroutine: Coroutine[Any, Any, Any]) -> None:
    try:
        coroutine.close()
    except (Exception, KeyboardInterrupt):  # code that awaits in its ``finally`` cannot be closed
        pass


# --- tracebacks --------------------------------------------------------------------------------
def _is_product_frame(filename: str) -> bool:
    return os.path.abspath(filename).startswith(PRODUCT_DIR + os.sep)


def _in_user_code(tb: TracebackType | None) -> bool:
    return any(frame.f_code.co_filename.startswith("<RunPython-") for frame, _ in traceback.walk_tb(tb))


def _strip(tb: TracebackType | None) -> Iterator[tuple[Any, int]]:
    for frame, lineno in traceback.walk_tb(tb):
        if not _is_product_frame(frame.f_code.co_filename):
            yield frame, lineno


def format_exception(exc: BaseException) -> str:
    """The traceback as a cell shows it, without the product's frames (also in chained ones)."""
    if isinstance(exc, SyntaxError) and not _in_user_code(exc.__traceback__):
        return "".join(traceback.format_exception_only(type(exc), exc)).rstrip("\n")  # the code never ran
    te = traceback.TracebackException(type(exc), exc, exc.__traceback__, capture_locals=False)
    _filter(te, exc, set())
    return "".join(te.format()).rstrip("\n")


def _filter(te: traceback.TracebackException, exc: BaseException | None, seen: set[int]) -> None:
    if id(te) in seen:
        return
    seen.add(id(te))
    if exc is not None:
        te.stack = traceback.StackSummary.extract(_strip(exc.__traceback__))
    for child, source in ((te.__cause__, getattr(exc, "__cause__", None)), (te.__context__, getattr(exc, "__context__", None))):
        if child is not None:
            _filter(child, source, seen)
