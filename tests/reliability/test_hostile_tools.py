"""Inputs the model chooses can make the person's own code misbehave: a ``@tool`` wrapping a
command-line parser exits on bad arguments (argparse calls ``sys.exit(2)``), a function returns
something that is not text, a huge value, or an object whose ``repr`` fails. None of it may end
the run abnormally or leave the transcript invalid: the call gets an error result, the run goes
on, and the next run in the session works.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from reliability_support import RecordingPolicy, assert_every_tool_use_paired_once, empty_hooks
from suite_counts import report

from jupyter_toolagent import tool
from jupyter_toolagent.core.events import RunFinishedEvent
from jupyter_toolagent.core.session import RunConfig, Session
from jupyter_toolagent.models import ScriptedModel, tool_use_block

TRIED: list[str] = []
HERE = Path(__file__).resolve().parent
PROJECT = HERE.parents[1]


class Unprintable:
    def __repr__(self) -> str:
        raise RuntimeError("no repr for you")

    __str__ = __repr__


@tool
def odd_value(kind: str) -> Any:
    """Returns something that is not text."""
    return {
        "bytes": b"\x00\xff" * 10,
        "set": {1, 2, 3},
        "unprintable": Unprintable(),
        "huge": "x" * 3_000_000,
        "none": None,
        "nested": {"a": [Unprintable()]},
        "generator": (i for i in range(10**9)),
    }[kind]


def run_to_end(blocks: list[dict[str, Any]], hooks: Any = None) -> tuple[Session, list[Any], BaseException | None]:
    """One turn with ``blocks``, then text; a second run after it. An exception that escapes
    is returned, not raised."""
    session = Session()
    config = RunConfig(model=ScriptedModel([blocks, "ok"], when_exhausted="again"),
                       tool_provider=lambda: [odd_value], can_use_tool=RecordingPolicy(),
                       hooks=hooks or empty_hooks())

    async def both() -> list[Any]:
        first = [e async for e in session.run("go", config)]
        second = [e async for e in session.run("and again", config)]
        return [first, second]

    try:
        return session, asyncio.run(both()), None
    except Exception as exc:  # noqa: BLE001 - reported by assert_survived
        return session, [], exc


def assert_survived(session: Session, runs: list[Any], escaped: BaseException | None) -> None:
    assert escaped is None, f"{type(escaped).__name__} escaped the run: {escaped!r}"
    first, second = runs
    assert isinstance(first[-1], RunFinishedEvent) and first[-1].reason == "end_turn", first[-1]
    assert isinstance(second[-1], RunFinishedEvent) and second[-1].reason == "end_turn", second[-1]
    assert_every_tool_use_paired_once(session.messages)


@pytest.mark.parametrize("kind", ["bytes", "set", "unprintable", "huge", "none", "nested", "generator"])
def test_odd_return_values_become_results(kind: str) -> None:
    TRIED.append(f"odd_value {kind}")
    report("hostile_tool_cases", len(TRIED))
    session, runs, escaped = run_to_end([tool_use_block("odd_value", {"kind": kind})])
    assert_survived(session, runs, escaped)
    result = session.messages[2]["content"][0]
    assert result["type"] == "tool_result"
    assert len(str(result["content"])) < 60_000, "the result is cut to the budget"




def run_isolated(name: str) -> dict[str, Any]:
    """Run an exit scenario in its own interpreter (see exit_scenarios.py for why)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PROJECT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, str(HERE / "exit_scenarios.py"), name], capture_output=True, text=True,
                          timeout=60, env=env, cwd=HERE)
    lines = done.stdout.strip().splitlines()
    assert lines, f"the scenario printed nothing (exit {done.returncode}): {done.stderr[-2000:]}"
    return json.loads(lines[-1])


@pytest.mark.parametrize("name", ["argparse", "argparse-empty", "exit", "hook"])
def test_code_that_calls_exit_stops_only_its_call(name: str) -> None:
    TRIED.append(f"exit: {name}")
    report("hostile_tool_cases", len(TRIED))
    verdict = run_isolated(name)
    assert verdict["pairing"] == [], "the transcript stays valid"
    assert verdict["escaped"] is None, f"escaped the run: {verdict['escaped']}"
    assert verdict["reasons"] == ["end_turn", "end_turn"]
