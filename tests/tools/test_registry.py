"""The set of built-in tools: names, order, safety flags, and what importing them costs."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from jupyter_toolagent.tools.function_tool import FunctionTool
from jupyter_toolagent.errors import ConfigError
from jupyter_toolagent.tools import BUILTIN_TOOL_NAMES, builtin_tools

EXPECTED = ["ListVariables", "InspectVariable", "RunPython", "NotebookCells", "InsertCell", "Read", "Glob", "Grep", "Edit", "Write", "Bash"]


def test_builtin_tools_come_in_a_fixed_order_as_fresh_instances() -> None:
    first, second = builtin_tools(), builtin_tools()
    assert [t.name for t in first] == EXPECTED == list(BUILTIN_TOOL_NAMES)
    assert all(a is not b for a, b in zip(first, second))


def test_include_keeps_the_fixed_order_and_unknown_names_are_a_config_error() -> None:
    assert [t.name for t in builtin_tools(include=["Bash", "Read"])] == ["Read", "Bash"]
    with pytest.raises(ConfigError) as info:
        builtin_tools(include=["Read", "Raed"])
    assert "'Raed'" in str(info.value) and "Read" in str(info.value)


def test_schemas_are_deterministic_and_reject_unknown_parameters() -> None:
    schemas = [json.dumps(t.to_api_schema(), sort_keys=False) for t in builtin_tools()]
    assert schemas == [json.dumps(t.to_api_schema(), sort_keys=False) for t in builtin_tools()]
    for tool in builtin_tools():
        assert tool.input_schema().get("additionalProperties") is False, tool.name
        assert tool.description


def test_safety_flags_of_the_fixed_tools() -> None:
    tools = {t.name: t for t in builtin_tools()}
    samples = {
        "ListVariables": {}, "InspectVariable": {"path": "x"}, "Read": {"file_path": "a"}, "Glob": {"pattern": "*"},
        "Grep": {"pattern": "x"}, "RunPython": {"code": "1"}, "Edit": {"file_path": "a", "old_string": "x", "new_string": "y"},
        "Write": {"file_path": "a", "content": ""}, "NotebookCells": {}, "InsertCell": {"code": "x = 1"},
    }
    for name, raw in samples.items():
        tool = tools[name]
        parsed = tool.input_model.model_validate(raw)
        safe = name in ("ListVariables", "InspectVariable", "Read", "Glob", "Grep", "NotebookCells")
        assert tool.is_read_only(parsed) is safe, name
        assert tool.is_concurrency_safe(parsed) is safe, name


def test_importing_the_tools_imports_no_heavy_library() -> None:
    code = (
        "import sys, pkgutil, importlib, jupyter_toolagent.tools as t\n"
        "for m in pkgutil.iter_modules(t.__path__): importlib.import_module('jupyter_toolagent.tools.' + m.name)\n"
        "t.builtin_tools()\n"
        "print(sorted(n for n in ('IPython', 'pandas', 'numpy', 'polars', 'matplotlib', 'ipywidgets') if n in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_function_tools_map_their_return_values_through_the_tools_package() -> None:
    def numbers() -> dict:
        return {"a": 1}

    assert FunctionTool(numbers).map_output({"a": 1, "b": [1, 2]}) == '{"a": 1, "b": [1, 2]}'
