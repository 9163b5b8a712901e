"""Benchmarks of issue 8: the runtime beside the tools users would otherwise pick.

``python -m benchmarks [--quick] [--only B2,B4]`` runs them one after another (never in
parallel: the machine has two cores and every figure is a wall-clock or CPU measurement) and
writes ``benchmarks/RESULTS.md``. Each ``bN_*.py`` module has ``run(size) -> Figure``; sizes are
``full`` (the published figures), ``quick`` (fewer repeats) and ``smoke`` (tiny, for the tests
that keep the benchmarks working — they check the figures are well formed, never the numbers).
"""
