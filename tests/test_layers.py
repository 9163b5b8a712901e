"""The package's layers, read from its import statements (ARCHITECTURE.md, STYLE convention 1).

Bottom to top::

    errors.py
    core/
    plug-ins: models/ mcp/ agents/ sessions/ tools/ permissions/ sandbox/ hooks.py testing/
    agent.py, defaults.py          (the wiring: the one place the default plug-ins are chosen)
    views/
    notebook/                      (the only user of IPython / ipywidgets / ipykernel)
    __init__.py                    (the public names; loads the notebook layer only on demand)

A module may import its own layer's package and any layer below. Plug-ins are one layer, but a
plug-in may import another only along an edge of `PLUGIN_EDGES`, which must stay small and
acyclic: every edge is a reason two plug-ins cannot be swapped apart.

Which imports count — all of them, because each is a dependency that someone reading, packaging
or replacing the importing module must carry:

* module-level imports: obviously;
* imports inside functions: a lazy import is still a run-time dependency, only deferred (and a
  circular one hidden from whoever reads the module's header);
* imports under ``if TYPE_CHECKING:``: a lower layer that names an upper layer's type has its
  interface in the wrong place (mypy follows the import; the protocol belongs below);
* imports inside ``try: … except ImportError:``: a fallback for a package of the same wheel is
  dead code, and a fallback for an upper layer is still an upward dependency;
* ``importlib.import_module("…")`` / ``__import__("…")`` with a literal name.

The checker (`layer_violations`) is a pure function of source files, so it is tested here on
synthetic packages that plant each kind of violation, and on a copy of the real package with one
violation planted in it.
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import jupyter_toolagent

PACKAGE = "jupyter_toolagent"
ROOT = Path(jupyter_toolagent.__file__).parent

PLUGINS = ("models", "mcp", "agents", "sessions", "tools", "permissions", "sandbox", "hooks", "testing")
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors",),
    ("core",),
    PLUGINS,
    ("agent", "defaults"),
    ("views",),
    ("notebook",),
    ("__init__",),
)
"""Each component (the first name under the package: a subpackage or a top-level module) by
layer, bottom first."""

PLUGIN_EDGES: dict[str, frozenset[str]] = {
    # A sub-agent definition may name its model by id: it gets an `AnthropicModel` for it.
    "agents": frozenset({"models"}),
    # Headless approval of a project's MCP servers reads the allow rules (``mcp__NAME``).
    "mcp": frozenset({"permissions"}),
    # The sandbox is chosen from the permission decision, the rules and the protected paths.
    "sandbox": frozenset({"permissions"}),
    # The test doubles speak the model's wire formats (stream events, scripted turns).
    "testing": frozenset({"models"}),
    # Bash's read-only reading and "no" exit codes are the shell reader's; Glob and Grep hide
    # what Read deny rules and the secret-file patterns cover; Bash runs inside the sandbox.
    "tools": frozenset({"permissions", "sandbox"}),
}
"""Which plug-in may import which other plug-in (everything else across plug-ins is refused)."""

SIBLING_EDGES: dict[str, frozenset[str]] = {**PLUGIN_EDGES, "agent": frozenset({"defaults"})}
"""Imports within one layer: the plug-in edges, and `Agent` using the default plug-ins."""

UI_LIBRARIES = frozenset({"IPython", "ipywidgets", "ipykernel"})
UI_USERS = frozenset({"notebook"})

PENDING: frozenset[tuple[str, str]] = frozenset()
"""Known violations being removed, as (importing module, imported module). Each must still
exist — an exemption that outlives its violation fails `test_no_exemption_outlives_its_violation`."""


@dataclass(frozen=True)
class Import:
    module: str
    """The importing module's dotted name."""
    target: str
    """The imported module's dotted name (relative imports resolved)."""
    line: int
    where: str
    """``module level``, ``in a function``, ``TYPE_CHECKING``, ``try/except ImportError`` or
    ``import_module``, for the message."""


@dataclass(frozen=True)
class Violation:
    imp: Import
    reason: str

    def __str__(self) -> str:
        return f"{self.imp.module}:{self.imp.line} imports {self.imp.target} ({self.imp.where}): {self.reason}"


def module_name(path: Path, root: Path) -> tuple[str, bool]:
    """The dotted name of the file ``path`` of the package at ``root``, and whether it is a
    package's ``__init__``."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    return ".".join(parts[:-1] if is_package else parts), is_package


def _resolve(node: ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    base = module.split(".") if is_package else module.split(".")[:-1]
    if node.level:
        base = base[: len(base) - node.level + 1]
        prefix = ".".join(base + ([node.module] if node.module else []))
    else:
        prefix = node.module or ""
    # ``from . import x`` may import the submodule x; ``from .m import x`` imports m.
    if node.module is None:
        return [f"{prefix}.{alias.name}" for alias in node.names]
    return [prefix]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _catches_import_error(handlers: list[ast.ExceptHandler]) -> bool:
    names = {n.id for h in handlers if h.type is not None
             for n in ast.walk(h.type) if isinstance(n, ast.Name)}
    return bool(names & {"ImportError", "ModuleNotFoundError"})


def imports_of(source: str, module: str, is_package: bool) -> list[Import]:
    """Every import in ``source`` (see the module docstring for which ones), wherever it is."""
    found: list[Import] = []

    def visit(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            here = where
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                here = "in a function"
            if isinstance(child, ast.Import):
                found.extend(Import(module, a.name, child.lineno, where) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                found.extend(Import(module, t, child.lineno, where) for t in _resolve(child, module, is_package))
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                for stmt in child.body:
                    visit(ast.Module(body=[stmt], type_ignores=[]), "TYPE_CHECKING")
                for stmt in child.orelse:
                    visit(ast.Module(body=[stmt], type_ignores=[]), here)
                continue
            elif isinstance(child, ast.Try) and _catches_import_error(child.handlers):
                for stmt in child.body:
                    visit(ast.Module(body=[stmt], type_ignores=[]), "try/except ImportError")
                for part in (*child.handlers, *child.orelse, *child.finalbody):
                    visit(part if isinstance(part, ast.AST) else ast.Module(body=[part], type_ignores=[]), here)
                continue
            elif isinstance(child, ast.Call) and _dynamic_import(child) is not None:
                found.append(Import(module, _dynamic_import(child) or "", child.lineno, "import_module"))
            visit(child, here)

    visit(ast.parse(source), "module level")
    return found


def _dynamic_import(call: ast.Call) -> str | None:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if name not in ("import_module", "__import__") or not call.args:
        return None
    first = call.args[0]
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None


def component(dotted: str) -> str | None:
    """The component a module of the package belongs to (``core``, ``agent``, ``__init__`` …),
    or None for a module outside the package."""
    parts = dotted.split(".")
    if parts[0] != PACKAGE:
        return None
    return parts[1] if len(parts) > 1 else "__init__"


def layer_of(name: str) -> int:
    for index, members in enumerate(LAYERS):
        if name in members:
            return index
    raise KeyError(name)


def check(imp: Import) -> str | None:
    """Why ``imp`` breaks the layers, or None."""
    source = component(imp.module)
    assert source is not None
    top = imp.target.split(".")[0]
    if top in UI_LIBRARIES and source not in UI_USERS:
        return f"only {sorted(UI_USERS)} may use {top}"
    target = component(imp.target)
    if target is None or target == source:
        return None
    try:
        below, above = layer_of(target), layer_of(source)
    except KeyError as exc:
        return f"{exc.args[0]!r} is in no layer: add it to LAYERS"
    if below > above:
        return f"{source} (layer {above}) may not import {target} (layer {below}, above it)"
    if below == above and target not in SIBLING_EDGES.get(source, frozenset()):
        return f"{source} may not import {target} of its own layer: no such edge in SIBLING_EDGES"
    return None


def layer_violations(root: Path, pending: frozenset[tuple[str, str]] = frozenset()) -> list[Violation]:
    """Every import of the package at ``root`` that breaks the layers, except the ``pending`` ones."""
    found: list[Violation] = []
    for path in sorted(root.rglob("*.py")):
        module, is_package = module_name(path, root)
        for imp in imports_of(path.read_text(encoding="utf-8"), module, is_package):
            reason = check(imp)
            if reason is not None and (imp.module, imp.target) not in pending:
                found.append(Violation(imp, reason))
    return found


# --- the real package -----------------------------------------------------------------------

def test_every_module_keeps_to_its_layer() -> None:
    assert [str(v) for v in layer_violations(ROOT, PENDING)] == []


def test_every_component_of_the_package_is_in_a_layer() -> None:
    components = {p.stem if p.is_file() else p.name for p in ROOT.iterdir()
                  if (p.suffix == ".py") or (p.is_dir() and any(p.rglob("*.py")))}
    placed = {name for layer in LAYERS for name in layer}
    assert components == placed


def test_the_plugin_edges_are_few_and_acyclic() -> None:
    assert set(PLUGIN_EDGES) <= set(PLUGINS) and all(t <= set(PLUGINS) for t in PLUGIN_EDGES.values())
    assert sum(len(t) for t in PLUGIN_EDGES.values()) <= 8
    seen: list[str] = []

    def visit(name: str, path: tuple[str, ...]) -> None:
        assert name not in path, f"cycle among plug-ins: {' -> '.join((*path, name))}"
        for nxt in sorted(PLUGIN_EDGES.get(name, ())):
            visit(nxt, (*path, name))
        seen.append(name)

    for name in PLUGINS:
        visit(name, ())


def test_every_plugin_edge_is_used() -> None:
    """An edge nothing needs any more is a dependency allowed for no reason: remove it."""
    used = set()
    for path in ROOT.rglob("*.py"):
        module, is_package = module_name(path, ROOT)
        for imp in imports_of(path.read_text(encoding="utf-8"), module, is_package):
            used.add((component(imp.module), component(imp.target)))
    allowed = {(s, t) for s, targets in SIBLING_EDGES.items() for t in targets}
    assert allowed - used == set()


def test_no_exemption_outlives_its_violation() -> None:
    present = {(v.imp.module, v.imp.target) for v in layer_violations(ROOT)}
    assert PENDING - present == set(), "this violation is gone: remove its entry from PENDING"


def test_nothing_below_the_notebook_layer_loads_a_ui_library_at_run_time() -> None:
    """The import statements say what a module asks for; this says what actually gets loaded
    (a third-party library could pull IPython in): every module outside the notebook layer,
    imported in a fresh interpreter, leaves IPython, ipywidgets and ipykernel unloaded."""
    probe = (
        "import importlib, json, sys\n"
        "from pathlib import Path\n"
        f"root = Path({str(ROOT)!r})\n"
        "names = []\n"
        "for path in sorted(root.rglob('*.py')):\n"
        "    parts = path.relative_to(root.parent).with_suffix('').parts\n"
        "    parts = parts[:-1] if parts[-1] == '__init__' else parts\n"
        "    if len(parts) > 1 and parts[1] == 'notebook':\n"
        "        continue\n"
        "    names.append('.'.join(parts))\n"
        "    importlib.import_module(names[-1])\n"
        f"print(json.dumps([names, sorted(m for m in sys.modules if m.split('.')[0] in {sorted(UI_LIBRARIES)!r})]))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=ROOT.parent)
    assert done.returncode == 0, done.stderr
    names, loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert "jupyter_toolagent.core.query" in names and "jupyter_toolagent.agent" in names
    assert loaded == []


# --- the checker itself ---------------------------------------------------------------------

def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / PACKAGE
    for rel, text in {"__init__.py": "", "core/__init__.py": "", **files}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


PLANTED = {
    "a module-level import of a plug-in": ("core/a.py", "from ..tools import bash\n", "module level"),
    "an import inside a function": ("core/a.py", "def f():\n    from ..permissions import engine\n", "in a function"),
    "an import for type checking": (
        "core/a.py", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..hooks import X\n", "TYPE_CHECKING"),
    "a fallback behind except ImportError": (
        "core/a.py", "try:\n    from ..tools.output_mapping import m\nexcept ImportError:\n    m = None\n",
        "try/except ImportError"),
    "an absolute import": ("core/a.py", "import jupyter_toolagent.notebook.magics\n", "module level"),
    "import_module with a literal name": (
        "core/a.py", "import importlib\ndef f():\n    return importlib.import_module('jupyter_toolagent.models.x')\n",
        "import_module"),
    "a plug-in importing the wiring": ("tools/x.py", "from ..agent import Agent\n", "module level"),
    "a plug-in importing the notebook": ("permissions/x.py", "from ..notebook.widgets import W\n", "module level"),
    "a plug-in importing a plug-in off the table": ("permissions/x.py", "from ..tools import Bash\n", "module level"),
    "a plug-in importing a plug-in against an edge": (
        "models/x.py", "from ..testing import FakeAnthropicServer\n", "module level"),
    "the views importing the notebook": ("views/x.py", "from ..notebook import display\n", "module level"),
    "the core importing the public facade": ("core/a.py", "from jupyter_toolagent import Agent\n", "module level"),
    "errors importing the core": ("errors.py", "from .core.tool import Tool\n", "module level"),
    "the views importing IPython lazily": ("views/x.py", "def f():\n    import IPython.display\n", "in a function"),
    "the wiring importing ipywidgets": ("agent.py", "import ipywidgets\n", "module level"),
    "the core importing ipykernel for type checking": (
        "core/a.py", "import typing\nif typing.TYPE_CHECKING:\n    from ipykernel.kernelbase import Kernel\n",
        "TYPE_CHECKING"),
}


@pytest.mark.parametrize("rel, source, where", PLANTED.values(), ids=list(PLANTED))
def test_the_checker_finds_each_kind_of_violation(tmp_path: Path, rel: str, source: str, where: str) -> None:
    root = _package(tmp_path, {rel: source})
    found = layer_violations(root)
    assert len(found) == 1, [str(v) for v in found]
    assert (found[0].imp.module, found[0].imp.where) == (module_name(root / rel, root)[0], where)


ALLOWED = {
    "the core importing errors": ("core/a.py", "from ..errors import ConfigError\n"),
    "the core importing itself": ("core/a.py", "from .tool import Tool\nfrom . import events\n"),
    "a plug-in importing the core": ("hooks.py", "from .core.hook_types import HookRunner\n"),
    "a plug-in along an edge": ("tools/x.py", "from ..sandbox import confine\nfrom ..permissions import rules\n"),
    "the wiring importing plug-ins": ("defaults.py", "from .hooks import R\nfrom .permissions import P\n"),
    "the views importing a plug-in": ("views/x.py", "from ..models.request import build_request_body\n"),
    "the notebook importing everything": (
        "notebook/x.py", "import IPython\nimport ipywidgets\nfrom ..views import V\nfrom ..agent import Agent\n"),
    "the facade loading the notebook on demand": ("__init__.py", "def load():\n    from .notebook import load\n"),
    "a third-party library": ("core/a.py", "import pydantic\nfrom anyio import to_thread\n"),
    "a relative import inside a subpackage": ("core/pairing/__init__.py", "from .check import check_pairing\n"),
}


@pytest.mark.parametrize("rel, source", ALLOWED.values(), ids=list(ALLOWED))
def test_the_checker_allows_what_the_layers_allow(tmp_path: Path, rel: str, source: str) -> None:
    assert [str(v) for v in layer_violations(_package(tmp_path, {rel: source}))] == []


def test_relative_imports_resolve_from_the_importing_module(tmp_path: Path) -> None:
    root = _package(tmp_path, {"core/pairing/check.py": "from ...tools import x\nfrom .. import tool\n"})
    found = layer_violations(root)
    assert [(v.imp.target, component(v.imp.target)) for v in found] == [("jupyter_toolagent.tools", "tools")]
    assert {i.target for i in imports_of("from .. import tool\n", "jupyter_toolagent.core.pairing.check", False)} \
        == {"jupyter_toolagent.core.tool"}


def test_a_violation_planted_in_a_copy_of_the_package_is_found(tmp_path: Path) -> None:
    copy = tmp_path / PACKAGE
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert [str(v) for v in layer_violations(copy, PENDING)] == []
    target = copy / "core" / "usage.py"
    target.write_text(target.read_text() + "\n\ndef _planted() -> None:\n    from ..permissions import engine  # noqa\n")
    found = layer_violations(copy, PENDING)
    assert [(v.imp.module, v.imp.target, v.imp.where) for v in found] == [
        ("jupyter_toolagent.core.usage", "jupyter_toolagent.permissions", "in a function")]
    assert "core (layer 1) may not import permissions (layer 2" in str(found[0])
