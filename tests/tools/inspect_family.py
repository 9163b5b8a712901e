"""A generated family of hostile `InspectVariable` paths, their everyday counterparts, and an
independent oracle of what a path must never reach (SPEC §5.6).

The namespace is a real IPython shell's ``user_ns`` (``exit``, ``get_ipython``, ``In``, ``Out``,
``_`` history, modules the user imported) plus the product's own objects and user objects that
hold them. The oracle is written apart from `tools.inspect_guard` on purpose: it judges what a
path *landed on* and what the raw tool text shows (before the scrubber, the last line), so it
measures the wall, not the mask.

Also usable against another checkout (``count_bypasses``) to measure the family before a change.
"""

from __future__ import annotations

import os
import random
import sys
import types
from typing import Any, Iterable

_RNG = random.Random(14)
KEY = "sk-ant-api03-fakeKEY-" + "".join(_RNG.choice("abcdefghjkmnpqrstuvwxyz23456789") for _ in range(40))
TOKEN = "svc-tok-" + "".join(_RNG.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(24))
PROTECTED = (KEY, TOKEN)

SETUP = """
import os, sys, json, types, functools
import numpy as np
import pandas as pd
import anthropic
from jupyter_toolagent.core.session import Session
from jupyter_toolagent.models.anthropic import AnthropicModel
from jupyter_toolagent import Agent

class Obj:
    pass

df = pd.DataFrame({'col': [1.5, 2.5, 3.5, 4.5, 5.5, 6.5], 'b': list('abcdef')})
d = {'k': [10, 20, 30, 40], 'nested': {'x': 1, 'y': [1, 2, 3]}}
obj = Obj(); obj.attr = Obj(); obj.attr.sub = 42; obj.name = 'widget'
items = list(range(20))
notes = 'A plain note about the quarterly numbers, nothing secret in it at all.'
arr = np.arange(12)

env_alias = os.environ
keys = {'api': os.environ['ANTHROPIC_API_KEY'], 'svc': os.environ['MY_SERVICE_TOKEN']}
secret_text = 'token=' + os.environ['MY_SERVICE_TOKEN'] + ' key=' + os.environ['ANTHROPIC_API_KEY']
secret_bytes = secret_text.encode()
holder = Obj()
holder.client = anthropic.Anthropic(api_key=os.environ['ANTHROPIC_API_KEY'], base_url='http://127.0.0.1:9')
holder.model = AnthropicModel('claude-test', api_key=os.environ['ANTHROPIC_API_KEY'])
holder.session = Session()
holder.os = os
holder.getenv = os.getenv
holder.g = globals()
client = holder.client
model = holder.model
agent_session = holder.session
bound_getenv = os.getenv
builtin_of_os = os.getcwd
def func():
    return os
gen = (x for x in range(3))
g = globals()
part = functools.partial(os.getenv, 'ANTHROPIC_API_KEY')
"""

HOSTILE_ROOTS = (
    "os", "sys", "json", "types", "functools", "np", "pd", "anthropic", "exit", "quit", "get_ipython", "In", "Out",
    "_", "__", "_i", "_ih", "_oh", "_dh", "__builtins__", "Session", "AnthropicModel", "Agent",
    "env_alias", "keys", "secret_text", "secret_bytes", "holder", "client", "model", "agent_session",
    "bound_getenv", "func", "gen", "g", "part",
)
HOSTILE_ATTRIBUTES = (
    "environ", "modules", "_ip", "__globals__", "gi_frame", "f_globals", "f_locals", "f_back", "api_key",
    "auth_token", "_client", "client", "model", "session", "os", "user_ns", "__dict__", "__class__", "path",
    "getenv", "kernel", "shell", "__self__", "__wrapped__", "__closure__", "cell_contents", "co_consts", "gi_code",
    "g", "func", "args", "keywords", "values", "parent", "_api_key", "_clients", "runs", "messages", "scrubber",
    "history_manager", "displayhook", "config", "api", "svc", "mro", "f_code", "tb_frame",
)
HOSTILE_KEYS = (
    "ANTHROPIC_API_KEY", "MY_SERVICE_TOKEN", "os", "api", "svc", "sys", "g", "keys", "secret_text", 0, 1, -1, 5,
    slice(0, 7), slice(3, 10), slice(None, None, -1), slice(0, None, 2), slice(6, 13), slice(20, 27),
    slice(-7, None), slice(1, 2),
)


def key_text(key: Any) -> str:
    if isinstance(key, slice):
        parts = ["" if p is None else str(p) for p in (key.start, key.stop, key.step)]
        return "[" + (":".join(parts) if key.step is not None else ":".join(parts[:2])) + "]"
    return f"[{key!r}]"


def hostile_path(rng: random.Random) -> str:
    """A random chain of attribute / index / slice steps from a hostile root."""
    path = rng.choice(HOSTILE_ROOTS)
    for _ in range(rng.randint(0, 4)):
        kind = rng.random()
        if kind < 0.5:
            path += "." + rng.choice(HOSTILE_ATTRIBUTES)
        else:
            path += key_text(rng.choice(HOSTILE_KEYS))
    return path


def everyday_path(rng: random.Random) -> str:
    """A path into ordinary user data that must keep working."""
    a = rng.randint(0, 4)
    b = rng.randint(a + 1, 6)
    choices = [
        "df", "df.columns", "df.shape", "df['col']", f"df['col'][{a}:{b}]", "df['b'].dtype", "df.col",
        f"d['k'][{rng.randint(0, 3)}]", "d['nested']", "d['nested']['y']", f"d['nested']['y'][{rng.randint(0, 2)}]",
        "obj.attr.sub", "obj.attr", "obj.name", f"obj.name[{a}:{b}]", f"items[{a}:{b + 5}]", f"items[{rng.randint(0, 19)}]",
        f"notes[{a}:{b + 20}]", "notes", f"arr[{a}:{b}]", "arr.shape", "d", "items",
    ]
    return rng.choice(choices)


def family(count: int, seed: int, make: Any) -> list[str]:
    """Up to ``count`` distinct paths (fewer when the grammar has fewer)."""
    rng = random.Random(seed)
    seen: dict[str, None] = {}
    for _ in range(count * 20):
        seen[make(rng)] = None
        if len(seen) == count:
            break
    return list(seen)


# --- the oracle --------------------------------------------------------------------------------

FORBIDDEN_PACKAGES = ("jupyter_toolagent", "anthropic", "httpx", "httpx2", "httpcore", "ipykernel", "jupyter_client",
                      "zmq")
FORBIDDEN_IPYTHON = ("IPython.core.interactiveshell", "IPython.core.history", "IPython.core.autocall",
                     "IPython.core.displayhook")


def _forbidden_module(name: str) -> bool:
    return name.split(".")[0] in FORBIDDEN_PACKAGES or name.startswith(FORBIDDEN_IPYTHON)


def forbidden_landing(value: Any, namespace: dict[str, Any]) -> str | None:
    """What the oracle says a path must never land on (independent of the product's guard)."""
    if isinstance(value, types.ModuleType):
        return "module"
    if value is os.environ:
        return "os.environ"
    if value is namespace:
        return "namespace"
    if isinstance(value, (types.FrameType, types.CodeType, types.TracebackType, types.CellType)):
        return "interpreter internal"
    if isinstance(value, dict) and any(value is vars(m) for m in list(sys.modules.values()) if m is not None):
        return "module dict"
    owner = getattr(value, "__self__", None)
    if isinstance(owner, types.ModuleType):
        return "module function"
    for candidate in (value, owner):
        if candidate is None:
            continue
        module = candidate.__module__ if isinstance(candidate, type) else type(candidate).__module__
        if isinstance(module, str) and _forbidden_module(module):
            return f"runtime object {module}"
        if isinstance(candidate, (types.FunctionType, types.BuiltinFunctionType)):
            fmod = getattr(candidate, "__module__", "") or ""
            if _forbidden_module(fmod):
                return f"runtime function {fmod}"
    return None


def leaked_run(text: str, run: int = 6) -> str | None:
    """A run of ``run`` characters of a protected value (either direction) in ``text``: stricter
    than the scrubber's 8, so slices the scrubber cannot see count too."""
    flat = "".join(text.split())
    for value in PROTECTED:
        secret_part = value.split("-")[-1]  # the random part: prefixes like "sk-ant-" are public
        for v in (secret_part, secret_part[::-1]):
            for i in range(len(v) - run + 1):
                if v[i:i + run] in flat:
                    return v[i:i + run]
    return None


def make_shell() -> Any:
    """A real IPython shell (history off) with the family's namespace; the keys in its env."""
    from IPython.core.interactiveshell import InteractiveShell

    os.environ["ANTHROPIC_API_KEY"] = KEY
    os.environ["MY_SERVICE_TOKEN"] = TOKEN
    shell = InteractiveShell.instance()
    shell.history_manager.enabled = False
    result = shell.run_cell(SETUP, store_history=True)
    result.raise_error()
    shell.run_cell("1 + 1", store_history=True)  # fills Out, _, _i
    return shell


async def inspect_raw(path: str, namespace: dict[str, Any], hidden: Iterable[str], scrubber: Any = None) -> tuple[bool, str]:
    """(is_error, raw text) of InspectVariable's own call — before the core scrubs the result.
    Works against any checkout whose InspectVariable has the same public call signature."""
    from jupyter_toolagent.core.permission_types import PermissionDecision
    from jupyter_toolagent.core.tool import PluginOptions, Progress, ToolOptions, ToolPool, ToolUseContext
    from jupyter_toolagent.tools.options import BuiltinToolOptions
    from jupyter_toolagent.tools.inspect_variable import InspectVariable, InspectVariableInput

    async def allow(*a: Any, **k: Any) -> PermissionDecision:
        return PermissionDecision.allow("test")

    tool = InspectVariable()
    kw: dict[str, Any] = {"scrubber": scrubber} if scrubber is not None else {}
    ctx = ToolUseContext(tools=ToolPool([tool]), can_use_tool=allow,
                         options=ToolOptions(namespace=namespace,
                                             plugins=PluginOptions(BuiltinToolOptions(hidden_names=frozenset(hidden)))), **kw)
    try:
        parsed = InspectVariableInput(path=path)
    except Exception as exc:
        return True, str(exc)
    problem = await tool.validate_input(parsed, ctx)
    if problem:
        return True, problem
    result = await tool.call(parsed, ctx, Progress())
    content = result.content if hasattr(result, "content") else result
    return bool(getattr(result, "is_error", False)), content if isinstance(content, str) else str(content)


def landed_on(path: str, namespace: dict[str, Any]) -> Any:
    """Follow ``path`` with no guard (the oracle's view); raises if it cannot be followed."""
    import ast

    node = ast.parse(path, mode="eval").body
    steps: list[tuple[str, Any]] = []
    while not isinstance(node, ast.Name):
        if isinstance(node, ast.Attribute):
            steps.append(("attr", node.attr))
        else:
            steps.append(("key", ast.literal_eval(node.slice) if not isinstance(node.slice, ast.Slice) else slice(
                *(None if p is None else ast.literal_eval(p) for p in (node.slice.lower, node.slice.upper, node.slice.step)))))
        node = node.value  # type: ignore[attr-defined]
    value = namespace[node.id]
    for kind, step in reversed(steps):
        value = getattr(value, step) if kind == "attr" else value[step]
    return value


async def bypass_of(path: str, namespace: dict[str, Any], hidden: Iterable[str], scrubber: Any = None) -> str | None:
    """Why ``path`` got through the wall (None: refused, or it showed nothing it must not)."""
    is_error, text = await inspect_raw(path, namespace, hidden, scrubber)
    run = leaked_run(text)
    if run is not None:
        return f"showed a run of a protected value ({run!r})"
    if is_error:
        return None
    try:
        value = landed_on(path, namespace)
    except Exception:
        return None
    why = forbidden_landing(value, namespace)
    return f"landed on a {why}" if why else None
