"""Paths into a variable — ``df['col']``, ``arr[10:20]``, ``obj.attr[3]`` — parsed, never evaluated.

`InspectVariable` is read-only and runs without asking, so its path must not be a way to run
code: the text is parsed with `ast` and only names, attribute access and subscripts whose keys
are literal constants or slices of literal integers are accepted. Calls, operators,
comprehensions and names or attributes starting with ``_`` (the way to ``__class__``,
``__globals__``, ``exit._ip`` and the interpreter's and kernel's internals) are refused with a
message saying why. While a path is followed, every value it lands on is checked too
(`inspect_guard`: no modules, no product objects, no protected text).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Callable, Union

__all__ = ["Attribute", "InspectPathError", "Key", "Path", "parse_path", "resolve_path"]

MAX_PATH_CHARS = 500


class InspectPathError(ValueError):
    """A path that is not allowed or cannot be followed; the message is for the model."""


@dataclass(frozen=True)
class Attribute:
    name: str

    def text(self) -> str:
        return f".{self.name}"


@dataclass(frozen=True)
class Key:
    """A subscript: a constant, a `slice` of constants, or a tuple of those."""

    value: Any

    def text(self) -> str:
        return f"[{_key_text(self.value)}]"


Step = Union[Attribute, Key]


@dataclass(frozen=True)
class Path:
    root: str
    steps: tuple[Step, ...]

    def text(self, upto: int | None = None) -> str:
        return self.root + "".join(s.text() for s in self.steps[:upto])


def _key_text(value: Any) -> str:
    if isinstance(value, slice):
        parts = ["" if p is None else repr(p) for p in (value.start, value.stop, value.step)]
        return ":".join(parts[:2] if value.step is None else parts)
    if isinstance(value, tuple):
        return ", ".join(_key_text(v) for v in value) + ("," if len(value) == 1 else "")
    return repr(value)


def parse_path(text: str) -> Path:
    """Parse ``text`` into a `Path`, or raise `InspectPathError` explaining what is refused."""
    text = text.strip()
    if not text:
        raise InspectPathError("the path is empty: give a variable name such as df or df['col']")
    if len(text) > MAX_PATH_CHARS:
        raise InspectPathError(f"the path is longer than {MAX_PATH_CHARS} characters")
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError as exc:
        raise InspectPathError(f"{text!r} is not a valid path ({exc.msg})") from None
    steps: list[Step] = []
    while not isinstance(node, ast.Name):
        if isinstance(node, ast.Attribute):
            _check_name(node.attr, "attribute")
            steps.append(Attribute(node.attr))
            node = node.value
        elif isinstance(node, ast.Subscript):
            steps.append(Key(_key(node.slice)))
            node = node.value
        else:
            raise InspectPathError(
                f"{text!r} is not a plain path: only names, .attributes and [constant] or [start:stop] "
                f"subscripts are allowed (found {_describe(node)}). InspectVariable never evaluates code; "
                "use RunPython to compute something."
            )
    _check_name(node.id, "name")
    return Path(node.id, tuple(reversed(steps)))


def _check_name(name: str, what: str) -> None:
    if name.startswith("_"):
        raise InspectPathError(
            f"the {what} {name!r} starts with '_': private and special names are never inspected (they lead to "
            "modules, globals and the kernel's internals); use a public attribute or a variable ListVariables shows"
        )


def _key(node: ast.AST) -> Any:
    if isinstance(node, ast.Tuple):
        return tuple(_key(elt) for elt in node.elts)
    if isinstance(node, ast.Slice):
        parts = [None if p is None else _constant(p) for p in (node.lower, node.upper, node.step)]
        if not all(p is None or type(p) is int for p in parts):
            raise InspectPathError("slice bounds must be integers, e.g. arr[10:20] or text[:5000]")
        return slice(*parts)
    return _constant(node)


def _constant(node: ast.AST) -> Any:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        value = node.operand.value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return -value
    if isinstance(node, ast.Constant) and type(node.value) in (int, float, str, bytes, bool, type(None)):
        return node.value
    raise InspectPathError(f"subscripts must be literal constants or slices (found {_describe(node)})")


def _describe(node: ast.AST) -> str:
    names = {ast.Call: "a call", ast.BinOp: "an operator", ast.Lambda: "a lambda", ast.Compare: "a comparison",
             ast.Name: "a variable name"}
    for kind, label in names.items():
        if isinstance(node, kind):
            return label
    return f"a {type(node).__name__} expression"


Guard = Callable[[Any, Any], "str | None"]
"""``guard(value, next_key)``: why the path may not land on ``value`` (None: it may);
``next_key`` is the subscript applied next, or None."""


def resolve_path(path: Path, namespace: Any, guard: Guard | None = None) -> Any:
    """Follow ``path`` from ``namespace``; raise `InspectPathError` naming the step that failed,
    or the first value ``guard`` refuses (the root included).

    Attribute access and subscripting run the object's own ``__getattr__``/``__getitem__``
    (that is how ``df['col']`` works); the caller runs this under a timeout.
    """
    if path.root not in namespace:
        raise InspectPathError(f"no variable named {path.root!r}")
    value = namespace[path.root]
    for i in range(len(path.steps) + 1):
        if guard is not None:
            following = path.steps[i] if i < len(path.steps) else None
            why = guard(value, following.value if isinstance(following, Key) else None)
            if why:
                raise InspectPathError(f"{path.text(i)} is not inspected: {why}")
        if i == len(path.steps):
            break
        step = path.steps[i]
        try:
            value = getattr(value, step.name) if isinstance(step, Attribute) else value[step.value]
        except Exception as exc:
            where = path.text(i + 1)
            raise InspectPathError(f"{where} failed: {type(exc).__name__}: {str(exc)[:300]}") from None
    return value
