"""Rendering figures: a plain-text table for the terminal, Markdown for RESULTS.md."""

from __future__ import annotations

from typing import Sequence

from .harness import Figure, Row, Target, fmt


def _ratio(row: Row) -> str:
    if not row.ratio_to:
        return ""
    return f"{fmt(row.ratio)}× vs {row.ratio_to}" if row.ratio is not None else f"— vs {row.ratio_to}"


def _range(row: Row) -> str:
    if row.low is None or row.high is None or row.runs < 2:
        return ""
    return f"{fmt(row.low)}–{fmt(row.high)}"


def _row_cells(row: Row) -> list[str]:
    return [row.label, fmt(row.value, row.unit), str(row.runs or ""), _range(row), _ratio(row), row.note]


def _target_cells(target: Target) -> list[str]:
    measured = fmt(target.value, target.unit)
    return [target.text, measured, target.verdict + (f" ({target.note})" if target.note else "")]


def text_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(s.rstrip() for s in out)


def figure_text(figure: Figure) -> str:
    head = f"{figure.key}  {figure.title}  [{figure.size}, {figure.seconds:.1f} s]"
    parts = [head, "=" * len(head)]
    if figure.rows:
        parts.append(text_table(["measurement", "median", "runs", "range", "ratio", "note"],
                                [_row_cells(r) for r in figure.rows]))
    if figure.targets:
        parts.append("")
        parts.append(text_table(["target", "measured", "verdict"], [_target_cells(t) for t in figure.targets]))
    if figure.error:
        parts.append(f"\nERROR: {figure.error}")
    for note in figure.notes:
        parts.append(f"note: {note}")
    return "\n".join(parts) + "\n"


def _target_rows(figures: Sequence[Figure]) -> list[list[str]]:
    rows = [[f.key, *_target_cells(t)] for f in figures for t in f.targets]
    rows += [[f.key, "benchmark failed", "—", f.error or ""] for f in figures if f.error and not f.targets]
    return rows


def summary_text(figures: Sequence[Figure]) -> str:
    return text_table(["figure", "target", "measured", "verdict"], _target_rows(figures))


# --------------------------------------------------------------------------------------------
# Markdown
# --------------------------------------------------------------------------------------------


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def md_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(_md_escape(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def figure_markdown(figure: Figure) -> str:
    parts = [f"## {figure.key} — {figure.title}", "", figure.method, ""]
    if figure.rows:
        parts += [md_table(["measurement", "median", "runs", "range (min–max)", "ratio", "note"],
                           [_row_cells(r) for r in figure.rows]), ""]
    if figure.targets:
        parts += [md_table(["target", "measured", "verdict"], [_target_cells(t) for t in figure.targets]), ""]
    if figure.error:
        parts += [f"**The benchmark failed:** `{figure.error}`", ""]
    for note in figure.notes:
        parts += [f"- {note}"]
    if figure.notes:
        parts.append("")
    for block in figure.details:
        parts += [block, ""]
    parts.append(f"_Size: {figure.size}; took {figure.seconds:.1f} s._")
    return "\n".join(parts) + "\n"


def results_markdown(figures: Sequence[Figure], *, command: str, machine: dict[str, str], started: str,
                     seconds: float, preface: Sequence[str] = ()) -> str:
    def count(own: bool, verdict: bool | None) -> int:
        return sum(1 for f in figures for t in f.targets if t.own is own and t.met is verdict)

    tally = (f"Targets of issue 8: {count(False, True)} met, {count(False, False)} missed, "
             f"{count(False, None)} not measured. Own checks (marked, no number in issue 8): "
             f"{count(True, True)} met, {count(True, False)} missed.")
    parts = [
        "# Benchmark results",
        "",
        "Written by the benchmark run itself; do not edit by hand. Re-create with:",
        "",
        f"```bash\n{command}\n```",
        "",
        f"Run started {started}, took {seconds:.0f} s. Every figure is the median of repeated runs (the number "
        "of runs is in each table); every ratio compares two rows measured in the same run on this machine.",
        "",
        "## Machine",
        "",
        md_table(["", ""], [[k, v] for k, v in machine.items()]),
        "",
        *preface,
        "## Targets",
        "",
        tally,
        "",
        md_table(["figure", "target", "measured", "verdict"], _target_rows(figures)),
        "",
    ]
    for figure in figures:
        parts.append(figure_markdown(figure))
    return "\n".join(parts)
