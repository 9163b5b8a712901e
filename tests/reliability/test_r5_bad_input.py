"""R5 — bad input from the person: every ``%%agent`` option with a wrong value, bad rule syntax,
broken settings files, bad ``%config`` values, no key and no base URL, an unknown model, tool
functions that cannot be described to the model, bad ``%agent`` subcommands.

Each gives one clear message (a one-line ``UsageError`` / error, no traceback), sends nothing
when the mistake is in the input, and leaves the session usable: the next cell runs against
the fake server and ends normally, and the server accepts its transcript.

Runs in the shared in-process IPython test shell (no kernel), with ``ANTHROPIC_BASE_URL``
pointing at a `FakeAnthropicServer`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterator

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output
from reliability_support import assert_bodies_valid
from suite_counts import report

from jupyter_toolagent.errors import ToolDefinitionError
from jupyter_toolagent.notebook import offline
from jupyter_toolagent.notebook.sessions import current_session
from jupyter_toolagent.testing import FakeAnthropicServer, Fault

TRIED: list[str] = []


def tried(what: str) -> None:
    TRIED.append(what)
    report("r5_bad_inputs_tried", len(TRIED))


@pytest.fixture
def api(agent_shell: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer(turns=lambda body: "fine") as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-r5")
        yield server


class Cell:
    """The outcome of one cell: the error it raised (if any) and everything it showed."""

    def __init__(self, shell: Any, source: str) -> None:
        with capture_output() as captured:
            result = shell.run_cell(source)
        self.error = result.error_before_exec or result.error_in_exec
        self.shown = captured.stdout + captured.stderr + "".join(
            str(o.data.get("text/plain", "")) for o in captured.outputs)


def assert_one_clear_line(cell: Cell, *expected: str, kind: type[BaseException] = UsageError) -> None:
    assert isinstance(cell.error, kind), (cell.error, cell.shown[-1500:])
    text = str(cell.error)
    assert "\n" not in text.strip(), f"more than one line: {text!r}"
    for part in expected:
        assert part in text, (part, text)
    assert "Traceback" not in cell.shown and "-----" not in cell.shown, cell.shown[-1500:]


def assert_next_cell_works(shell: Any, server: FakeAnthropicServer, options: str = "") -> None:
    before = len(server.requests)
    cell = Cell(shell, f"%%agent {options}\nand now a normal question")
    assert cell.error is None, (cell.error, cell.shown[-1500:])
    assert current_session(shell).runs[-1].finish_reason == "end_turn"
    assert len(server.requests) == before + 1
    assert_bodies_valid(server.bodies)
    assert current_session(shell).check_pairing() == []


# --- options ------------------------------------------------------------------------------------------

BAD_OPTIONS = [
    ("--model ''", "--model needs a value"),
    ("--model", "expected one argument"),
    ("--model a b", "unrecognized arguments: b"),
    ("--new yes", "unrecognized arguments: yes"),
    ("--session ''", "--session needs a value"),
    ("--session", "expected one argument"),
    ("--mode YOLO", "invalid choice: 'YOLO'"),
    ("--mode", "expected one argument"),
    ("--mode bypass", "invalid choice: 'bypass'"),
    ("--allow", "expected one argument"),
    ("--allow 'Bash('", "--allow: invalid permission rule 'Bash('"),
    ("--allow 'Bash(git push:*'", "--allow: invalid permission rule"),
    ("--deny ''", "--deny: invalid permission rule '': empty rule"),
    ("--deny 'Bash(:*)'", "empty command prefix"),
    ("--ask 'Read(('", "--ask: invalid permission rule 'Read(('"),
    ("--ask 'Bash)'", "--ask: invalid permission rule"),
    ("--tools", "expected one argument"),
    ("--tools ' , '", "--tools needs at least one tool name"),
    ("--tools NoSuchTool", "--tools: unknown tool 'NoSuchTool'"),
    ("--tools ListVariables,NoSuchTool", "unknown tool 'NoSuchTool'"),
    ("--tools unannotatable", "--tools: cannot make a tool from function 'unannotatable'"),
    ("--tools unresolvable", "type hints cannot be resolved"),
    ("--max-turns 0", "--max-turns must be at least 1, not 0"),
    ("--max-turns -3", "--max-turns must be at least 1, not -3"),
    ("--max-turns x", "argument --max-turns: invalid int value: 'x'"),
    ("--max-turns 2.5", "invalid int value: '2.5'"),
    ("--max-turns", "expected one argument"),
    ("--script", "expected one argument"),
    ("--script 'not a name'", "--script needs a variable name"),
    ("--script no_such_variable", "no variable named 'no_such_variable'"),
    ("--script a_number", "--script a_number"),
    ("--interactive maybe", "unrecognized arguments: maybe"),
    ("--no-interactive=1", "ignored explicit argument"),
    ("--approval-timeout -1", "--approval-timeout must be a number of seconds >= 0"),
    ("--approval-timeout nan", "--approval-timeout must be a number of seconds >= 0, not nan"),
    ("--approval-timeout soon", "invalid float value: 'soon'"),
    ("--approval-timeout", "expected one argument"),
    ("--dry-run=yes", "ignored explicit argument 'yes'"),
    ("--system", "expected one argument"),
    ("--system 'unclosed", "cannot read the %%agent options: No closing quotation"),
    ("--bogus", "unrecognized arguments: --bogus"),
    ("-x", "unrecognized arguments: -x"),
    ("--allow=", "--allow: invalid permission rule '': empty rule"),
]


@pytest.mark.parametrize("options, message", BAD_OPTIONS, ids=[o for o, _ in BAD_OPTIONS])
def test_a_bad_option_is_one_line_sends_nothing_and_the_next_cell_works(
        options: str, message: str, agent_shell: Any, api: FakeAnthropicServer) -> None:
    tried(f"%%agent {options}")
    agent_shell.user_ns["a_number"] = 3
    agent_shell.run_cell("import socket\ndef unannotatable(s: socket.socket) -> str:\n    return 'x'\n"
                         "def unresolvable(x: 'NoSuchType') -> str:\n    return 'x'\n")
    cell = Cell(agent_shell, f"%%agent {options}\nthis must not be sent")
    assert_one_clear_line(cell, message)
    assert api.requests == [], "nothing is sent"
    assert current_session(agent_shell).runs == [], "nothing runs"
    assert_next_cell_works(agent_shell, api)


def test_an_empty_cell_body_is_refused(agent_shell: Any, api: FakeAnthropicServer) -> None:
    tried("%%agent with an empty body")
    for source in ("%%agent\n", "%%agent --model m\n   \n\t\n"):
        cell = Cell(agent_shell, source)
        assert isinstance(cell.error, UsageError) and "\n" not in str(cell.error).strip(), cell.error
    assert api.requests == []
    assert_next_cell_works(agent_shell, api)


@pytest.mark.parametrize(("options", "message"), [
    ("--deny 'bash(rm:*)'", "--deny: rule 'bash(rm:*)' names no tool 'bash'; did you mean 'Bash(rm:*)'?"),
    ("--deny 'BASH(rm:*)'", "--deny: rule 'BASH(rm:*)' names no tool 'BASH'; did you mean 'Bash(rm:*)'?"),
    ("--allow runpython", "--allow: rule 'runpython' names no tool 'runpython'; did you mean 'RunPython'?"),
    ("--ask WebFetch", "--ask: rule 'WebFetch' names no tool 'WebFetch' (tools: "),
])
def test_a_rule_for_a_misspelled_tool_is_refused(options: str, message: str, agent_shell: Any,
                                                 api: FakeAnthropicServer) -> None:
    """A rule matches tool names exactly: ``bash(rm:*)`` would be a deny that never applies."""
    tried(f"%%agent {options}")
    cell = Cell(agent_shell, f"%%agent {options}\nhello")
    assert_one_clear_line(cell, message)
    assert api.requests == []
    assert_next_cell_works(agent_shell, api)


def test_a_config_rule_for_a_tool_not_defined_yet_warns_and_runs(agent_shell: Any, api: FakeAnthropicServer) -> None:
    """``%config`` rules outlive the cell: one may name a ``@tool`` function a later cell defines,
    so a name with nothing close is a warning, while a likely typo is refused."""
    magics = agent_shell.magics_manager.registry["AgentMagics"]
    tried("%config AgentMagics.deny = ['drop_table'] (no such tool yet)")
    try:
        magics.deny = ["drop_table"]
        cell = Cell(agent_shell, "%%agent\nhello")
        assert cell.error is None, cell.error
        assert "AgentMagics.deny: rule 'drop_table' names no tool 'drop_table'" in cell.shown
        assert "applies once a tool of that name exists" in cell.shown
        tried("%config AgentMagics.deny = ['bash(rm:*)']")
        magics.deny = ["bash(rm:*)"]
        before = len(api.requests)
        cell = Cell(agent_shell, "%%agent\nnot sent")
        assert_one_clear_line(cell, "AgentMagics.deny: rule 'bash(rm:*)' names no tool 'bash'; did you mean 'Bash(rm:*)'?")
        assert len(api.requests) == before
    finally:
        magics.deny = []
    assert_next_cell_works(agent_shell, api)


# --- %config values -------------------------------------------------------------------------------------

def test_a_refused_mode_is_not_kept(agent_shell: Any, api: FakeAnthropicServer) -> None:
    magics = agent_shell.magics_manager.registry["AgentMagics"]
    tried("%config AgentMagics.mode = 'yolo'")
    try:
        with pytest.raises(Exception, match="AgentMagics.mode must be one of"):
            magics.mode = "yolo"
        assert magics.mode == "", "the refused value was kept"
        assert_next_cell_works(agent_shell, api)
    finally:
        magics.mode = ""


def test_bad_config_values_are_refused_clearly(agent_shell: Any, api: FakeAnthropicServer) -> None:
    magics = agent_shell.magics_manager.registry["AgentMagics"]
    for name, value, message in (("allow", ["Bash("], "AgentMagics.allow: invalid permission rule 'Bash('"),
                                 ("deny", [""], "AgentMagics.deny: invalid permission rule ''"),
                                 ("ask", ["Read(("], "AgentMagics.ask: invalid permission rule")):
        tried(f"%config AgentMagics.{name} = {value!r}")
        setattr(magics, name, value)
        cell = Cell(agent_shell, "%%agent\nnot sent")
        assert_one_clear_line(cell, message)
        assert api.requests == []
        setattr(magics, name, [])
    assert_next_cell_works(agent_shell, api)


@pytest.mark.parametrize("value", [0, -5])
def test_a_bad_max_turns_config_is_refused(value: int, agent_shell: Any, api: FakeAnthropicServer) -> None:
    tried(f"%config AgentMagics.max_turns = {value}")
    magics = agent_shell.magics_manager.registry["AgentMagics"]
    try:
        try:
            magics.max_turns = value
        except Exception as exc:  # refused at assignment: the clear message we want
            assert "max_turns" in str(exc)
            return
        cell = Cell(agent_shell, "%%agent\nhello")
        assert_one_clear_line(cell, "max_turns")
    finally:
        magics.max_turns = 30


# --- the project settings file ----------------------------------------------------------------------------

BAD_SETTINGS = {
    "not JSON": ('{"permissions": ', "is not valid JSON"),
    "empty": ("", "is not valid JSON"),
    "an array": ("[]", "must contain a JSON object"),
    "allow is a string": ('{"permissions": {"allow": "Bash"}}', "field 'permissions.allow'"),
    "a bad rule": ('{"permissions": {"deny": ["Bash("]}}', "field 'permissions.deny[0]'"),
    "a number as a rule": ('{"permissions": {"deny": [42]}}', "field 'permissions.deny[0]'"),
    "an unknown mode": ('{"mode": "yolo"}', "unknown permission mode 'yolo'"),
    "a misspelled inner key": ('{"permissions": {"denny": ["Bash(rm:*)"]}}', "permissions.denny"),
    "a byte order mark": ("\ufeff{}", "BOM"),
    "invalid UTF-8": (b"\xff\xfe{}", "not UTF-8"),
}


@pytest.mark.parametrize("label", list(BAD_SETTINGS))
def test_a_broken_settings_file_is_one_line_and_fixing_it_is_enough(
        label: str, agent_shell: Any, api: FakeAnthropicServer, tmp_path: Path) -> None:
    tried(f"settings.json: {label}")
    content, message = BAD_SETTINGS[label]
    settings = tmp_path / ".toolagent" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(content) if isinstance(content, bytes) else settings.write_text(content)
    cell = Cell(agent_shell, "%%agent\nnot sent")
    assert_one_clear_line(cell, "settings.json", message)
    assert api.requests == [] and current_session(agent_shell).runs == []
    settings.write_text('{"permissions": {"deny": ["Bash(rm:*)"]}}')
    assert_next_cell_works(agent_shell, api)
    assert "Bash(rm:*)" in [str(e.rule) for e in current_session(agent_shell).permissions.entries("deny")]


def test_a_misspelled_top_level_key_is_refused(agent_shell: Any, api: FakeAnthropicServer, tmp_path: Path) -> None:
    tried("settings.json: misspelled top-level key")
    settings = tmp_path / ".toolagent" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"permisions": {"deny": ["Bash(rm:*)"]}}')
    cell = Cell(agent_shell, "%%agent\nnot sent")
    assert_one_clear_line(cell, "settings.json", "field 'permisions': unknown key; did you mean 'permissions'?")
    assert api.requests == []


def test_a_settings_rule_for_a_misspelled_tool_is_refused(agent_shell: Any, api: FakeAnthropicServer,
                                                          tmp_path: Path) -> None:
    tried("settings.json: deny rule for a misspelled tool")
    settings = tmp_path / ".toolagent" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"permissions": {"deny": ["bash(rm:*)"]}}')
    cell = Cell(agent_shell, "%%agent\nnot sent")
    assert_one_clear_line(cell, "settings.json: permissions.deny: rule 'bash(rm:*)' names no tool 'bash'; "
                                "did you mean 'Bash(rm:*)'?")
    assert api.requests == []


# --- model choice -------------------------------------------------------------------------------------------

def test_no_key_and_no_base_url_is_the_labelled_offline_demo(agent_shell: Any) -> None:
    tried("no ANTHROPIC_API_KEY and no ANTHROPIC_BASE_URL")
    assert not os.environ.get("ANTHROPIC_API_KEY") and not os.environ.get("ANTHROPIC_BASE_URL")
    first = Cell(agent_shell, "%%agent\nWhat is in my notebook?")
    assert first.error is None, first.error
    assert offline.OFFLINE_NOTICE in first.shown
    assert "offline demo" in offline.OFFLINE_NOTICE and "ANTHROPIC_API_KEY" in offline.OFFLINE_NOTICE
    assert first.shown.find(offline.OFFLINE_NOTICE) < first.shown.find("ListVariables"), "the label comes first"
    second = Cell(agent_shell, "%%agent\nand again")
    assert second.error is None and offline.OFFLINE_NOTICE in second.shown
    assert current_session(agent_shell).check_pairing() == []


def test_an_unknown_model_is_one_clear_error_and_the_next_cell_works(agent_shell: Any, api: FakeAnthropicServer) -> None:
    tried("--model claude-nope (404)")
    api.inject(Fault.http_error(404, "not_found_error", "model: claude-nope"))
    cell = Cell(agent_shell, "%%agent --model claude-nope\nhello")
    assert cell.error is not None and type(cell.error).__name__ == "AgentRunFailed"
    assert_one_clear_line(cell, "HTTP 404", "not_found_error", "model: claude-nope",
                          f"request id {api.requests[-1].request_id}", "model name", kind=type(cell.error))
    assert api.requests[-1].body["model"] == "claude-nope"
    assert_next_cell_works(agent_shell, api)
    assert api.requests[-1].body["model"] != "claude-nope", "the bad --model was for that cell only"


def test_a_broken_script_variable_is_one_clear_error_and_the_next_cell_works(agent_shell: Any,
                                                                           api: FakeAnthropicServer) -> None:
    agent_shell.user_ns["garbage"] = [42]
    agent_shell.run_cell("def boom(body):\n    raise ValueError('nope')\n")
    for var, message in (("garbage", "cannot use int as a scripted turn"), ("boom", "ValueError: nope")):
        tried(f"--script {var}")
        cell = Cell(agent_shell, f"%%agent --script {var}\nhello")
        assert cell.error is not None and type(cell.error).__name__ == "AgentRunFailed"
        assert_one_clear_line(cell, "invalid_script", message, kind=type(cell.error))
    assert_next_cell_works(agent_shell, api)


# --- tool functions the model cannot be told about ----------------------------------------------------------

BAD_TOOLS = {
    "an unsupported type": ("import socket\n@tool\ndef bad(s: socket.socket) -> str:\n    return 'x'\n",
                            ["parameter 's'", "socket"]),
    "*args": ("@tool\ndef bad(*args: int) -> str:\n    return 'x'\n", ["*args"]),
    "**kwargs": ("@tool\ndef bad(**options: str) -> str:\n    return 'x'\n", ["**kwargs"]),
    "two problems": ("import threading\n@tool\ndef bad(lock: threading.Lock, *rest) -> str:\n    return 'x'\n",
                     ["parameter 'lock'", "*args"]),
    "an unresolvable hint": ("@tool\ndef bad(x: 'NoSuchType') -> str:\n    return 'x'\n", ["cannot be resolved"]),
    "a bad name": ("@tool(name='no spaces allowed')\ndef bad(x: int) -> str:\n    return 'x'\n", ["tool name"]),
    "a container of sockets": ("import socket\n@tool\ndef bad(s: dict[str, socket.socket]) -> str:\n    return 'x'\n",
                               ["parameter 's'"]),
}


@pytest.mark.parametrize("label", list(BAD_TOOLS))
def test_a_tool_function_with_unsupported_annotations(label: str, agent_shell: Any, api: FakeAnthropicServer) -> None:
    tried(f"@tool with {label}")
    source, parts = BAD_TOOLS[label]
    cell = Cell(agent_shell, "from jupyter_toolagent import tool\n" + source)
    assert isinstance(cell.error, ToolDefinitionError), cell.error
    for part in parts:
        assert part in str(cell.error), (part, str(cell.error))
    assert str(cell.error).startswith("cannot make a tool from function")
    assert_next_cell_works(agent_shell, api)
    tools = [t["name"] for t in api.requests[-1].body["tools"]]
    assert "bad" not in tools


# --- %agent subcommands -------------------------------------------------------------------------------------

BAD_SUBCOMMANDS = [
    ("%agent", "%agent needs a subcommand"),
    ("%agent frob", "unknown subcommand 'frob'"),
    ("%agent check now", "%agent check takes no arguments"),
    ("%agent transcript all", "takes no arguments"),
    ("%agent raw 3", "%agent raw takes only --full"),
    ("%agent raw --ful", "%agent raw takes only --full"),
    ("%agent export", "usage: %agent export PATH"),
    ("%agent export a b", "usage: %agent export PATH"),
    ("%agent rules remove", "usage: %agent rules remove RULE"),
    ("%agent rules remove Nope", "no session rule 'Nope'"),
    ("%agent rules add Bash", "usage: %agent rules"),
    ("%agent 'unclosed", "%agent: No closing quotation"),
]


@pytest.mark.parametrize("line, message", BAD_SUBCOMMANDS, ids=[line for line, _ in BAD_SUBCOMMANDS])
def test_a_bad_subcommand_is_one_line(line: str, message: str, agent_shell: Any, api: FakeAnthropicServer) -> None:
    tried(line)
    assert_one_clear_line(Cell(agent_shell, line), message)
    assert_next_cell_works(agent_shell, api)


def test_export_to_a_path_that_cannot_be_written_is_one_line(agent_shell: Any, api: FakeAnthropicServer,
                                                           tmp_path: Path) -> None:
    tried("%agent export into a missing directory")
    assert_next_cell_works(agent_shell, api)
    assert_one_clear_line(Cell(agent_shell, f"%agent export {tmp_path / 'missing' / 't.json'}"), "t.json")


def test_export_works_after_the_bad_inputs(agent_shell: Any, api: FakeAnthropicServer, tmp_path: Path) -> None:
    assert_next_cell_works(agent_shell, api)
    target = tmp_path / "t.json"
    assert Cell(agent_shell, f"%agent export {target}").error is None
    assert json.loads(target.read_text())["messages"][-1]["role"] == "assistant"
