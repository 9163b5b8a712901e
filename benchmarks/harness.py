"""What every benchmark produces: a `Figure` of rows (medians over repeated runs), the ratios
between rows measured in the same run, and the targets they are held to.

A figure never asserts anything: a missed target is a result to report, with what limits it,
not an exception. Rows whose comparison could not be measured (a peer is not installed, a
front end is missing) carry ``value=None`` and a note saying why, so a reader sees the gap.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any, Literal, Sequence

Size = Literal["full", "quick", "smoke"]
SIZES: tuple[Size, ...] = ("full", "quick", "smoke")


@dataclass
class Row:
    """One measured quantity: the median of ``runs`` repeated measurements."""

    label: str
    value: float | None
    unit: str
    runs: int = 0
    low: float | None = None
    high: float | None = None
    ratio: float | None = None
    """``value`` divided by the value of the row named in ``ratio_to`` (same run)."""
    ratio_to: str = ""
    note: str = ""

    @classmethod
    def from_samples(cls, label: str, samples: Sequence[float], unit: str, *, scale: float = 1.0,
                     note: str = "") -> "Row":
        if not samples:
            return cls.missing(label, unit, note or "no samples")
        scaled = [s * scale for s in samples]
        return cls(label, statistics.median(scaled), unit, len(scaled), min(scaled), max(scaled), note=note)

    @classmethod
    def missing(cls, label: str, unit: str, why: str) -> "Row":
        return cls(label, None, unit, 0, note=f"not measured: {why}")

    def compare_to(self, other: "Row") -> "Row":
        """Set ``ratio`` to self / other (left empty when either side is missing or zero)."""
        self.ratio_to = other.label
        if self.value is not None and other.value:
            self.ratio = self.value / other.value
        return self


@dataclass
class Target:
    """``value <= limit`` (or ``>=`` when ``at_least``). ``value=None``: not measured."""

    text: str
    value: float | None
    limit: float
    unit: str = ""
    at_least: bool = False
    note: str = ""
    own: bool = False
    """An own check of this benchmark (issue 8 sets no number for it); counted apart."""

    @property
    def met(self) -> bool | None:
        if self.value is None:
            return None
        return self.value >= self.limit if self.at_least else self.value <= self.limit

    @property
    def verdict(self) -> str:
        return {True: "met", False: "MISSED", None: "not measured"}[self.met]


@dataclass
class Figure:
    key: str
    title: str
    method: str
    """How it was measured, in one paragraph (goes into RESULTS.md)."""
    rows: list[Row] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    details: list[str] = field(default_factory=list)
    """Extra Markdown blocks (profiles, per-request tables)."""
    size: Size = "full"
    seconds: float = 0.0
    error: str | None = None
    """Set when the benchmark itself failed; the other fields say what was measured before."""

    def row(self, label: str) -> Row:
        for r in self.rows:
            if r.label == label:
                return r
        raise KeyError(label)

    def add(self, row: Row) -> Row:
        self.rows.append(row)
        return row


def pick(size: Size, *, full: Any, quick: Any, smoke: Any) -> Any:
    return {"full": full, "quick": quick, "smoke": smoke}[size]


def fmt(value: float | None, unit: str = "") -> str:
    """A number with 3 significant digits (thousands separated), or an em dash."""
    if value is None:
        return "—"
    if value == 0:
        text = "0"
    elif abs(value) >= 1000:
        text = f"{value:,.0f}"
    elif abs(value) >= 100:
        text = f"{value:.0f}"
    elif abs(value) >= 10:
        text = f"{value:.1f}"
    elif abs(value) >= 1:
        text = f"{value:.2f}"
    else:
        text = f"{value:.3g}"
    return f"{text} {unit}".strip() if unit else text
