"""The UI-independent core never imports IPython or ipywidgets (SPEC §2, STYLE convention 1).

Every module of the package except ``jupyter_toolagent.notebook.*`` is imported in a fresh
interpreter, which must end without either library in ``sys.modules``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jupyter_toolagent

PROBE = r"""
import importlib, json, pkgutil, sys
from pathlib import Path

import jupyter_toolagent

FRONT_END = "jupyter_toolagent.notebook"
root = Path(jupyter_toolagent.__file__).parent
names, errors = set(), {}


def walk(package):
    # pkgutil.walk_packages would import jupyter_toolagent.notebook itself to look inside it.
    for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
        if info.name == FRONT_END or info.name.startswith(FRONT_END + "."):
            continue
        names.add(info.name)
        try:
            module = importlib.import_module(info.name)
        except Exception as exc:
            errors[info.name] = f"{type(exc).__name__}: {exc}"
            continue
        if info.ispkg:
            walk(module)


walk(jupyter_toolagent)
# Folders without __init__.py (namespace packages) are invisible to pkgutil: add their files.
for path in root.rglob("*.py"):
    parts = path.relative_to(root.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    name = ".".join(parts)
    if name.startswith(FRONT_END) or name in names:
        continue
    names.add(name)
    try:
        importlib.import_module(name)
    except Exception as exc:
        errors[name] = f"{type(exc).__name__}: {exc}"

print(json.dumps({"imported": sorted(names), "errors": errors,
                  "ui": sorted(m for m in ("IPython", "ipywidgets") if m in sys.modules)}))
"""


def test_core_imports_no_ipython_or_ipywidgets() -> None:
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120,
                          cwd=Path(jupyter_toolagent.__file__).parent.parent)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    imported = report["imported"]
    assert "jupyter_toolagent.core.query" in imported and "jupyter_toolagent.agent" in imported
    assert not any(name.startswith("jupyter_toolagent.notebook") for name in imported)
    assert report["errors"] == {}
    assert report["ui"] == [], f"the core imported {report['ui']}"
