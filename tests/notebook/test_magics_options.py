"""`%%agent` option parsing: every option, and one-line errors for every kind of mistake."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

from jupyter_toolagent.notebook.options import CellOptions, parse_cell_options


def parse(agent_shell, line: str) -> CellOptions:
    return parse_cell_options(agent_shell.magics_manager.registry["AgentMagics"].agent_cell, line)


def test_all_options(agent_shell) -> None:
    options = parse(agent_shell, "--model m1 --new --session s2 --mode plan --allow 'Bash(git log:*)' --allow Read "
                                 "--deny Write --ask Edit --tools 'ListVariables, f' --max-turns 3 --script T "
                                 "--no-interactive --approval-timeout 2.5 --dry-run --system 'be brief'")
    assert options == CellOptions(
        model="m1", new=True, session="s2", mode="plan", allow=["Bash(git log:*)", "Read"], deny=["Write"],
        ask=["Edit"], tools=["ListVariables", "f"], max_turns=3, script="T", interactive=False,
        approval_timeout=2.5, dry_run=True, system="be brief",
    )
    assert parse(agent_shell, "").interactive is None
    assert parse(agent_shell, "--interactive").interactive is True


@pytest.mark.parametrize("line, message", [
    ("--max-turns x", "argument --max-turns: invalid int value: 'x'"),
    ("--max-turns 0", "--max-turns must be at least 1, not 0"),
    ("--approval-timeout -1", "--approval-timeout must be a number of seconds >= 0, not -1.0"),
    ("--mode nope", "argument --mode: invalid choice: 'nope'"),
    ("--bogus", "unrecognized arguments: --bogus"),
    ("--system 'unclosed", "cannot read the %%agent options: No closing quotation"),
    ("--deny 'Read(('", "--deny: invalid permission rule 'Read((': "),
    ("--ask ''", "--ask: invalid permission rule '': empty rule"),
    ("--script 'not a name'", "--script needs a variable name, not 'not a name'"),
    ("--tools ' , '", "--tools needs at least one tool name"),
    ("--model ''", "--model needs a value"),
])
def test_mistakes_are_one_usage_error_line(agent_shell, line: str, message: str) -> None:
    with pytest.raises(UsageError) as info:
        parse(agent_shell, line)
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)


def test_help_is_generated(agent_shell) -> None:
    doc = agent_shell.find_cell_magic("agent").__doc__
    assert doc.lstrip(": \n").startswith("%%agent [--model NAME]")
    for option in ("--new", "--session NAME", "--mode", "--allow RULE", "--deny RULE", "--ask RULE", "--tools LIST",
                   "--max-turns N", "--script VAR", "--interactive", "--no-interactive",
                   "--approval-timeout SECONDS", "--dry-run", "--system TEXT"):
        assert option in doc, option
    assert "%config AgentMagics.model" in doc
