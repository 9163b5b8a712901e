"""``%%agent`` notebooks executed by nbclient in real kernels (ipykernel 7 and 6.29).

The model is a `FakeAnthropicServer` in this test process, reached through
``ANTHROPIC_BASE_URL``; what the kernel sent is read from ``server.requests``. nbclient sends
``allow_stdin=False``, so these runs are headless: asks are denied by policy.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from jupyter_toolagent.testing import FakeAnthropicServer
from jupyter_toolagent.models import text_block, tool_use_block
from kernel_harness import cell_errors, cell_text, kernel_env, run_notebook

pytestmark = pytest.mark.kernel

CALL = re.compile(r"call (\w+)")


def answer(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The fake model: "call NAME" → a tool_use of NAME; tool results → quote them; else hello."""
    last = body["messages"][-1]
    content = last["content"] if isinstance(last["content"], list) else [{"type": "text", "text": last["content"]}]
    results = [b for b in content if b.get("type") == "tool_result"]
    if results:
        return [text_block("got: " + " | ".join(result_text(r) for r in results))]
    prompt = " ".join(b.get("text", "") for b in content if b.get("type") == "text")
    match = CALL.search(prompt)
    if match:
        return [tool_use_block(match.group(1), {})]
    return [text_block("hello from the fake model")]


def result_text(block: dict[str, Any]) -> str:
    content = block.get("content", "")
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if b.get("type") == "text")
    return str(content)


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for m in body["messages"] if isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_result"]


LOAD = "%load_ext jupyter_toolagent"
CHECK = "from jupyter_toolagent import current_session\nprint('PAIRING', current_session().check_pairing())"


def assert_valid(cell: Any) -> None:
    assert "PAIRING []" in cell_text(cell), cell_text(cell)


def test_redefined_tool_function_is_what_the_next_cell_calls(kernel_python: str, workdir) -> None:
    with FakeAnthropicServer(turns=answer) as server:
        nb = run_notebook([
            LOAD,
            "from jupyter_toolagent import tool\n"
            "@tool(read_only=True)\n"
            "def favourite_number() -> int:\n"
            "    \"\"\"The user's favourite number.\"\"\"\n"
            "    return 1",
            "%%agent\ncall favourite_number",
            CHECK,
            "@tool(read_only=True)\n"
            "def favourite_number() -> int:\n"
            "    \"\"\"The user's favourite number.\"\"\"\n"
            "    return 2",
            "%%agent\ncall favourite_number again",
            CHECK,
            "%agent check",
        ], kernel_python, kernel_env(server.base_url), workdir)
        bodies = [r.body for r in server.requests if r.path == "/v1/messages"]
    for cell in nb.cells:
        assert not cell_errors(cell), cell_text(cell)
    assert_valid(nb.cells[3])
    assert_valid(nb.cells[6])
    assert "(8 messages): valid — every tool_use has exactly one tool_result" in cell_text(nb.cells[7])
    assert len(bodies) == 4  # two cells × (tool_use, then the reply to its result)
    assert [result_text(r) for r in tool_results(bodies[1])] == ["1"]
    assert [result_text(r) for r in tool_results(bodies[3])] == ["1", "2"]  # same conversation, new definition
    assert "got: 2" in cell_text(nb.cells[5])


DENIED = ("delete_all was not run: delete_all is not allowed by any rule. It needs approval and nobody can "
          "approve in this run. To allow it, add `--allow 'delete_all'`.")


def test_headless_ask_is_denied_naming_the_allow_rule_and_allow_lets_it_run(kernel_python: str, workdir) -> None:
    with FakeAnthropicServer(turns=answer) as server:
        nb = run_notebook([
            LOAD,
            "from jupyter_toolagent import tool\n"
            "@tool\n"
            "def delete_all() -> str:\n"
            "    \"\"\"Delete everything.\"\"\"\n"
            "    global DELETED\n"
            "    DELETED = True\n"
            "    return 'deleted'",
            "%%agent\ncall delete_all",
            "print('DELETED', globals().get('DELETED'))\n" + CHECK,
            "%%agent --allow delete_all\ncall delete_all",
            "print('DELETED', globals().get('DELETED'))\n" + CHECK,
        ], kernel_python, kernel_env(server.base_url), workdir)
        bodies = [r.body for r in server.requests if r.path == "/v1/messages"]
    for cell in nb.cells:
        assert not cell_errors(cell), cell_text(cell)
    denied = tool_results(bodies[1])[-1]
    assert denied.get("is_error") is True
    assert result_text(denied) == DENIED
    assert "DELETED None" in cell_text(nb.cells[3])
    assert_valid(nb.cells[3])
    allowed = tool_results(bodies[3])[-1]
    assert not allowed.get("is_error") and result_text(allowed) == "deleted"
    assert "DELETED True" in cell_text(nb.cells[5])
    assert_valid(nb.cells[5])
    # the saved notebook keeps a static rendering of the headless run
    assert any("text/html" in o.get("data", {}) for o in nb.cells[2].outputs if o.output_type == "display_data")


def test_bad_options_give_one_line_and_send_nothing(kernel_python: str, workdir) -> None:
    with FakeAnthropicServer(turns=answer) as server:
        nb = run_notebook([
            LOAD,
            "%%agent --max-turns nope\ncall x",
            "%%agent --allow 'Bash(ls'\ncall x",
            "%%agent --frobnicate\ncall x",
            "%%agent --script no_such_variable\ncall x",
            "%%agent --tools NoSuchTool\ncall x",
            "%%agent\n   ",
        ], kernel_python, kernel_env(server.base_url), workdir)
        sent = list(server.requests)
    expected = [
        "argument --max-turns: invalid int value: 'nope'",
        "--allow: invalid permission rule 'Bash(ls': unbalanced parentheses",
        "unrecognized arguments: --frobnicate",
        "--script no_such_variable: no variable named 'no_such_variable' in the notebook",
        "--tools: unknown tool 'NoSuchTool'",
        "%%agent needs a prompt in the cell body (see %%agent?)",
    ]
    for cell, message in zip(nb.cells[1:], expected):
        # IPython prints a UsageError as one line on stderr (no traceback); the stream may
        # arrive in more than one message
        assert {(o.output_type, o.get("name")) for o in cell.outputs} == {("stream", "stderr")}, cell.outputs
        lines = "".join(o.text for o in cell.outputs).strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("UsageError: " + message), lines
    assert sent == []


def test_config_model_is_sent_and_unload_removes_everything(kernel_python: str, workdir) -> None:
    with FakeAnthropicServer(turns=answer) as server:
        nb = run_notebook([
            LOAD,
            LOAD,  # twice is harmless
            "ip = get_ipython()\n"
            "from jupyter_toolagent.notebook import agent_cell_transformer\n"
            "print('TRANSFORMERS', ip.input_transformers_cleanup.count(agent_cell_transformer))\n"
            "print('CONFIGURABLES', sum(type(c).__name__ == 'AgentMagics' for c in ip.configurables))",
            '%config AgentMagics.model = "claude-config-test"',
            "%%agent\nsay hello",
            "%%agent --model claude-flag-test\nsay hello",
            "%unload_ext jupyter_toolagent",
            "print('TRANSFORMERS', ip.input_transformers_cleanup.count(agent_cell_transformer))\n"
            "print('MAGICS', 'agent' in ip.magics_manager.magics['cell'], 'agent' in ip.magics_manager.magics['line'])\n"
            "print('CONFIGURABLES', sum(type(c).__name__ == 'AgentMagics' for c in ip.configurables))",
            "%%agent\nsay hello",
            LOAD,
            "%%agent\nsay hello",
        ], kernel_python, kernel_env(server.base_url), workdir)
        models = [r.body["model"] for r in server.requests if r.path == "/v1/messages"]
    assert "TRANSFORMERS 1" in cell_text(nb.cells[2]) and "CONFIGURABLES 1" in cell_text(nb.cells[2])
    for i in (3, 4, 5):
        assert not cell_errors(nb.cells[i]), cell_text(nb.cells[i])
    assert "TRANSFORMERS 0" in cell_text(nb.cells[7])
    assert "MAGICS False False" in cell_text(nb.cells[7])
    assert "CONFIGURABLES 0" in cell_text(nb.cells[7])
    assert "UsageError: Cell magic `%%agent` not found" in cell_text(nb.cells[8])
    assert not cell_errors(nb.cells[10]), cell_text(nb.cells[10])
    assert models[:2] == ["claude-config-test", "claude-flag-test"]
    assert len(models) == 3  # nothing was sent while unloaded
