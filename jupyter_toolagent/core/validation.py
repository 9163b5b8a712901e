"""Schema errors written for the model: each problem with its parameter path, what was
expected and what was given, so the next call can be right.

What was expected is read from the JSON schema the model was sent, not from pydantic's error
type: for ``str | None`` pydantic reports "a valid string" (the null member is not an error),
and for ``int | str`` it reports one error per union member under a path with the member's
tag (``y.int``, ``y.str``). Walking the schema along the error's location turns both into one
problem at the parameter's own path — "`y`: expected integer or string" — in the words of the
schema (``anyOf``, ``enum``, ``$ref``, arrays and maps included).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ValidationError

_EXPECTED = {
    "int": "integer",
    "float": "number",
    "decimal": "number",
    "string": "string",
    "str": "string",
    "bool": "boolean",
    "list": "array",
    "tuple": "array",
    "set": "array",
    "dict": "object",
    "model": "object",
    "date": "date string",
    "datetime": "datetime string",
    "enum": "one of the allowed values",
    "literal": "one of the allowed values",
    "none": "null",
    "url": "URL",
    "uuid": "UUID",
}


def json_type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def field_path(loc: tuple[Any, ...], root: str = "(input)") -> str:
    """A pydantic error location as a reader writes it: ``items[1].x``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or root


def _expected(error_type: str, msg: str) -> str:
    head = error_type.split("_")[0]
    if error_type in ("literal_error", "enum"):
        return msg.replace("Input should be ", "")
    return _EXPECTED.get(head, msg.replace("Input should be ", "").rstrip("."))


def _given(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=repr)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{json_type_name(value)} {text}"


MAX_ENUM_SHOWN = 8


def describe_schema(schema: dict[str, Any], root: dict[str, Any] | None = None) -> str:
    """A JSON schema as a reader says it: ``string or null``, ``"a" or "b"``, ``array of integer``."""
    root = root if root is not None else schema
    schema = _resolve(schema, root)
    members = schema.get("anyOf") or schema.get("oneOf")
    if members:
        parts = [describe_schema(m, root) for m in members]
        unique = list(dict.fromkeys(p for p in parts if p != "null"))
        return " or ".join(unique + (["null"] if "null" in parts else [])) or "any value"
    if "const" in schema:
        return json.dumps(schema["const"], ensure_ascii=False)
    if "enum" in schema:
        values = [json.dumps(v, ensure_ascii=False) for v in schema["enum"]]
        if len(values) > MAX_ENUM_SHOWN:
            return "one of " + ", ".join(values[:MAX_ENUM_SHOWN]) + ", …"
        return " or ".join(values)
    kind = schema.get("type")
    if isinstance(kind, list):
        return " or ".join(describe_schema({**schema, "type": k}, root) for k in kind)
    if kind == "array" and isinstance(schema.get("items"), dict):
        return f"array of {describe_schema(schema['items'], root)}"
    if kind is None:
        return "object" if "properties" in schema else "any value"
    return str(kind)


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    seen = 0
    while "$ref" in schema and seen < 20:  # local references only: "#/$defs/Name"
        target: Any = root
        for part in str(schema["$ref"]).lstrip("#/").split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        seen += 1
    return schema


def _members(schema: dict[str, Any], root: dict[str, Any]) -> list[dict[str, Any]]:
    schema = _resolve(schema, root)
    options = schema.get("anyOf") or schema.get("oneOf")
    if not options:
        return [schema]
    return [m for option in options for m in _members(option, root)]


def _child(schema: dict[str, Any], part: Any, root: dict[str, Any]) -> dict[str, Any] | None:
    """The schema at ``part`` under ``schema``, or None when ``part`` is not a property, item or
    map key there (then it is a union member's tag that pydantic put in the location)."""
    for member in _members(schema, root):
        items = member.get("items")
        if isinstance(part, int) and member.get("type") == "array" and isinstance(items, dict):
            return items
        if isinstance(part, str):
            props = member.get("properties") or {}
            if part in props:
                child = props[part]  # JSON Schema allows `true`/`false` as a property's schema
                return child if isinstance(child, dict) else None
            extra = member.get("additionalProperties")
            if isinstance(extra, dict) and member.get("type") == "object":
                return extra
    return None


def locate(loc: tuple[Any, ...], root: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any] | None]:
    """The part of ``loc`` that names parameters (union tags dropped from the first tag on), and
    the schema there (None when the location leaves the schema, e.g. an unexpected parameter)."""
    schema: dict[str, Any] | None = root
    kept: list[Any] = []
    for part in loc:
        assert schema is not None
        child = _child(schema, part, root)
        if child is None:
            if kept and (_resolve(schema, root).get("anyOf") or _resolve(schema, root).get("oneOf")):
                return tuple(kept), schema  # `y.int`, `y.str`: both are `y`
            return tuple(loc), None
        kept.append(part)
        schema = child
    return tuple(kept), schema


def describe_validation_error(tool_name: str, exc: ValidationError, schema_model: type[BaseModel]) -> str:
    schema = schema_model.model_json_schema()
    problems: list[str] = []
    reported: set[tuple[Any, ...]] = set()
    for err in exc.errors(include_url=False):
        loc, at = locate(tuple(err.get("loc", ())), schema)
        path = field_path(loc)
        etype = err.get("type", "")
        if etype == "missing":
            problems.append(f"missing required parameter `{path}`")
        elif etype == "extra_forbidden":
            problems.append(f"unexpected parameter `{path}`")
        elif etype in ("model_type", "dict_type") and path == "(input)":
            problems.append(f"the input must be a JSON object, got {_given(err.get('input'))}")
        elif at is not None:
            if loc in reported:
                continue  # one line per parameter, however many union members rejected it
            reported.add(loc)
            problems.append(f"`{path}`: expected {describe_schema(at, schema)}, got {_given(err.get('input'))}")
        else:
            problems.append(f"`{path}`: expected {_expected(etype, err.get('msg', ''))}, got {_given(err.get('input'))}")
    return format_schema_problems(tool_name, problems, schema)


def format_schema_problems(tool_name: str, problems: list[str], schema: dict[str, Any]) -> str:
    """The error text of stage 3, the same for every tool: its problems, then its parameters."""
    props = schema.get("properties", {}) if isinstance(schema, dict) else {}
    required = set(schema.get("required", [])) if isinstance(schema, dict) else set()
    params = ", ".join(
        f"{k} ({describe_schema(props[k], schema) if isinstance(props[k], dict) else 'any'}"
        f"{', required' if k in required else ''})" for k in props
    ) or "none"
    lines = "\n".join(f"- {p}" for p in problems)
    return (
        f"InputValidationError: the input for tool {tool_name} does not match its schema:\n{lines}\n"
        f"Parameters of {tool_name}: {params}. Fix the input and call the tool again."
    )


def given(value: Any) -> str:
    """How a wrong value is quoted in an error: its JSON type and (the start of) its text."""
    return _given(value)
