"""Pure parts of the MCP client: tool names, input checking against JSON Schema (the same texts
as built-in tools), rule syntax, result mapping — and a server that breaks the protocol
(malformed result, a handshake answered with garbage) through the real SDK and `Agent`."""

from __future__ import annotations

import json
import re
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp_support import agent_on
from transcript_blocks import result_text, tool_results
from pydantic import ValidationError

from jupyter_toolagent import check_pairing
from jupyter_toolagent.core.events import NoticeEvent
from jupyter_toolagent.core.validation import describe_validation_error
from jupyter_toolagent.errors import InputSchemaError
from jupyter_toolagent.tools.function_tool import FunctionTool
from jupyter_toolagent.mcp.names import MAX_NAME, tool_name, unique_names
from jupyter_toolagent.mcp.results import map_call_result
from jupyter_toolagent.mcp.schema import check_input, compile_validator
from jupyter_toolagent.permissions.rules import parse_rule, tool_name_problem
from jupyter_toolagent.testing import FakeAnthropicServer
from jupyter_toolagent.models import tool_use_block

API_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


# --- names ----------------------------------------------------------------------------------
@given(st.lists(st.tuples(st.text(min_size=1, max_size=80), st.text(min_size=1, max_size=120)), min_size=1,
                max_size=30))
def test_every_generated_name_is_valid_for_the_api_and_unique(pairs: list[tuple[str, str]]) -> None:
    names = unique_names(pairs)
    assert len(names) == len(pairs) == len(set(names))
    assert all(API_NAME.match(n) and len(n) <= MAX_NAME for n in names)


@pytest.mark.parametrize("server, tool, expected", [
    ("git", "git_status", "mcp__git__git_status"),
    ("my.server", "read file", "mcp__my_server__read_file"),
    ("everything", "get-sum", "mcp__everything__get-sum"),
])
def test_everyday_names_stay_readable(server: str, tool: str, expected: str) -> None:
    assert tool_name(server, tool) == expected


def test_long_names_that_share_a_beginning_stay_distinct() -> None:
    a, b = tool_name("s", "x" * 80 + "a"), tool_name("s", "x" * 80 + "b")
    assert a != b and len(a) == len(b) == MAX_NAME


# --- input checking: the built-ins' texts ----------------------------------------------------
def _builtin_problems(raw: Any) -> list[str]:
    def lookup(item: str, count: int, ratio: float = 1.0) -> str:
        return item

    tool = FunctionTool(lookup)
    try:
        tool.parse_input(raw)
    except ValidationError as exc:
        text = describe_validation_error("t", exc, tool.input_model)
    else:
        return []
    return sorted(line[2:] for line in text.splitlines() if line.startswith("- "))


SCHEMA = {"type": "object", "properties": {"item": {"type": "string"}, "count": {"type": "integer"},
                                           "ratio": {"type": "number"}}, "required": ["item", "count"]}
VALIDATOR = compile_validator(SCHEMA)


def _mcp_problems(raw: Any) -> list[str]:
    try:
        check_input(VALIDATOR, SCHEMA, raw)
    except InputSchemaError as exc:
        return sorted(exc.problems)
    return []


JSON_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=5),
                        st.lists(st.integers(), max_size=2))


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from(["item", "count", "ratio", "extra", "other"]), JSON_VALUES, max_size=5))
def test_schema_problems_read_exactly_like_a_built_in_tools(raw: dict[str, Any]) -> None:
    # pydantic coerces a few values JSON Schema refuses (e.g. 1.0 for an int is not generated
    # here, nor are bools for numbers, where the two libraries genuinely differ).
    raw = {k: v for k, v in raw.items() if not (k in ("count", "ratio") and isinstance(v, bool))}
    assert _mcp_problems(raw) == _builtin_problems(raw)


@pytest.mark.parametrize("raw", [{"item": "apple", "count": 3}, {"item": "", "count": 0, "ratio": 2.5}])
def test_everyday_inputs_pass(raw: dict[str, Any]) -> None:
    assert _mcp_problems(raw) == [] and check_input(VALIDATOR, SCHEMA, raw) == raw


def test_a_schema_that_allows_extras_keeps_them() -> None:
    schema = {**SCHEMA, "additionalProperties": True}
    assert check_input(compile_validator(schema), schema, {"item": "a", "count": 1, "more": 1})["more"] == 1


def test_constraints_are_worded_like_pydantics() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0},
                                               "mode": {"enum": ["a", "b"]}}}
    with pytest.raises(InputSchemaError) as info:
        check_input(compile_validator(schema), schema, {"n": -1, "mode": "c"})
    assert sorted(info.value.problems) == ["`mode`: expected one of 'a', 'b', got string \"c\"",
                                           "`n`: expected greater than or equal to 0, got integer -1"]


# --- rules ----------------------------------------------------------------------------------
def test_mcp_rules_parse_and_server_wildcard_is_the_server_rule() -> None:
    assert parse_rule("mcp__git__*") == parse_rule("mcp__git")
    assert parse_rule("mcp__git__git_status").tool == "mcp__git__git_status"
    assert tool_name_problem(parse_rule("mcp__later"), {"Read"}) is None  # a server may connect later
    assert tool_name_problem(parse_rule("raed"), {"Read"}) is not None  # others are still checked


# --- result mapping -------------------------------------------------------------------------
def test_structured_content_without_content_is_json_text() -> None:
    from mcp.types import CallToolResult

    content, is_error = map_call_result(CallToolResult(content=[], structured_content={"rows": 3}))
    assert json.loads(content) == {"rows": 3} and is_error is False


def test_embedded_resources_and_links() -> None:
    from mcp.types import BlobResourceContents, CallToolResult, EmbeddedResource, ResourceLink, TextResourceContents

    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    result = CallToolResult(content=[
        EmbeddedResource(type="resource", resource=TextResourceContents(uri="file:///a.txt", text="hello")),
        EmbeddedResource(type="resource", resource=BlobResourceContents(uri="file:///a.png", blob=png,
                                                                        mime_type="image/png")),
        ResourceLink(type="resource_link", uri="file:///b.csv", name="b.csv"),
    ], is_error=True)
    content, is_error = map_call_result(result)
    assert is_error is True
    assert content[0] == {"type": "text", "text": "[resource file:///a.txt]\nhello"}
    assert content[1]["type"] == "image" and content[1]["source"]["media_type"] == "image/png"
    assert content[2]["text"].startswith("[resource link] file:///b.csv")


# --- a server that breaks the protocol --------------------------------------------------------
BROKEN_SERVER = textwrap.dedent('''
    import json, sys
    MODE = sys.argv[1]
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg:
            continue
        if msg["method"] == "initialize":
            if MODE == "garbage-handshake":
                print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"nonsense": True}}), flush=True)
                continue
            print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                "serverInfo": {"name": "broken", "version": "0"}}}), flush=True)
        elif msg["method"] == "tools/list":
            print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": [
                {"name": "bad", "inputSchema": {"type": "object"}}]}}), flush=True)
        elif msg["method"] == "tools/call":
            print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"content": "not a list"}}), flush=True)
''')


def _broken(tmp_path: Path, mode: str) -> dict[str, Any]:
    script = tmp_path / "broken_server.py"
    script.write_text(BROKEN_SERVER)
    return {"command": sys.executable, "args": [str(script), mode], "startTimeout": 10}


def test_a_malformed_result_is_an_error_result_and_pairing_holds(server: FakeAnthropicServer, tmp_path: Path) -> None:
    server.set_turns([[tool_use_block("mcp__broken__bad", {}, id="toolu_bad")], "ok"])
    with agent_on(server, {"broken": _broken(tmp_path, "bad-result")}, allow=["mcp__broken"]) as agent:
        agent.run_sync("go")
        assert check_pairing(agent.messages) == []
        result = tool_results(agent.messages)["toolu_bad"]
        assert result["is_error"] and "MCP server 'broken'" in result_text(result)
        assert "malformed result" in result_text(result)


def test_a_garbage_handshake_is_one_line_and_the_run_goes_on(server: FakeAnthropicServer, tmp_path: Path) -> None:
    server.set_turns(["ok"])
    with agent_on(server, {"broken": _broken(tmp_path, "garbage-handshake")}) as agent:
        record = agent.run_sync("go")
        lines = [e.text for e in record.events if isinstance(e, NoticeEvent) and "'broken'" in e.text]
        assert len(lines) == 1 and "handshake failed" in lines[0] and "\n" not in lines[0]
        assert record.finish_reason == "end_turn" and check_pairing(agent.messages) == []
