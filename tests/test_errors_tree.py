"""The exception tree drawn in ``errors.py`` is the real one.

Every module of the package is imported and searched for exception classes; each public one
must derive from `ToolAgentError`, live in ``jupyter_toolagent.errors`` (its ``__all__``) and be
drawn in the docstring under its real parent — so the drawing and the classes cannot drift.
"""

from __future__ import annotations

import importlib
import pkgutil
import re

import pytest

import jupyter_toolagent
from jupyter_toolagent import errors
from jupyter_toolagent.errors import ToolAgentError


def package_exceptions() -> dict[str, type[BaseException]]:
    """Every exception class defined at the top of any module of the package, by name."""
    found: dict[str, type[BaseException]] = {}
    modules = [jupyter_toolagent, *(importlib.import_module(m.name) for m in
                                    pkgutil.walk_packages(jupyter_toolagent.__path__, "jupyter_toolagent."))]
    for module in modules:
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, BaseException) \
                    and value.__module__.startswith("jupyter_toolagent"):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return found


def drawn_tree() -> dict[str, str | None]:
    """class name -> its parent's name, read from the drawing in the module docstring."""
    parents: dict[str, str | None] = {}
    stack: list[tuple[int, str]] = []
    for line in (errors.__doc__ or "").splitlines():
        match = re.match(r"^(\s*(?:[│ ]   |[├└]── )*)([A-Z]\w+)\s", line)
        if not match or not line.startswith("    ") or "──" not in line and stack:
            continue
        depth = len(match.group(1))
        name = match.group(2)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parents[name] = stack[-1][1] if stack else None
        stack.append((depth, name))
    return parents


def public(exceptions: dict[str, type[BaseException]]) -> list[type[BaseException]]:
    return sorted({c for c in exceptions.values() if not c.__name__.startswith("_")}, key=lambda c: c.__name__)


def test_the_walk_finds_the_exceptions_of_every_layer() -> None:
    names = {c.__name__ for c in public(package_exceptions())}
    # one from the core, the models, the permissions, the tools, MCP and the notebook layer
    assert {"StreamProtocolError", "ScriptExhaustedError", "ShellParseError", "EditError", "McpServerGone",
            "AgentRunFailed", "UnknownKeywordError"} <= names


def test_every_public_exception_is_under_the_root_and_lives_in_errors() -> None:
    for cls in public(package_exceptions()):
        assert issubclass(cls, ToolAgentError), cls
        assert cls.__module__ == "jupyter_toolagent.errors", f"{cls.__name__} is defined in {cls.__module__}"
        assert cls.__name__ in errors.__all__, cls


def test_the_drawing_is_the_class_hierarchy() -> None:
    drawn = drawn_tree()
    real: dict[str, str | None] = {}
    for cls in public(package_exceptions()):
        base = next((b for b in cls.__mro__[1:] if issubclass(b, ToolAgentError)), None)
        real[cls.__name__] = base.__name__ if base is not None else None
    assert drawn == real


def test_errors_all_is_exactly_its_exceptions() -> None:
    assert sorted(errors.__all__) == sorted(c.__name__ for c in public(package_exceptions()))


@pytest.mark.parametrize("name", ["TranscriptError"])
def test_classes_raised_nowhere_are_gone(name: str) -> None:
    assert not hasattr(errors, name) and name not in (errors.__doc__ or "")


def test_the_drawing_parser_notices_a_wrong_parent() -> None:
    """The check can fail: a drawing that puts a class under the wrong parent is read as such."""
    doc = errors.__doc__ or ""
    moved = doc.replace("    │   └── McpConfigError ", "    ├── McpConfigError     ")
    assert moved != doc
    original = errors.__doc__
    try:
        errors.__doc__ = moved
        assert drawn_tree()["McpConfigError"] == "ToolAgentError"
    finally:
        errors.__doc__ = original
    assert drawn_tree()["McpConfigError"] == "ConfigError"
