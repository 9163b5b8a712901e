"""From a permission decision to a `SandboxPolicy`: why a command was allowed decides how it runs.

The decision already says why (``decided_by``): ``read_only`` means only the classifier vouched
for the command, so it runs with the file system read-only and no network. Anything else that
allowed it — a person (``user``), a rule, the mode, a hook, the tool itself — gets the writable
policy. Nothing here classifies the command again: the sandbox must not depend on the
classifier it backs up.

A person who approved a *safety* ask (the question named a protected path) may let the command
write the protected paths it names; an approval of any other question never does.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from ..permissions.file_rules import compile_pattern
from ..permissions.settings import SandboxSettings
from .discovery import find_hidden, find_protected
from .policy import SandboxPolicy

if TYPE_CHECKING:
    from ..core.permission_types import PermissionDecision
    from ..permissions.context import PermissionContext

__all__ = ["always_hidden", "policy_for", "writable_roots"]


def policy_for(decision: "PermissionDecision | None", command: str, perms: "PermissionContext",
               cwd: Path) -> SandboxPolicy:
    """The policy for ``command`` allowed by ``decision`` (None: a direct call that no
    permission check saw, which gets the stricter read-only policy)."""
    cwd = Path(os.path.realpath(cwd))
    settings = perms.sandbox_settings
    hidden, hidden_complete = _hidden(perms, cwd)
    notes: tuple[str, ...] = () if hidden_complete else ("note: the search for paths Read deny rules cover stopped at its bound; "
                                        "paths deeper down are not hidden",)
    if decision is None or decision.decided_by == "read_only":
        return SandboxPolicy.read_only(cwd, hidden=hidden, notes=notes)
    roots = writable_roots(cwd, settings, perms)
    found, complete = find_protected(roots)
    protected = _mount_points(found, roots)
    if not complete:
        notes += ("note: the search for protected paths stopped at its bound; deeper ones are writable",)
    if decision.asked == "safety":
        released = _named(command, cwd, protected)
        protected = [p for p in protected if p not in released]
    return SandboxPolicy("writable", cwd, network=settings.network, writable=tuple(roots),
                         protected=tuple(protected), hidden=hidden, notes=notes)


def _mount_points(paths: Iterable[Path], roots: list[Path]) -> list[Path]:
    """Where to mount each protected path read-only: a symlink's target (a mount follows
    links), and only a target that exists and lies in a writable root (anything else is
    read-only already). The link itself can still be replaced — see the README's limits."""
    points: list[Path] = []
    for path in paths:
        real = Path(os.path.realpath(path))
        if real.exists() and any(real.is_relative_to(r) for r in roots) and real not in points:
            points.append(real)
    return points


def writable_roots(cwd: Path, settings: SandboxSettings, perms: "PermissionContext") -> list[Path]:
    """The working directory and the existing directories of ``"sandbox": {"write": [...]}``
    (relative entries from the settings file's project directory)."""
    base = perms.settings.project_dir if perms.settings is not None and perms.settings.project_dir else cwd
    roots = [cwd]
    for entry in settings.write:
        path = Path(os.path.realpath(os.path.join(base, os.path.expanduser(entry))))
        if path.is_dir() and path not in roots:
            roots.append(path)
    return roots


def always_hidden() -> list[Path]:
    """Paths no sandboxed command needs and that would let it out: Jupyter's runtime directory
    holds every running kernel's connection file (its ports and signing key), and a process
    that can sign messages can make a kernel run code outside the sandbox."""
    try:
        from jupyter_core.paths import jupyter_runtime_dir
    except ImportError:
        return []
    path = Path(os.path.realpath(jupyter_runtime_dir()))
    return [path] if path.is_dir() else []


def _hidden(perms: "PermissionContext", cwd: Path) -> tuple[tuple[Path, ...], bool]:
    entries = [e for e in perms.entries("deny") if not e.rule.whole_tool and e.rule.tool == "Read"]
    extra = always_hidden()
    if not entries:
        return tuple(extra), True
    patterns = [compile_pattern(e.rule.content or "", str(e.base_dir or cwd)) for e in entries]

    def denied(path: str) -> bool:  # `path_denied`'s test, with the patterns compiled once per command
        return any(p.matches(path, widening=False) for p in patterns)

    found, complete = find_hidden([cwd, *(Path(p.anchor) for p in patterns)], denied)
    return tuple(dict.fromkeys([*found, *extra])), complete


def _named(command: str, cwd: Path, protected: Iterable[Path]) -> set[Path]:
    """The protected paths ``command`` names (a word that resolves to one or to a path inside
    one); a git command names its repository's ``.git``."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        words = command.split()
    pieces = {w for word in words for w in (word, *word.replace(">", "=").replace("<", "=").split("="))
              if w and not w.startswith("-")}
    resolved = {os.path.realpath(os.path.join(cwd, os.path.expanduser(p))) for p in pieces}
    gitty = any(os.path.basename(w) == "git" for w in words)
    named: set[Path] = set()
    for path in protected:
        text = str(path)
        if any(r == text or r.startswith(text + "/") for r in resolved) or (gitty and path.name == ".git"):
            named.add(path)
    return named
