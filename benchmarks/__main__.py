"""``python -m benchmarks [--quick] [--only B2,B4] [--output PATH]``

Runs the benchmarks one after another, prints each figure as it finishes and a summary of the
targets at the end, and writes the Markdown report. A full run (no ``--only``, no ``--quick``)
writes ``benchmarks/RESULTS.md``; partial runs write a file only when ``--output`` is given,
so trying one figure never overwrites the published results.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import shlex
import sys
import time
import traceback
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

from . import machine, report
from .harness import Figure, Size

MODULES = {
    "B1": "b1_overhead",
    "B2": "b2_concurrency",
    "B3": "b3_streaming",
    "B4": "b4_end_to_end",
    "B5": "b5_display_cost",
    "B6": "b6_inspect_variable",
    "B7": "b7_pairing",
    "B8": "b8_prompt_cache",
    "B9": "b9_approval_wait",
    "B10": "b10_first_cell",
    "B11": "b11_mcp",
    "B12": "b12_deferred_and_subagents",
    "B13": "b13_context_compaction",
    "B14": "b14_kernel_changes",
    "B15": "b15_sandbox",
    "B16": "b16_secret_scrub",
    "B17": "b17_shell_classification",
}
RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def run_one(key: str, size: Size) -> Figure:
    """Run one benchmark; a crash becomes a figure that says so (the others still run)."""
    module = importlib.import_module(f".{MODULES[key]}", __package__)
    load = os.getloadavg()[0]
    start = time.perf_counter()
    try:
        figure = module.run(size)
    except Exception as exc:
        figure = Figure(key, getattr(module, "TITLE", key), method="", size=size,
                        error=f"{type(exc).__name__}: {exc}")
        figure.details.append("```\n" + traceback.format_exc(limit=8) + "```")
    figure.seconds = time.perf_counter() - start
    figure.notes.append(f"1-minute load average when this benchmark started: {load:.2f} "
                        f"(at the end: {os.getloadavg()[0]:.2f}; {os.cpu_count()} cores).")
    gc.collect()  # large objects of one benchmark must not weigh on the next
    return figure


def run_all(keys: Sequence[str], size: Size, *, echo: bool = True) -> list[Figure]:
    figures = []
    for key in keys:
        if echo:
            print(f"running {key} ({size}) …", file=sys.stderr, flush=True)
        figure = run_one(key, size)
        figures.append(figure)
        if echo:
            print(report.figure_text(figure), flush=True)
    return figures


def _loads(values: tuple[float, float, float]) -> str:
    return ", ".join(f"{v:.2f}" for v in values)


def parse_only(value: str | None) -> list[str]:
    if not value:
        return list(MODULES)
    keys = [part.strip().upper() for part in value.split(",") if part.strip()]
    unknown = [k for k in keys if k not in MODULES]
    if unknown:
        raise SystemExit(f"--only: unknown benchmark(s) {', '.join(unknown)}; known: {', '.join(MODULES)}")
    return keys


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[1])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and smaller inputs (a rough look)")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: checks that every benchmark runs")
    parser.add_argument("--only", metavar="B2,B4", help="run only these benchmarks (comma-separated)")
    parser.add_argument("--output", metavar="PATH", type=Path, help="write the Markdown report here")
    args = parser.parse_args(argv)
    keys = parse_only(args.only)
    size: Size = "smoke" if args.smoke else "quick" if args.quick else "full"
    output = args.output
    if output is None and size == "full" and args.only is None:
        output = RESULTS

    started = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load_before = os.getloadavg()
    start = time.perf_counter()
    figures = run_all(keys, size)
    seconds = time.perf_counter() - start
    load_after = os.getloadavg()

    print("Targets\n=======")
    print(report.summary_text(figures))
    if output is not None:
        given = argv if argv is not None else sys.argv[1:]
        command = "python -m benchmarks" + "".join(f" {shlex.quote(a)}" for a in given)
        facts = machine.describe()
        facts["load average (1, 5, 15 min)"] = (f"{_loads(load_before)} at the start, {_loads(load_after)} at the end "
                                                 f"({os.cpu_count()} cores)")
        preface = []
        if max(load_before[0], load_after[0]) > 0.5 * (os.cpu_count() or 1):
            preface.append("**Other work was running on this machine during the run** (load average above half the "
                           "cores): wall-clock figures carry that contention. Each figure notes the load it ran under.\n")
        text = report.results_markdown(figures, command=command, machine=facts, started=started,
                                       seconds=seconds, preface=preface)
        output.write_text(text, encoding="utf-8")
        print(f"\nwrote {output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
