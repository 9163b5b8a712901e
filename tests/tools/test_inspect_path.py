"""Paths into variables are parsed, never evaluated; calls, expressions and dunders are refused."""

from __future__ import annotations

import pytest

from jupyter_toolagent.tools.inspect_path import Attribute, Key, follow_path, parse_path
from jupyter_toolagent.errors import InspectPathError


@pytest.mark.parametrize(
    ("text", "root", "steps"),
    [
        ("df", "df", ()),
        ("df['col']", "df", (Key("col"),)),
        ("arr[10:20]", "arr", (Key(slice(10, 20)),)),
        ("arr[::2]", "arr", (Key(slice(None, None, 2)),)),
        ("obj.attr[3]", "obj", (Attribute("attr"), Key(3))),
        ("m[-1]", "m", (Key(-1),)),
        ("grid[0, 1:3]", "grid", (Key((0, slice(1, 3))),)),
        ("d[None]", "d", (Key(None),)),
        ("  x.y.z  ", "x", (Attribute("y"), Attribute("z"))),
    ],
)
def test_plain_paths_parse(text: str, root: str, steps: tuple) -> None:
    path = parse_path(text)
    assert (path.root, path.steps) == (root, steps)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("f()", "a call"),
        ("df.head()", "a call"),
        ("a + b", "an operator"),
        ("x[y]", "literal constants"),
        ("x[len(x)]", "literal constants"),
        ("x[1:n]", "found a variable name"),
        ("x[1.5:2]", "slice bounds"),
        ("x.__class__", "starts with '_'"),
        ("__builtins__", "starts with '_'"),
        ("obj.__dict__['k']", "starts with '_'"),
        ("exit._ip", "starts with '_'"),
        ("_private.x", "starts with '_'"),
        ("[1, 2]", "not a plain path"),
        ("lambda: 1", "a lambda"),
        ("", "empty"),
        ("x[", "not a valid path"),
        ("import os", "not a valid path"),
    ],
)
def test_anything_else_is_refused_with_a_reason(text: str, reason: str) -> None:
    with pytest.raises(InspectPathError) as info:
        parse_path(text)
    assert reason in str(info.value)


def test_a_single_underscore_name_is_refused_too() -> None:
    # `exit._ip` reaches the IPython shell; `client._client` the SDK's HTTP client
    for text in ("_private", "obj._x", "df['a']._data"):
        with pytest.raises(InspectPathError, match="private and special names are never inspected"):
            parse_path(text)


def test_resolve_follows_attributes_keys_and_slices() -> None:
    class Box:
        def __init__(self) -> None:
            self.items = [{"k": "v"}, {"k": "w"}]

    namespace = {"box": Box(), "text": "abcdef"}
    assert follow_path(parse_path("box.items[1]['k']"), namespace) == "w"
    assert follow_path(parse_path("text[2:4]"), namespace) == "cd"


def test_resolve_names_the_step_that_failed() -> None:
    namespace = {"d": {"a": {"b": 1}}}
    with pytest.raises(InspectPathError) as info:
        follow_path(parse_path("d['a']['c']"), namespace)
    assert "d['a']['c'] failed: KeyError" in str(info.value)
    with pytest.raises(InspectPathError, match="no variable named 'zz'"):
        follow_path(parse_path("zz"), namespace)
