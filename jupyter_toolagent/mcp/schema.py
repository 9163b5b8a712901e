"""Checking a call's input against an MCP tool's JSON Schema, with the built-ins' error texts.

The server's schema is the contract, so it is checked with `jsonschema` (the validator class the
schema's ``$schema`` names, Draft 2020-12 by default) — not re-expressed as a pydantic model,
which would drift from it. Each `jsonschema` error is worded the way `core.validation` words
pydantic's: ``missing required parameter `x```, ``unexpected parameter `y```, ```n`: expected
integer, got string "3"``; every problem is listed, not just the first.
"""

from __future__ import annotations

import re
from typing import Any

import jsonschema
from jsonschema.exceptions import SchemaError, ValidationError

from ..core.validation import field_path, given
from ..errors import InputSchemaError

_TYPE_WORDS = {"integer": "integer", "number": "number", "string": "string", "boolean": "boolean",
               "array": "array", "object": "object", "null": "null"}


def compile_validator(schema: dict[str, Any]) -> Any:
    """The validator for ``schema``; raises `SchemaError` when the server's schema is broken."""
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def check_input(validator: Any, schema: dict[str, Any], raw: Any) -> dict[str, Any]:
    """``raw`` if it satisfies the schema; otherwise `InputSchemaError` listing every problem."""
    if not isinstance(raw, dict):
        raise InputSchemaError([f"the input must be a JSON object, got {given(raw)}"], schema)
    problems: list[str] = [f"unexpected parameter `{field_path((k,))}`" for k in _undeclared(schema, raw)]
    for error in sorted(validator.iter_errors(raw), key=lambda e: (list(map(str, e.absolute_path)), e.validator)):
        for problem in _words(error):
            if problem not in problems:
                problems.append(problem)
    if problems:
        raise InputSchemaError(problems, schema)
    return raw


def _undeclared(schema: dict[str, Any], raw: dict[str, Any]) -> list[str]:
    """Top-level parameters the schema does not declare, where it says nothing about others.

    JSON Schema lets undeclared properties through unless ``additionalProperties`` forbids
    them, and most servers never say; a parameter the model made up would then be dropped or
    misread by the server without the model learning of it. Built-in tools report it, so MCP
    tools do too — unless the schema explicitly allows extra properties."""
    if not isinstance(schema.get("properties"), dict):
        return []
    if any(k in schema for k in ("additionalProperties", "patternProperties", "unevaluatedProperties")):
        return []
    if any(k in schema for k in ("allOf", "anyOf", "oneOf", "$ref", "if", "dependentSchemas")):
        return []  # properties may be declared elsewhere: leave it to the validator
    return [k for k in raw if k not in schema["properties"]]


def _words(error: ValidationError) -> list[str]:
    """One `jsonschema` error as the problems a person reads (a ``required`` error may name
    several parameters; so may ``additionalProperties``)."""
    path = tuple(error.absolute_path)
    kind, instance = error.validator, error.instance
    value: Any = error.validator_value  # always set on errors a validator yields (`Unset` only on hand-made ones)

    def child(name: str) -> str:
        return field_path((*path, name))

    if kind == "required" and isinstance(instance, dict):
        return [f"missing required parameter `{child(n)}`" for n in value if n not in instance]
    if kind in ("additionalProperties", "unevaluatedProperties") and value is False and isinstance(instance, dict):
        schema = error.schema if isinstance(error.schema, dict) else {}
        known = set(schema.get("properties", {}))
        patterns = [re.compile(p) for p in schema.get("patternProperties", {})]
        extra = [k for k in instance if k not in known and not any(p.search(k) for p in patterns)]
        return [f"unexpected parameter `{child(k)}`" for k in extra] or [f"`{field_path(path)}`: {error.message}"]
    where = field_path(path)
    if kind == "type":
        types = value if isinstance(value, list) else [value]
        expected = " or ".join(_TYPE_WORDS.get(t, str(t)) for t in types)
        if not path:
            return [f"the input must be a JSON object, got {given(instance)}"]
        return [f"`{where}`: expected {expected}, got {given(instance)}"]
    return [f"`{where}`: expected {_expected(kind, value, error)}, got {given(instance)}"]


def _expected(kind: Any, value: Any, error: ValidationError) -> str:
    """What a constraint asks for, in the words pydantic uses for the same constraint."""
    if kind == "enum":
        return "one of " + ", ".join(repr(v) for v in value)
    if kind == "const":
        return repr(value)
    if kind == "minimum":
        return f"greater than or equal to {value}"
    if kind == "maximum":
        return f"less than or equal to {value}"
    if kind == "exclusiveMinimum":
        return f"greater than {value}"
    if kind == "exclusiveMaximum":
        return f"less than {value}"
    if kind == "multipleOf":
        return f"a multiple of {value}"
    if kind == "minLength":
        return f"at least {value} character{'s' if value != 1 else ''}"
    if kind == "maxLength":
        return f"at most {value} character{'s' if value != 1 else ''}"
    if kind == "pattern":
        return f"a string matching the pattern {value!r}"
    if kind == "minItems":
        return f"at least {value} item{'s' if value != 1 else ''}"
    if kind == "maxItems":
        return f"at most {value} item{'s' if value != 1 else ''}"
    if kind == "uniqueItems":
        return "unique items"
    if kind == "format":
        return f"a {value} string"
    if kind in ("anyOf", "oneOf"):
        return "a value matching one of the allowed schemas"
    return error.message


__all__ = ["SchemaError", "check_input", "compile_validator"]
