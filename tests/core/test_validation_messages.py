"""The schema error text (SPEC §3 stage 3) for generated pydantic models with Optional, Union,
Literal and list fields: each rejected parameter is one line at its own path (no union member
tags such as ``y.int``), whose expected type names every member of the union in the schema's
words (``string or null``, ``"a" or "b"``, ``array of integer``); the parameter list never says
"(any)" for a typed parameter."""

from __future__ import annotations

import json
import re
from typing import Any, List, Literal, Optional, Union

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from jupyter_toolagent.core.validation import describe_schema, describe_validation_error

BASES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


class Spec:
    """A generated field type and the words its description must contain."""

    def __init__(self, annotation: Any, words: list[str], text: str) -> None:
        self.annotation = annotation
        self.words = words
        self.text = text


base = st.sampled_from(list(BASES)).map(lambda t: Spec(t, [BASES[t]], t.__name__))
literal = st.lists(st.sampled_from(["a", "b", "csv", "json", 1, 2]), min_size=1, max_size=4, unique=True).map(
    lambda values: Spec(Literal[tuple(values)], [json.dumps(v) for v in values], f"Literal{values}"))
simple = st.one_of(base, literal)
listed = simple.map(lambda s: Spec(List[s.annotation], ["array of"] + s.words, f"list[{s.text}]"))
member = st.one_of(simple, listed)


@st.composite
def field_specs(draw: Any) -> Spec:
    members = draw(st.lists(member, min_size=1, max_size=3, unique_by=lambda s: s.text))
    optional = draw(st.booleans())
    annotation = members[0].annotation if len(members) == 1 else Union[tuple(m.annotation for m in members)]
    words = [w for m in members for w in m.words]
    if optional:
        annotation = Optional[annotation]
        words.append("null")
    return Spec(annotation, words, " | ".join(m.text for m in members) + (" | None" if optional else ""))


JSON_VALUES = [None, True, 0, 7, 2.5, "", "a", "text", [], [1], ["x"], {}, {"k": 1}]


@settings(max_examples=150, deadline=None)
@given(specs=st.lists(field_specs(), min_size=1, max_size=3),
       values=st.lists(st.sampled_from(JSON_VALUES), min_size=3, max_size=3))
def test_each_rejected_parameter_is_one_line_naming_every_accepted_type(specs: list[Spec], values: list[Any]) -> None:
    fields = {f"p{i}": (spec.annotation, ...) for i, spec in enumerate(specs)}
    model = create_model("Generated", __config__=ConfigDict(extra="forbid"), **fields)  # type: ignore[call-overload]
    data = {f"p{i}": values[i] for i in range(len(specs))}
    try:
        model.model_validate(data)
    except ValidationError as exc:
        text = describe_validation_error("T", exc, model)
    else:
        return
    lines = [line[2:] for line in text.splitlines() if line.startswith("- ")]
    paths = [re.match(r"`([^`]*)`", line).group(1) for line in lines if line.startswith("`")]  # type: ignore[union-attr]
    assert len(paths) == len(set(paths)), text  # one line per parameter path
    for path in paths:
        assert re.fullmatch(r"p\d+(\[\d+\])*", path), (path, text)  # parameter names and indices only
    for i, spec in enumerate(specs):
        line = next((line for line in lines if line.startswith(f"`p{i}`")), None)
        if line is not None:
            expected = line.split(": expected ", 1)[1].rsplit(", got ", 1)[0]
            for word in spec.words:
                assert word in expected, (spec.text, word, line)
    params = text.rsplit("Parameters of T: ", 1)[1]
    assert "(any" not in params and "any value" not in params, text
    for i, spec in enumerate(specs):
        if any(w == "null" for w in spec.words):
            assert re.search(rf"p{i} \([^)]*or null, required\)", params), (spec.text, params)


class Tool(BaseModel):
    model_config = ConfigDict(extra="forbid")
    command: str
    timeout: float | None = None
    mode: Literal["files", "content"] = "files"
    tags: list[str] | None = None


def test_the_everyday_optional_parameters_are_named_by_type() -> None:
    try:
        Tool.model_validate({"command": "ls", "timeout": "soon", "mode": "all"})
    except ValidationError as exc:
        text = describe_validation_error("Bash", exc, Tool)
    assert '- `timeout`: expected number or null, got string "soon"' in text
    assert '- `mode`: expected "files" or "content", got string "all"' in text
    assert ('Parameters of Bash: command (string, required), timeout (number or null), '
            'mode ("files" or "content"), tags (array of string or null).') in text


def test_a_two_type_union_is_one_problem_at_the_parameters_path() -> None:
    class Pick(BaseModel):
        key: int | str

    try:
        Pick.model_validate({"key": [1]})
    except ValidationError as exc:
        text = describe_validation_error("Pick", exc, Pick)
    assert text.count("`key`") == 1 and "`key.int`" not in text
    assert "`key`: expected integer or string, got array [1]" in text


def test_describe_schema_resolves_references() -> None:
    class Inner(BaseModel):
        a: int

    class Outer(BaseModel):
        inner: Inner | None = None
        items: list[Inner] = []

    schema = Outer.model_json_schema()
    assert describe_schema(schema["properties"]["inner"], schema) == "object or null"
    assert describe_schema(schema["properties"]["items"], schema) == "array of object"
    try:
        Outer.model_validate({"inner": {"a": "x"}, "items": [{"a": 1}, {"a": "y"}]})
    except ValidationError as exc:
        text = describe_validation_error("O", exc, Outer)
    assert '`inner.a`: expected integer, got string "x"' in text and '`items[1].a`: expected integer' in text
