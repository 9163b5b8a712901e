"""B14 — the kernel-change note on a big namespace (SPEC §15).

Every ``%%agent`` cell compares the namespace with the snapshot taken at the end of the
session's previous agent cell (the note) and takes a new snapshot when it ends. Both run on the
kernel's thread, so they must stay cheap whatever the person keeps in memory. The namespace has
1,000 variables: a 10-million-row DataFrame, ndarrays, lists, dicts, strings, numbers, functions,
class instances and modules (hidden, as in ListVariables). Measured per cell: the note with
nothing changed, the note after a typical burst of changes (the frame and 20 more names
rebound, 10 deleted, 10 added, one list appended to in place), the end-of-cell snapshot, and
the note's size. Beside it, what a value-based check would cost: hashing the frame's rows
(`pandas.util.hash_pandas_object`) and pickling the other values.
"""

from __future__ import annotations

import hashlib
import pickle
import time
import types
from typing import Any, Callable

from .harness import Figure, Row, Size, Target, pick

KEY = "B14"
TITLE = "Kernel-change note on 1,000 variables with a 10M-row DataFrame"
MAX_MS = 20.0
MAX_BYTES = 1024


class Point:
    def __init__(self, x: int) -> None:
        self.x = x


def make_namespace(rows: int, count: int) -> dict[str, Any]:
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    ns: dict[str, Any] = {"df": pd.DataFrame({"id": np.arange(rows), "value": rng.standard_normal(rows)}),
                          "np": np, "pd": pd, "json": __import__("json")}
    makers: list[Callable[[int], Any]] = [
        lambda i: i, lambda i: float(i) / 3, lambda i: f"text {i}" * 3, lambda i: list(range(i % 50)),
        lambda i: {"k": i, "v": [i]}, lambda i: np.arange(i % 100), lambda i: Point(i),
        lambda i: types.SimpleNamespace(i=i), lambda i: (lambda x, i=i: x + i), lambda i: pd.Series(range(i % 20)),
    ]
    i = 0
    while len(ns) < count:
        ns[f"var_{i:04d}"] = makers[i % len(makers)](i)
        i += 1
    return ns


def change(ns: dict[str, Any]) -> None:
    """A typical burst between two agent cells."""
    ns["df"] = ns["df"].head(len(ns["df"]) - 1)
    names = sorted(n for n in ns if n.startswith("var_"))
    for name in names[:20]:
        ns[name] = Point(0)
    for name in names[20:30]:
        del ns[name]
    for j in range(10):
        ns[f"new_{j}"] = j
    next(v for v in ns.values() if isinstance(v, list)).append(1)


def value_hash(ns: dict[str, Any]) -> str:
    """What a value-based change check would compute (the approach this design avoids)."""
    import pandas as pd

    digest = hashlib.sha256()
    for name, value in ns.items():
        if isinstance(value, pd.DataFrame):
            digest.update(pd.util.hash_pandas_object(value, index=True).values.tobytes())
        elif not isinstance(value, types.ModuleType):
            try:
                digest.update(pickle.dumps(value))
            except Exception:
                digest.update(repr(type(value)).encode())
    return digest.hexdigest()


def run(size: Size = "full") -> Figure:
    from jupyter_toolagent.notebook.kernel_changes import KernelWatch

    rows = pick(size, full=10_000_000, quick=10_000_000, smoke=10_000)
    count = pick(size, full=1_000, quick=1_000, smoke=1_000)
    runs = pick(size, full=30, quick=10, smoke=3)
    figure = Figure(
        KEY, TITLE,
        method=(f"`KernelWatch.note` and `KernelWatch.looked` on a namespace of {count:,} variables including a "
                f"{rows:,}-row DataFrame; median of {runs} repeats after one warm-up. A cell costs one note and one "
                "snapshot. Beside it: a value-based check (frame rows hashed, other values pickled), timed once."),
        size=size,
    )
    ns = make_namespace(rows, count)
    watch = KernelWatch()
    watch.looked(ns, None)

    def timed(fn: Callable[[], Any]) -> tuple[list[float], Any]:
        fn()
        samples, value = [], None
        for _ in range(runs):
            start = time.perf_counter()
            value = fn()
            samples.append(time.perf_counter() - start)
        return samples, value

    quiet_samples, quiet_note = timed(lambda: watch.note(ns, None))
    quiet = figure.add(Row.from_samples("note, nothing changed", quiet_samples, "ms", scale=1000,
                                        note=f"note: {'none' if quiet_note is None else 'UNEXPECTED'}"))
    snapshot_samples, _ = timed(lambda: watch.looked(ns, None))
    snapshot = figure.add(Row.from_samples("end-of-cell snapshot (looked)", snapshot_samples, "ms", scale=1000))
    before = watch.snapshot
    change(ns)

    def changed_note() -> str | None:
        watch.snapshot = before
        return watch.note(ns, None)

    changed_samples, note = timed(changed_note)
    changed = figure.add(Row.from_samples("note after 42 changes", changed_samples, "ms", scale=1000))
    per_cell = figure.add(Row("per cell: note + snapshot (worst of the two notes)",
                              max(quiet.value or 0, changed.value or 0) + (snapshot.value or 0), "ms", runs))
    size_bytes = len((note or "").encode())
    figure.add(Row("note size after 42 changes", float(size_bytes), "bytes", 1))

    start = time.perf_counter()
    value_hash(ns)
    hashed = figure.add(Row("value-based check (hash the frame, pickle the rest), once",
                            (time.perf_counter() - start) * 1000, "ms", 1))
    per_cell.compare_to(hashed)
    figure.targets.append(Target(f"per cell ≤ {MAX_MS:g} ms", per_cell.value, MAX_MS, "ms"))
    figure.targets.append(Target(f"note ≤ {MAX_BYTES:,} bytes", float(size_bytes), MAX_BYTES, "bytes"))
    figure.details.append("The note after the changes, as the model receives it:\n\n```\n" + (note or "") + "\n```")
    return figure
