"""Summaries of tables and arrays (pandas, polars, numpy) that stay fast at any size.

Statistics come from a seeded random sample (10,000 rows, 100,000 array elements), so a
10-million-row frame costs the same as a 20,000-row one and two calls give the same numbers.
The text says when a figure comes from a sample. Sections go into a `TextBudget` most important
first: shape and types, then the first rows, then statistics, then missing values.
"""

from __future__ import annotations

import sys
from typing import Any

from .bounded import TextBudget, cut_end

__all__ = [
    "SAMPLE_ELEMENTS",
    "SAMPLE_ROWS",
    "SEED",
    "summarize_numpy_array",
    "summarize_pandas_frame",
    "summarize_pandas_series",
    "summarize_polars",
]

SAMPLE_ROWS = 10_000
SAMPLE_ELEMENTS = 100_000
SEED = 0
EXACT_NULLS_MAX_ROWS = 1_000_000
MAX_COLUMNS_LISTED = 40
MAX_COLUMNS_STATS = 20
HEAD_ROWS = 5
STAT_ROWS = ("count", "unique", "top", "freq", "mean", "std", "min", "50%", "max")


def _size(nbytes: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if nbytes < 1024 or unit == "TB":
            return f"{nbytes:.0f} {unit}" if unit == "B" else f"{nbytes:.1f} {unit}"
        nbytes /= 1024
    return ""  # unreachable


def _section(budget: TextBudget, title: str, compute: Any) -> None:
    """One section; a failure to compute it is reported in place of it, never raised."""
    if budget.cut:
        return
    try:
        body = compute()
    except Exception as exc:
        body = f"(not available: {type(exc).__name__}: {cut_end(str(exc), 200)})"
    if body:
        budget.add(f"{title}\n{body}\n" if title else f"{body}\n")


def _sample_positions(n: int, k: int) -> Any:
    import numpy as np

    rng = np.random.default_rng(SEED)
    return np.sort(rng.choice(n, size=k, replace=False))


# --- pandas ------------------------------------------------------------------------------------
def _pandas_sample(obj: Any) -> tuple[Any, str]:
    n = len(obj)
    if n <= SAMPLE_ROWS:
        return obj, f"all {n:,} rows"
    return obj.take(_sample_positions(n, SAMPLE_ROWS)), f"a random sample of {SAMPLE_ROWS:,} of {n:,} rows, seed {SEED}"


def _describe(sample: Any) -> str:
    table = sample.describe(include="all") if sample.ndim == 2 else sample.describe()
    keep = [r for r in STAT_ROWS if r in table.index]
    table = table.loc[keep]
    if sample.ndim == 2:
        text = table.T.to_string(na_rep="", float_format=lambda v: f"{v:.6g}", max_colwidth=30)
    else:
        text = table.to_string(na_rep="", float_format=lambda v: f"{v:.6g}")
    return "\n".join(line.rstrip() for line in text.splitlines())


def _missing(obj: Any, sample: Any) -> str:
    exact = len(obj) <= EXACT_NULLS_MAX_ROWS
    counts = (obj if exact else sample).isna().sum()
    where = "" if exact else " (in the sample)"
    if obj.ndim == 1:
        return f"{int(counts):,}{where}"
    nonzero = [(str(name), int(c)) for name, c in counts.items() if c]
    if not nonzero:
        return f"none{where}"
    return ", ".join(f"{name}: {c:,}" for name, c in nonzero[:MAX_COLUMNS_LISTED]) + where


def summarize_pandas_frame(df: Any, budget: TextBudget) -> None:
    rows, cols = df.shape
    memory = _size(float(df.memory_usage(index=True, deep=False).sum()))
    budget.add(f"pandas DataFrame: {rows:,} rows × {cols:,} columns, {memory} (object contents not counted)\n")

    def columns() -> str:
        lines = [f"  {name}: {dtype}" for name, dtype in list(df.dtypes.items())[:MAX_COLUMNS_LISTED]]
        if cols > MAX_COLUMNS_LISTED:
            lines.append(f"  ... and {cols - MAX_COLUMNS_LISTED:,} more columns")
        index = df.index
        kind = type(index).__name__
        if kind != "RangeIndex":
            lines.append(f"  index: {kind}{f' {index.name!r}' if index.name is not None else ''}, dtype {index.dtype}")
        return "\n".join(lines)

    _section(budget, "Columns (dtype):", columns)
    _section(budget, f"First {HEAD_ROWS} rows:", lambda: df.head(HEAD_ROWS).iloc[:, :12].to_string(max_colwidth=40))
    if rows and cols:
        sample, label = _pandas_sample(df)
        _section(budget, f"Statistics of the first {min(cols, MAX_COLUMNS_STATS)} columns ({label}):",
                 lambda: _describe(sample.iloc[:, :MAX_COLUMNS_STATS]))
        _section(budget, "Missing values:", lambda: _missing(df, sample))


def summarize_pandas_series(s: Any, budget: TextBudget) -> None:
    name = f" {s.name!r}" if s.name is not None else ""
    budget.add(f"pandas Series{name}: {len(s):,} values, dtype {s.dtype}\n")
    _section(budget, f"First {HEAD_ROWS} values:", lambda: s.head(HEAD_ROWS).to_string(max_rows=HEAD_ROWS))
    if len(s):
        sample, label = _pandas_sample(s)
        _section(budget, f"Statistics ({label}):", lambda: _describe(sample))
        _section(budget, "Missing values:", lambda: _missing(s, sample))


# --- numpy -------------------------------------------------------------------------------------
def _array_sample(a: Any) -> tuple[Any, str]:
    import numpy as np

    if a.size <= SAMPLE_ELEMENTS:
        return a.reshape(-1), f"all {a.size:,} elements"
    flat = _sample_positions(a.size, SAMPLE_ELEMENTS)
    # Index through the shape: reshaping a non-contiguous array would copy all of it.
    return a[np.unravel_index(flat, a.shape)], f"a random sample of {SAMPLE_ELEMENTS:,} of {a.size:,} elements, seed {SEED}"


def _array_stats(values: Any) -> str:
    import numpy as np

    kind = values.dtype.kind
    if kind == "b":
        return f"true: {int(values.sum()):,} of {values.size:,}"
    if kind in "iu":
        return f"min {values.min()}, max {values.max()}, mean {values.mean():.6g}, std {values.std():.6g}"
    if kind == "f":
        nan = int(np.isnan(values).sum())
        finite = values[~np.isnan(values)]
        if not finite.size:
            return f"all {values.size:,} values are NaN"
        return (f"min {finite.min():.6g}, max {finite.max():.6g}, mean {finite.mean(dtype=np.float64):.6g}, "
                f"std {finite.std(dtype=np.float64):.6g}, NaN: {nan:,}")
    if kind in "mM":
        valid = values[~np.isnat(values)]
        return f"min {valid.min()}, max {valid.max()}" if valid.size else "all values are NaT"
    return ""


def summarize_numpy_array(a: Any, budget: TextBudget) -> None:
    import numpy as np

    budget.add(f"numpy {type(a).__name__}: shape {a.shape}, dtype {a.dtype}, {a.size:,} elements, {_size(a.nbytes)}\n")
    _section(budget, "Values:", lambda: np.array2string(a, threshold=20, edgeitems=3, max_line_width=100))
    if a.size and a.dtype.kind in "biufmM":
        values, label = _array_sample(a)
        _section(budget, f"Statistics ({label}):", lambda: _array_stats(values))


# --- polars ------------------------------------------------------------------------------------
def _polars_config() -> Any:
    pl = sys.modules["polars"]
    return pl.Config(tbl_cols=12, tbl_rows=12, fmt_str_lengths=40, tbl_width_chars=160,
                     tbl_formatting="ASCII_MARKDOWN", tbl_hide_dataframe_shape=True)


def _polars_sample(obj: Any) -> tuple[Any, str]:
    n = len(obj)
    if n <= SAMPLE_ROWS:
        return obj, f"all {n:,} rows"
    return obj.sample(n=SAMPLE_ROWS, seed=SEED), f"a random sample of {SAMPLE_ROWS:,} of {n:,} rows, seed {SEED}"


def summarize_polars(obj: Any, budget: TextBudget) -> None:
    """A polars DataFrame, Series or LazyFrame (a LazyFrame is never collected)."""
    pl = sys.modules["polars"]
    if isinstance(obj, pl.LazyFrame):
        budget.add("polars LazyFrame (not collected: running the query could be expensive)\n")
        _section(budget, "Schema:", lambda: "\n".join(f"  {k}: {v}" for k, v in obj.collect_schema().items()))
        return
    if isinstance(obj, pl.Series):
        budget.add(f"polars Series {obj.name!r}: {len(obj):,} values, dtype {obj.dtype}\n")
    else:
        budget.add(f"polars DataFrame: {obj.height:,} rows × {obj.width:,} columns, "
                   f"about {_size(obj.estimated_size())}\n")
        _section(budget, "Columns (dtype):", lambda: "\n".join(
            [f"  {k}: {v}" for k, v in list(obj.schema.items())[:MAX_COLUMNS_LISTED]]
            + ([f"  ... and {obj.width - MAX_COLUMNS_LISTED:,} more columns"] if obj.width > MAX_COLUMNS_LISTED else [])
        ))
    with _polars_config():
        _section(budget, f"First {HEAD_ROWS} {'values' if isinstance(obj, pl.Series) else 'rows'}:", lambda: str(obj.head(HEAD_ROWS)))
        if len(obj):
            sample, label = _polars_sample(obj)
            narrow = sample if isinstance(obj, pl.Series) else sample.select(sample.columns[:MAX_COLUMNS_STATS])
            _section(budget, f"Statistics ({label}):", lambda: str(narrow.describe()))
    _section(budget, "Missing values:", lambda: _polars_nulls(obj, pl))


def _polars_nulls(obj: Any, pl: Any) -> str:
    if isinstance(obj, pl.Series):
        return f"{obj.null_count():,}"
    counts = obj.null_count().row(0, named=True)  # kept in column metadata: cheap at any size
    nonzero = [(k, v) for k, v in counts.items() if v]
    return ", ".join(f"{k}: {v:,}" for k, v in nonzero[:MAX_COLUMNS_LISTED]) if nonzero else "none"
