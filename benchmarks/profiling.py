"""Where the time goes when a target is missed: a cProfile run rendered as Markdown."""

from __future__ import annotations

import cProfile
import io
import pstats
import re
from typing import Any, Awaitable, Callable

_PREFIX = re.compile(r"(?<=\s)/\S*/(?:site-packages|python3\.\d+|main)/")


async def profile_markdown(run: Callable[[], Awaitable[Any]], what: str, *, top: int = 14,
                           restrict: str | None = None) -> str:
    """Profile one awaited ``run()``; the top functions by own and by cumulative time.

    ``restrict`` (a regular expression on ``file:line(function)``) narrows the cumulative
    list, e.g. to the project's own modules.
    """
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        await run()
    finally:
        profiler.disable()
    parts = [f"Profile of {what} (cProfile; its own overhead inflates the times, the proportions are what matter):"]
    for key, title, pattern in (("tottime", "own time", None), ("cumulative", "cumulative time", restrict)):
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out).sort_stats(key)
        stats.print_stats(*([pattern] if pattern else []), top)
        lines = out.getvalue().splitlines()
        start = next((i for i, line in enumerate(lines) if line.lstrip().startswith("ncalls")), 0)
        body = "\n".join(_short(line) for line in lines[start:]).rstrip()
        parts.append(f"Top by {title}" + (f" (matching `{pattern}`)" if pattern else "") + f":\n\n```\n{body}\n```")
    return "\n\n".join(parts)


def _short(line: str) -> str:
    """Paths cut to their package-relative part, so the table stays readable."""
    return _PREFIX.sub("", line)
