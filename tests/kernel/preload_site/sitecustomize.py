"""Loaded by the kernels of ``test_preload_kernel.py`` (this folder is put first on PYTHONPATH).

``PRELOAD_TEST_MODE`` says what to do with imports of ``anthropic``:

* ``record`` — let them through; `THREADS` lists the thread that first looked it up;
* ``poison`` — ``sys.modules["anthropic"] = None``: every import fails, on every thread;
* ``main-only`` — fail only off the main thread (a module that can only be imported there).
"""

import os
import sys
import threading

THREADS: list[str] = []
MODE = os.environ.get("PRELOAD_TEST_MODE", "record")


class _AnthropicImports:
    def find_spec(self, name, path=None, target=None):  # noqa: ANN001, ANN201 - importlib's finder protocol
        if name != "anthropic":
            return None
        THREADS.append(threading.current_thread().name)
        if MODE == "main-only" and threading.current_thread() is not threading.main_thread():
            raise ImportError("anthropic can only be imported on the main thread here (test)")
        return None  # the next finder imports it as usual


if MODE == "poison":
    sys.modules["anthropic"] = None  # type: ignore[assignment]
else:
    sys.meta_path.insert(0, _AnthropicImports())
