"""What an `InspectVariable` path may never reach (SPEC §5.6), checked at every step.

`InspectVariable` runs without asking, even in plan mode, so the objects it can reach are the
user's data and nothing else. Parsing already refuses code and every attribute that starts with
``_`` (``__globals__``, ``_ip``, ``__self__``: the ways from any object to modules, the
interpreter and the kernel). What a path *lands on* at each step is checked here, because
ordinary-looking names lead to the same places (``obj.os.environ``, ``gen.gi_frame.f_globals``):

* a module, or a function or method bound to one (``os.getenv``): a module leads to
  ``os.environ``, ``sys.modules`` and so to everything;
* the process environment (``os.environ``): it holds the API key;
* the product's own objects and those of the SDK, the HTTP stack and the kernel (sessions,
  models, agents, clients, the IPython shell, ``exit``): they hold the key or the whole
  namespace; a method bound to one of them counts as the object;
* interpreter internals — frames, code objects, tracebacks — and namespaces as dicts (the
  notebook's own, or a module's ``__dict__``), which hold every hidden name;
* text that contains a protected value, whole or in part: a slice of it (``key[0:30]``) is
  refused, not merely masked. The scrubber would mask it anyway; this rule means the path
  language is the wall and the scrubber only the last line.

Each refusal says what is not allowed and why, so the model can move on.
"""

from __future__ import annotations

import os
import sys
import types
from collections.abc import Mapping
from typing import Any

from ..core.secrets import SecretScrubber

__all__ = ["PROTECTED_PACKAGES", "refusal"]

PRODUCT_PACKAGE = __name__.split(".")[0]
PROTECTED_PACKAGES = frozenset({
    PRODUCT_PACKAGE, "anthropic", "httpx", "httpx2", "httpcore", "h11", "ipykernel", "jupyter_client",
    "zmq", "comm",
})
"""Top-level packages whose objects a path never reaches: the product, the SDK and its HTTP
stack, and the kernel's machinery (its session holds the connection's signing key)."""
PROTECTED_MODULES = frozenset({
    "IPython.core.interactiveshell", "IPython.core.history", "IPython.core.autocall",
    "IPython.core.displayhook", "IPython.core.magic", "IPython.terminal.interactiveshell",
})
"""IPython's shell, its history and the ``exit``/``quit`` objects (IPython's display objects,
``IPython.display.HTML`` and friends, are user data and stay inspectable)."""
WHOLE_TEXT_CHARS = 100_000
"""Texts longer than twice this are checked at their head and tail only: a summary (at most
50,000 characters) shows a window at the start, and a slice elsewhere is checked around itself.
Checking a 100 MB text whole would cost about 50 ms per inspection."""
_INTERNALS = (types.FrameType, types.CodeType, types.TracebackType, types.CellType)


def _module_of(value: Any) -> str:
    if isinstance(value, type):
        module = value.__dict__.get("__module__")
    elif isinstance(value, (types.FunctionType, types.BuiltinFunctionType)):
        module = getattr(value, "__module__", None)
    else:
        module = type(value).__module__
    return module if isinstance(module, str) else ""


def _is_protected_module_name(module: str) -> bool:
    return module.split(".")[0] in PROTECTED_PACKAGES or any(
        module == m or module.startswith(m + ".") for m in PROTECTED_MODULES
    )


def _is_module_dict(value: Any) -> bool:
    name = value.get("__name__") if isinstance(value, dict) else None
    module = sys.modules.get(name) if isinstance(name, str) else None
    return module is not None and getattr(module, "__dict__", None) is value


def refusal(value: Any, *, namespace: Mapping[str, Any] | None, scrubber: SecretScrubber | None,
            next_key: Any = None) -> str | None:
    """Why a path may not land on ``value``, or None when it may. ``next_key`` is the subscript
    the path applies next, if any (for text, only the region it reaches is checked)."""
    if isinstance(value, types.ModuleType):
        return (f"it is the module {value.__name__!r}; modules are never inspected (they lead to os.environ, "
                "sys.modules and every other module)")
    owner = getattr(value, "__self__", None) if isinstance(value, (types.MethodType, types.BuiltinMethodType)) else None
    if isinstance(owner, types.ModuleType):
        return f"it is a function of the module {owner.__name__!r}; modules are never inspected"
    if value is os.environ or value is getattr(os, "environb", None):
        return "it is the process environment, which holds the API key and other credentials"
    for candidate in (value, owner):
        if candidate is None:
            continue
        module = _module_of(candidate)
        if module and _is_protected_module_name(module):
            kind = candidate.__name__ if isinstance(candidate, type) else type(candidate).__name__
            return (f"it is one of the runtime's own objects ({kind} from {module}); the product's, the SDK's and "
                    "the kernel's objects hold credentials and are never inspected")
    if isinstance(value, _INTERNALS):
        return f"it is an interpreter internal ({type(value).__name__}), which reaches hidden names"
    if namespace is not None and value is namespace:
        return "it is the notebook namespace itself, which holds IPython's and hidden names; name a variable instead"
    if _is_module_dict(value):
        return "it is a module's namespace; modules are never inspected"
    if scrubber and isinstance(value, (str, bytes, bytearray)) and scrubber.finds(_region(value, next_key, scrubber)):
        return ("this text holds a protected value (an API key, token or password from the environment); "
                "it is not shown, not even a slice of it")
    return None


def _region(value: str | bytes | bytearray, key: Any, scrubber: SecretScrubber) -> str:
    """The part of a text a path could show: around the index or slice that follows, else the
    whole text (its head and tail if it is huge — a summary shows no more). The margin is twice
    the longest protected value, so a slice that overlaps an occurrence (even one broken by
    whitespace) sees all of it."""
    margin = 2 * max((len(v) for v in scrubber.values), default=0)
    size = len(value)
    if isinstance(key, slice):
        start, stop, _ = key.indices(size)
        low, high = min(start, stop), max(start, stop)
        part = value[max(low - margin, 0): high + margin + 1]
    elif isinstance(key, int) and not isinstance(key, bool) and -size <= key < size:
        at = key % size
        part = value[max(at - margin, 0): at + margin + 1]
    elif size > 2 * WHOLE_TEXT_CHARS:
        # both halves are slices of `value`, so of one type (mypy checks each pairing of the union)
        part = value[:WHOLE_TEXT_CHARS] + value[-WHOLE_TEXT_CHARS:]  # type: ignore[operator]
    else:
        part = value
    return part if isinstance(part, str) else bytes(part).decode("utf-8", "replace")
