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


LONG_OPTIONS = ["--model", "--new", "--session", "--mode", "--allow", "--deny", "--ask", "--tools", "--max-turns",
                "--script", "--interactive", "--approval-timeout", "--dry-run", "--system"]


@pytest.mark.parametrize("typo, meant", [("--max_turns", "--max-turns"), ("--alow", "--allow"), ("--dryrun", "--dry-run"),
                                         ("--sytem=hi", "--system"), ("--sesion", "--session")])
def test_a_misspelled_option_names_the_one_meant(agent_shell, typo: str, meant: str) -> None:
    with pytest.raises(UsageError) as info:
        parse(agent_shell, f"{typo} x")
    assert str(info.value) == f"unrecognized arguments: {typo.split('=')[0]}; did you mean {meant}?"


def test_every_dropped_inner_letter_of_every_option_is_named(agent_shell) -> None:
    """A generated family: each option with one inner letter dropped (a trailing cut is an
    accepted abbreviation, so not a mistake) names that option."""
    checked = 0
    for option in LONG_OPTIONS:
        for i in range(3, len(option) - 1):
            typo = option[:i] + option[i + 1:]
            if any(o.startswith(typo) for o in LONG_OPTIONS):
                continue  # an abbreviation argparse accepts (or calls ambiguous)
            with pytest.raises(UsageError) as info:
                parse(agent_shell, typo)
            assert f"unrecognized arguments: {typo}; did you mean {option}?" == str(info.value), typo
            checked += 1
    assert checked > 60


def test_everyday_lines_still_parse(agent_shell) -> None:
    assert parse(agent_shell, "--max-turns 2 --allow Read").max_turns == 2
    assert parse(agent_shell, "--max-turn 2").max_turns == 2  # argparse's unique-prefix abbreviation stays
    with pytest.raises(UsageError, match="unrecognized arguments: stray"):
        parse(agent_shell, "--mode plan stray")
