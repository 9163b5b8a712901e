"""The client tools the recorded streams call, as ``@tool`` functions that record each call.

Imported by the `Agent` replay tests and, in a real kernel, by the replay notebook (so both
paths run exactly these functions). Parameters match what the recordings send.
"""

from __future__ import annotations

from typing import Any

from jupyter_toolagent import tool

CALLS: list[tuple[str, dict[str, Any]]] = []


def _record(name: str, **input: Any) -> str:
    CALLS.append((name, {k: v for k, v in input.items() if v is not None}))
    return f"{name} ran"


@tool(read_only=True)
def get_weather(location: str, units: str | None = None, unit: str | None = None) -> str:
    """The weather of a city.

    Args:
        location: City and region.
        units: "c" or "f".
        unit: "celsius" or "fahrenheit".
    """
    return _record("get_weather", location=location, units=units, unit=unit)


@tool(read_only=True)
def weather(location: str) -> str:
    """The weather of a city.

    Args:
        location: City.
    """
    return _record("weather", location=location)


@tool(read_only=True)
def add(a: int, b: int) -> str:
    """Add two numbers.

    Args:
        a: First.
        b: Second.
    """
    return _record("add", a=a, b=b)


@tool(read_only=True)
def multiply(a: int, b: int) -> str:
    """Multiply two numbers.

    Args:
        a: First.
        b: Second.
    """
    return _record("multiply", a=a, b=b)


@tool(read_only=True)
def computer(action: str, coordinate: list[int] | None = None, text: str | None = None) -> str:
    """Operate a (recorded) computer.

    Args:
        action: What to do, e.g. "screenshot".
        coordinate: Where.
        text: What to type.
    """
    return _record("computer", action=action, coordinate=coordinate, text=text)


@tool(read_only=True)
def make_file(filename: str, lines_of_text: list[str]) -> str:
    """Write a file (recorded only).

    Args:
        filename: Name.
        lines_of_text: Lines.
    """
    return _record("make_file", filename=filename, lines_of_text=lines_of_text)


@tool(read_only=True)
def ask_internal_tool(query: str) -> str:
    """Ask an internal tool.

    Args:
        query: The question.
    """
    return _record("ask_internal_tool", query=query)


@tool(read_only=True)
def submit_analysis(summary: str) -> str:
    """Submit an analysis.

    Args:
        summary: The analysis.
    """
    return _record("submit_analysis", summary=summary)


REPLAY_TOOLS = [get_weather, weather, add, multiply, computer, make_file, ask_internal_tool, submit_analysis]
