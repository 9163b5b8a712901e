"""B17 — what the shell classifier costs per Bash call, and that brace expansion is bounded.

Every Bash call is parsed, brace-expanded, classified, matched against the deny rules (looking
through runners) and safety-checked before it runs. This measures one full permission decision
(`permissions.decide` with a deny rule, caches cleared so each command is classified from
scratch) for everyday commands, for the same commands with brace words, and for brace words
that expand to the cap (1,000 words) and far beyond it (``{1..1000000}``, refused unexpanded):
the last must cost about what an everyday command costs, never time proportional to the
expansion.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time

from jupyter_toolagent.core.tool import ToolOptions, ToolPool, ToolUseContext
from jupyter_toolagent.permissions import PermissionContext, RuleBasedPermissions
from jupyter_toolagent.permissions.engine import decide_input
from jupyter_toolagent.permissions.shell import parse as shell_module
from jupyter_toolagent.permissions.shell import unwrap as shell_unwrap
from jupyter_toolagent.tools import Bash

from .harness import Figure, Row, Size, Target, pick

KEY = "B17"
TITLE = "Shell classification per Bash call (brace expansion bounded)"
EVERYDAY = [
    "ls -la", "git status", "git log --oneline -5", "cat notes.txt | grep -n 'x y' | head", "cd data && wc -l *.csv",
    "find . -name '*.py' -type f", "grep -r \"TODO\" src --include='*.py'", "python3 -m pytest -q tests/test_x.py",
    "sort -n -k 2 f | uniq -c", "pip list --format=json", "echo \"hello world\" > out.txt", "uv run pytest -q",
]
BRACED = [
    "ls data/{a,b}.csv", "cat notes.{txt,md}", "echo {1..3}", "wc -l {src,tests}/*.py", "git diff {main,HEAD}",
    "cp x{,.bak}", "mkdir -p build/{a,b,c}/{x,y}", "echo a{b,{c,d}}e", "grep -n x {a..e}.txt", "ls {data,docs}",
    "cat {x,y}/notes.txt", "sort {a,b}.csv",
]
AT_CAP = ["echo {1..999}", "echo {a,b}{1..499}"]
BEYOND = ["echo {1..1000000}", "{rm,x}{1..1000000} f", "echo {a..z}{a..z}{a..z}{1..100}"]


def _decision_seconds(commands: list[str], runs: int) -> list[float]:
    """Per-command seconds of one uncached decision, one sample per run (mean over the list)."""
    project = tempfile.mkdtemp(prefix="b11-")
    os.makedirs(os.path.join(project, "data"))
    os.makedirs(os.path.join(project, ".git"))
    bash = Bash()
    perms = PermissionContext(cwd=project, deny=("Bash(rm:*)",))
    ctx = ToolUseContext(tools=ToolPool([bash]), can_use_tool=RuleBasedPermissions(None, interactive=False),
                         permissions=perms, options=ToolOptions(cwd=project))

    async def one_run() -> float:
        start = time.perf_counter()
        for command in commands:
            shell_module._parse_cached.cache_clear()
            shell_unwrap.unwrap.cache_clear()
            await decide_input(bash, {"command": command}, ctx)
        return (time.perf_counter() - start) / len(commands)

    asyncio.run(one_run())  # warm-up (imports, parser tables)
    return [asyncio.run(one_run()) for _ in range(runs)]


def run(size: Size = "full") -> Figure:
    runs = pick(size, full=15, quick=5, smoke=2)
    figure = Figure(
        KEY, TITLE,
        method=(f"`permissions.decide` for the real `Bash` tool with the deny rule `Bash(rm:*)`, parse and unwrap "
                f"caches cleared before each command; per command, mean over each list, median of {runs} runs "
                "after one warm-up. Lists: everyday commands; the same kind with brace words; brace words that "
                "expand to just under the 1,000-word cap; and far beyond it (refused unexpanded)."),
        size=size,
    )
    base = figure.add(Row.from_samples("everyday commands", _decision_seconds(EVERYDAY, runs), "µs", scale=1e6))
    braced = figure.add(Row.from_samples("commands with brace words", _decision_seconds(BRACED, runs), "µs", scale=1e6))
    at_cap = figure.add(Row.from_samples("expanding to ~1,000 words", _decision_seconds(AT_CAP, runs), "µs", scale=1e6))
    beyond = figure.add(Row.from_samples("beyond the cap ({1..1000000} …)", _decision_seconds(BEYOND, runs), "µs",
                                         scale=1e6))
    for row in (braced, at_cap, beyond):
        row.compare_to(base)
    figure.targets.append(Target("a brace word far beyond the cap costs ≤ 20× an everyday command",
                                 beyond.ratio, 20.0, "×", note="own check: bounded, not proportional to 10⁶ words",
                                 own=True))
    figure.targets.append(Target("commands with brace words cost ≤ 3× everyday ones", braced.ratio, 3.0, "×",
                                 own=True))
    return figure
