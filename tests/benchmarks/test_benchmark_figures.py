"""Every benchmark runs at its smoke size and produces a well-formed figure.

These tests keep the benchmarks working; they never assert performance. A figure is
well formed when every row is either a finite measurement with its run count and range, or
says explicitly why it was not measured; ratios are the quotient of the rows they name;
every target is judged against its own measurement; and both renderings show all of it.
"""

from __future__ import annotations

import importlib
import math
from typing import Any

import pytest

from benchmarks import report
from benchmarks.__main__ import MODULES
from benchmarks.harness import Figure, Row, Target


def check_row(row: Row, figure: Figure) -> None:
    assert row.label and isinstance(row.unit, str), row
    if row.value is None:
        assert row.note.startswith("not measured: ") and len(row.note) > len("not measured: "), row
        assert row.runs == 0
        return
    assert math.isfinite(row.value), row
    assert row.runs >= 0
    if row.low is not None or row.high is not None:
        assert row.low is not None and row.high is not None
        assert row.low <= row.value <= row.high, row
    if row.ratio_to:
        other = figure.row(row.ratio_to)
        if other.value:
            assert row.ratio == pytest.approx(row.value / other.value), row
        else:
            assert row.ratio is None


def check_target(target: Target) -> None:
    assert target.text and math.isfinite(target.limit), target
    if target.value is None:
        assert target.met is None and target.verdict == "not measured"
        return
    assert math.isfinite(target.value), target
    expected = target.value >= target.limit if target.at_least else target.value <= target.limit
    assert target.met is expected
    assert target.verdict == ("met" if expected else "MISSED")


def check_figure(figure: Figure, key: str) -> None:
    assert figure.error is None, f"{key} failed: {figure.error}\n" + "\n".join(figure.details)
    assert figure.key == key and figure.title and figure.method and figure.size == "smoke"
    assert figure.rows, "a figure without measurements"
    assert len({r.label for r in figure.rows}) == len(figure.rows), "row labels must be unique"
    for row in figure.rows:
        check_row(row, figure)
    assert figure.targets, "every benchmark is held to at least one target"
    for target in figure.targets:
        check_target(target)
    text, markdown = report.figure_text(figure), report.figure_markdown(figure)
    for row in figure.rows:
        assert row.label in text
        assert report._md_escape(row.label) in markdown
    for target in figure.targets:
        assert target.text in text and target.verdict in text


def smoke(key: str) -> Figure:
    module = importlib.import_module(f"benchmarks.{MODULES[key]}")
    figure = module.run("smoke")
    check_figure(figure, key)
    return figure


def measured(figure: Figure, label: str) -> Row:
    row = figure.row(label)
    assert row.value is not None, f"{label}: {row.note}"
    return row


def test_b1_overhead_measures_the_pipeline_and_the_direct_call() -> None:
    figure = smoke("B1")
    pipeline = measured(figure, "run_tool_use: async def tool, async hook, allow rule")
    direct = measured(figure, "direct: validate + call (async def)")
    overhead = measured(figure, "overhead per call (pipeline − direct)")
    assert pipeline.ratio_to == direct.label
    assert figure.targets[0].value == overhead.value
    measured(figure, "overhead per call in CPU time (pipeline − direct)")


def test_b2_concurrency_measures_ours_and_names_every_peer() -> None:
    figure = smoke("B2")
    for variant in ("async", "sync"):
        ours = measured(figure, f"[{variant}] ours: tool phase")
        assert ours.ratio_to == f"[{variant}] ideal (all overlap)"
        measured(figure, f"[{variant}] ours, tools marked not concurrency-safe (sequential): tool phase")
        peers = [r for r in figure.rows if r.label.startswith(f"[{variant}] anthropic") or
                 r.label.startswith(f"[{variant}] pydantic-ai")]
        assert peers, "the peers are part of the figure, measured or not"
    assert len(figure.targets) == 4


def test_b3_streaming_compares_both_paths_for_both_kinds_of_tools() -> None:
    figure = smoke("B3")
    for kind in ("concurrency-safe", "sequential"):
        streaming = measured(figure, f"[{kind}] ours, streaming executor: last result")
        after = measured(figure, f"[{kind}] ours, after the stream (streaming_tools=False): last result")
        assert streaming.ratio_to == after.label
    assert all(t.own for t in figure.targets), "issue 8 sets no number for B3: its checks are marked as own"


def test_b4_end_to_end_compares_ours_with_the_fastest_measured_peer() -> None:
    figure = smoke("B4")
    ours = measured(figure, "ours")
    measured(figure, "ours, client CPU per request")
    target = figure.targets[0]
    assert not target.own
    if target.value is not None:
        peer = figure.row(ours.ratio_to)
        assert peer.value == min(r.value for r in figure.rows
                                 if r.label != "ours" and "per request" not in r.label and r.value is not None)


@pytest.mark.kernel
def test_b5_display_cost_runs_in_a_kernel() -> None:
    figure = smoke("B5")
    updates = measured(figure, "display updates per second (RunDisplay.updates / wall)")
    assert updates.value > 0, "the display never updated: the renderer was not exercised"
    measured(figure, "no renderer: CPU per delta")


def test_b6_inspect_variable_reports_time_and_size_for_every_value() -> None:
    figure = smoke("B6")
    times = [r for r in figure.rows if r.label.endswith(": time")]
    sizes = [r for r in figure.rows if r.label.endswith(": output")]
    assert len(times) == len(sizes) == 7
    assert all(r.value is not None and r.value > 0 for r in sizes), "every call returned text for the model"


def test_b7_pairing_gives_a_ratio_per_function_with_and_without_the_collector() -> None:
    figure = smoke("B7")
    ratios = [r for r in figure.rows if r.ratio_to]
    assert len(ratios) == 6 and all(r.ratio is not None for r in ratios)
    assert {r.label.rsplit("(", 1)[1] for r in ratios} == {"collector on)", "collector paused)"}
    assert all(t.own for t in figure.targets), "issue 8 sets no number for B7: its checks are marked as own"


def test_b8_prompt_cache_shares_are_fractions() -> None:
    figure = smoke("B8")
    assert measured(figure, "requests recorded").value == 6
    worst = measured(figure, "lowest share from request 3 on")
    assert 0.0 <= worst.value <= 1.0
    assert any("| request |" in d for d in figure.details)


def test_b13_context_compaction_compares_tokens_and_measures_the_cache() -> None:
    figure = smoke("B13")
    compacted = measured(figure, "tokens sent with clearing and compaction")
    assert compacted.ratio_to == "tokens sent without compaction" and compacted.ratio is not None
    assert measured(figure, "compactions").value >= 1
    assert 0.0 <= measured(figure, "lowest cache share of the 2nd request after a compaction").value <= 1.0
    assert any("| compaction before request |" in d for d in figure.details)


@pytest.mark.kernel
def test_b9_approval_wait_measures_the_waiting_kernel() -> None:
    figure = smoke("B9")
    waiting = measured(figure, "kernel waiting for an approval: CPU")
    assert waiting.ratio_to == "idle kernel: CPU"
    assert figure.targets[0].value is not None, "the wait was not measured"


@pytest.mark.kernel
def test_b10_first_cell_compares_the_agent_kernels_with_a_plain_sdk_kernel() -> None:
    figure = smoke("B10")
    plain = measured(figure, "plain anthropic client: cell → first request")
    total = measured(figure, "Run All: %load_ext + first %%agent cell → first request")
    load = measured(figure, "Run All: %load_ext (sent → reply)")
    cell = measured(figure, "Run All: first %%agent cell → first request")
    assert total.ratio_to == cell.ratio_to == plain.label
    assert total.value == pytest.approx(load.value + cell.value, rel=1e-6)  # one kernel: the split adds up
    typed = [r for r in figure.rows if r.label.startswith("typed: first %%agent cell")]
    assert len(typed) == 1 and typed[0].value is not None and typed[0].ratio_to == plain.label
    assert [t.value for t in figure.targets] == [typed[0].ratio, total.ratio] and all(t.own for t in figure.targets)


def test_b17_shell_classification_compares_braces_with_everyday_commands() -> None:
    figure = smoke("B17")
    everyday = measured(figure, "everyday commands")
    for label in ("commands with brace words", "expanding to ~1,000 words", "beyond the cap ({1..1000000} …)"):
        assert measured(figure, label).ratio_to == everyday.label
    assert all(t.own for t in figure.targets)


def test_b15_sandbox_compares_each_policy_with_the_unsandboxed_command() -> None:
    figure = smoke("B15")
    assert measured(figure, "process: in bwrap, read-only policy").ratio_to == "process: bash -c true"
    assert measured(figure, "Bash tool: writable sandbox (policy built per call)").ratio_to == "Bash tool: not sandboxed"
    assert [t.text for t in figure.targets] == ["added per Bash command, read-only ≤ 15 ms",
                                                "added per Bash command, writable ≤ 15 ms"]
    assert all(t.value is not None for t in figure.targets)


def test_b11_mcp_calls_are_compared_with_a_bare_client_session() -> None:
    figure = smoke("B11")
    ours = measured(figure, "through the product (run_tool_use)")
    assert ours.ratio_to == "bare ClientSession.call_tool" and ours.runs == 10
    phase = measured(figure, "10 trusted read-only calls: tool phase")
    assert phase.ratio_to == "ideal (10 calls overlap)"


def test_b12_compares_deferred_with_full_and_two_sub_agents_with_one() -> None:
    figure = smoke("B12")
    deferred = measured(figure, "first request, 100 tools deferred")
    assert deferred.ratio_to == "first request, 100 tools sent in full"
    two = measured(figure, "two explore agents in parallel, 0.5 s tool each")
    assert two.ratio_to == "one explore agent, 0.5 s tool"
    assert all(t.value is not None for t in figure.targets)


def test_every_benchmark_module_is_covered_here() -> None:
    tested = {name.split("_")[1].upper() for name in globals() if name.startswith("test_b")}
    assert tested == set(MODULES)


def test_main_writes_a_report_naming_the_command_and_the_machine(tmp_path: Any, capsys: Any) -> None:
    from benchmarks.__main__ import main

    out = tmp_path / "RESULTS.md"
    assert main(["--smoke", "--only", "b7", "--output", str(out)]) == 0
    text = out.read_text()
    assert "python -m benchmarks --smoke --only b7 --output" in text
    for fact in ("cores", "cpu", "python", "anthropic", "pydantic", "pydantic-ai-slim", "ipykernel",
                 "load average (1, 5, 15 min)"):
        assert f"| {fact} |" in text
    assert "## B7 — " in text and "## B1 — " not in text
    assert "Own checks (marked, no number in issue 8): " in text
    printed = capsys.readouterr().out
    assert "Targets" in printed and "B7" in printed


def test_main_refuses_an_unknown_benchmark() -> None:
    from benchmarks.__main__ import main

    with pytest.raises(SystemExit, match="unknown benchmark"):
        main(["--only", "B2,B42"])


def test_a_crashing_benchmark_becomes_a_figure_that_says_so(monkeypatch: Any) -> None:
    from benchmarks import __main__ as entry
    from benchmarks import b7_pairing

    def broken(size: str) -> Figure:
        raise ValueError("the transcript could not be built")

    monkeypatch.setattr(b7_pairing, "run", broken)
    figure = entry.run_one("B7", "smoke")
    assert figure.error == "ValueError: the transcript could not be built"
    assert "benchmark failed" in report.summary_text([figure])


def test_b14_kernel_changes_measures_note_snapshot_and_the_value_based_check() -> None:
    figure = smoke("B14")
    measured(figure, "note, nothing changed")
    measured(figure, "end-of-cell snapshot (looked)")
    measured(figure, "note after 42 changes")
    per_cell = measured(figure, "per cell: note + snapshot (worst of the two notes)")
    assert per_cell.ratio_to == "value-based check (hash the frame, pickle the rest), once"
    assert measured(figure, "note size after 42 changes").value > 0, "the changes produced no note"
    assert "Rebound: df (pandas DataFrame" in figure.details[0]
def test_b16_secret_scrub_measures_the_scrubber_beside_its_alternatives() -> None:
    figure = smoke("B16")
    base = measured(figure, "scrubber, clean result")
    for label in ("scrubber, 20 leaked slices", "pure-Python 8-gram scan, clean result",
                  "old whole-value mask, clean result"):
        assert measured(figure, label).ratio_to == base.label
    assert "replacements" in figure.row("scrubber, 20 leaked slices").note
    assert measured(figure, "run_tool_use, session scrubber").ratio_to == "run_tool_use, no protected values"
