"""Schema errors written for the model: each problem with its parameter path, what was
expected and what was given, so the next call can be right."""

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


def describe_validation_error(tool_name: str, exc: ValidationError, schema_model: type[BaseModel]) -> str:
    problems: list[str] = []
    for err in exc.errors(include_url=False):
        path = field_path(tuple(err.get("loc", ())))
        etype = err.get("type", "")
        if etype == "missing":
            problems.append(f"missing required parameter `{path}`")
        elif etype == "extra_forbidden":
            problems.append(f"unexpected parameter `{path}`")
        elif etype in ("model_type", "dict_type") and path == "(input)":
            problems.append(f"the input must be a JSON object, got {_given(err.get('input'))}")
        else:
            problems.append(f"`{path}`: expected {_expected(etype, err.get('msg', ''))}, got {_given(err.get('input'))}")
    return format_schema_problems(tool_name, problems, schema_model.model_json_schema())


def format_schema_problems(tool_name: str, problems: list[str], schema: dict[str, Any]) -> str:
    """The error text of stage 3, the same for every tool: its problems, then its parameters."""
    props = schema.get("properties", {}) if isinstance(schema, dict) else {}
    required = set(schema.get("required", [])) if isinstance(schema, dict) else set()
    params = ", ".join(
        f"{k} ({props[k].get('type', 'any') if isinstance(props[k], dict) else 'any'}"
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


class InputSchemaError(ValueError):
    """Stage 3 failed for a tool whose schema is plain JSON Schema rather than a pydantic
    model (an MCP server's). ``problems`` are already worded like pydantic's (`describe`)."""

    def __init__(self, problems: list[str], schema: dict[str, Any]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems
        self.schema = schema

    def describe(self, tool_name: str) -> str:
        return format_schema_problems(tool_name, self.problems, self.schema)
