"""What `summarize` says about each kind of value (content, not just size)."""

from __future__ import annotations

import collections
import io
import itertools

import pytest

from jupyter_toolagent.tools.summarize import summarize

np = pytest.importorskip("numpy")
pd = pytest.importorskip("pandas")


def test_dataframe_shape_dtypes_head_stats_and_missing_values() -> None:
    df = pd.DataFrame({"price": [1.0, 2.0, None, 4.0], "city": ["a", "b", "a", None]})
    text = summarize(df)
    assert "4 rows × 2 columns" in text
    assert "price: float64" in text and "city:" in text
    assert "First 5 rows:" in text and "NaN" in text
    assert "mean" in text and "2.33333" in text  # mean of 1, 2, 4
    assert "Missing values:\nprice: 1, city: 1" in text


def test_large_dataframe_statistics_come_from_a_seeded_sample() -> None:
    n = 50_000
    df = pd.DataFrame({"v": np.arange(n, dtype=float)})
    text = summarize(df)
    assert "a random sample of 10,000 of 50,000 rows, seed 0" in text
    assert summarize(df) == text  # same sample every time


def test_series_and_arrays() -> None:
    s = pd.Series([3, 1, 2], name="n")
    assert "pandas Series 'n': 3 values, dtype int64" in summarize(s)
    a = np.array([[1.0, np.nan], [3.0, 5.0]])
    text = summarize(a)
    assert "shape (2, 2), dtype float64" in text
    assert "min 1, max 5, mean 3" in text and "NaN: 1" in text
    assert "true: 2 of 3" in summarize(np.array([True, False, True]))


def test_array_sample_indexes_through_the_shape_without_copying() -> None:
    a = np.arange(300_000, dtype=np.float64).reshape(600, 500)[:, ::2]  # not contiguous
    text = summarize(a)
    assert "a random sample of 100,000 of 150,000 elements" in text


def test_polars_frames_series_and_lazy_frames() -> None:
    pl = pytest.importorskip("polars")
    df = pl.DataFrame({"a": [1, 2, None], "b": ["x", "y", "z"]})
    text = summarize(df)
    assert "polars DataFrame: 3 rows × 2 columns" in text and "a: Int64" in text and "Missing values:\na: 1" in text
    assert "polars Series 'b': 3 values" in summarize(df["b"])
    lazy = summarize(df.lazy().filter(pl.col("a") > 1))
    assert "not collected" in lazy and "a: Int64" in lazy


def test_mappings_and_sequences_show_length_and_first_items_in_order() -> None:
    d = {f"k{i}": i for i in range(50)}
    text = summarize(d)
    assert text.startswith("dict with 50 keys")
    assert text.index("'k0': 0") < text.index("'k9': 9") and "'k10'" not in text
    assert "40 more" in text
    assert "[0] 'a'" in summarize(["a", "b"]) and "deque with 2 items" in summarize(collections.deque([1, 2]))


def test_nested_big_values_are_described_not_printed() -> None:
    text = summarize({"frame": pd.DataFrame({"a": range(1000)}), "nums": list(range(10_000))})
    assert "pandas DataFrame 1,000×1" in text and "list, 10,000 items" in text
    assert "[0, 1, 2, 3, 4, ...]" in text and len(text) < 500


def test_text_shows_length_lines_and_a_window() -> None:
    text = "line\n" * 10_000
    out = summarize(text, 1_000)
    assert out.startswith("str: 50,000 characters, 10,001 lines")
    assert "First" in out and "Last" in out and len(out) <= 1_000
    assert summarize("short") == "str: 5 characters, 1 lines\n'short'"


@pytest.mark.parametrize(
    "make",
    [lambda: itertools.count(), lambda: (i for i in itertools.count()), lambda: iter([1, 2, 3]), lambda: map(str, [1])],
)
def test_iterators_are_never_advanced(make) -> None:  # noqa: ANN001
    it = make()
    text = summarize(it)
    assert "not read" in text
    first = next(it)
    assert first in (0, 1, "1")


def test_open_files_are_named_not_read() -> None:
    stream = io.StringIO("secret contents")
    text = summarize(stream)
    assert "not read" in text and "secret contents" not in text
    assert stream.tell() == 0


def test_functions_classes_and_objects() -> None:
    def area(width: float, height: float = 1.0) -> float:
        """Area of a rectangle."""
        return width * height

    text = summarize(area)
    assert text.startswith("function ") and "area(width: 'float', height: 'float' = 1.0) -> 'float'" in text
    assert "Area of a rectangle." in text

    class Point:
        def __init__(self) -> None:
            self.x, self.y, self._hidden = 1, 2, 3

    text = summarize(Point())
    assert ".x: 1" in text and ".y: 2" in text and "_hidden" not in text


def test_figures_are_described() -> None:
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    fig = Figure()
    ax = fig.add_subplot()
    ax.set_title("Revenue")
    ax.plot([1, 2])
    text = summarize(fig)
    assert "matplotlib Figure" in text and "Revenue" in text and "1 lines" in text


@pytest.mark.parametrize("budget", [200, 1_000, 4_000])
def test_every_summary_fits_its_budget(budget: int) -> None:
    values = [
        pd.DataFrame({f"c{i}": range(100) for i in range(60)}),
        {i: "v" * 500 for i in range(100)},
        "x" * 100_000,
        list(range(1000)),
        np.zeros((100, 100)),
    ]
    for value in values:
        assert len(summarize(value, budget)) <= budget
