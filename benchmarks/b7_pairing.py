"""B7 — the pairing check and normalisation on long transcripts (SPEC §6).

The runtime calls ``check_pairing(normalize_messages_for_api(messages))`` before every request,
so their cost grows with the session; it must grow linearly (a 10× longer transcript ≈ 10×
the time), never quadratically.
"""

from __future__ import annotations

import gc
import time
from typing import Any, Callable

from jupyter_toolagent.core.pairing import check_pairing, normalize_messages_for_api

from .harness import Figure, Row, Size, Target, pick

KEY = "B7"
TITLE = "check_pairing + normalize_messages_for_api on 1k and 10k messages"
LINEAR_LIMIT = 15.0
"""Own check: a 10× longer transcript may cost at most 15× (linear ≈ 10, quadratic ≈ 100)."""


def transcript(messages: int) -> list[dict[str, Any]]:
    """A valid tool-use transcript of exactly ``messages`` messages: a prompt, then assistant
    turns (text + one or two tool_use blocks) each answered by their results, ending in text."""
    out: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": "Look at the data."}]}]
    turn = 0
    while len(out) < messages - 1:
        calls = 2 if turn % 5 == 0 else 1
        ids = [f"toolu_{turn:06d}_{k}" for k in range(calls)]
        out.append({"role": "assistant", "content": [
            {"type": "text", "text": f"Step {turn}: checking."},
            *({"type": "tool_use", "id": i, "name": "InspectVariable" if k == 0 else "Alias",
               "input": {"path": f"df.col{turn}"}} for k, i in enumerate(ids)),
        ]})
        out.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": i, "content": f"df.col{turn} = float64, 1,000 rows " + "x" * 160}
            for i in ids
        ]})
        turn += 1
    while len(out) < messages:
        role = "assistant" if out[-1]["role"] == "user" else "user"
        out.append({"role": role, "content": [{"type": "text", "text": "Done."}]})
    return out


def seconds(fn: Callable[[], Any], runs: int, *, pause_gc: bool) -> list[float]:
    """Wall time of ``runs`` calls after a warm-up; with ``pause_gc`` the cyclic collector is
    off during each call (as `timeit` does), which isolates the algorithm's own cost: with it
    on, a full collection walks every live object — the transcript included — so the time of
    a call also grows with everything else in memory."""
    fn()
    samples = []
    for _ in range(runs):
        gc.collect()
        if pause_gc:
            gc.disable()
        try:
            start = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - start)
        finally:
            gc.enable()
    return samples


def run(size: Size = "full") -> Figure:
    small, large = pick(size, full=(1_000, 10_000), quick=(1_000, 10_000), smoke=(100, 1_000))
    runs = pick(size, full=5, quick=3, smoke=1)
    figure = Figure(
        KEY, TITLE,
        method=(f"Valid transcripts of {small:,} and {large:,} messages (assistant text + 1–2 tool_use, user "
                "tool_results, an alias to map); each function timed on its own and as the runtime chains them. "
                f"Median of {runs} runs after one warm-up, each after `gc.collect()`, once with the cyclic garbage "
                "collector on (as in a run) and once paused during the call (as `timeit` does). Ratios: "
                f"{large:,}-message time / {small:,}-message time."),
        size=size,
    )
    aliases = {"Alias": "InspectVariable"}
    texts = {n: transcript(n) for n in (small, large)}
    for n, msgs in texts.items():
        if check_pairing(normalize_messages_for_api(msgs, aliases=aliases)):
            raise RuntimeError(f"the {n}-message benchmark transcript is not valid")
    cases = {
        "check_pairing": lambda m: check_pairing(m),
        "normalize_messages_for_api": lambda m: normalize_messages_for_api(m, aliases=aliases),
        "check_pairing(normalize_messages_for_api(...))":
            lambda m: check_pairing(normalize_messages_for_api(m, aliases=aliases)),
    }
    for pause_gc in (False, True):
        mode = "collector paused" if pause_gc else "collector on"
        for name, fn in cases.items():
            rows = []
            for n, msgs in texts.items():
                samples = seconds(lambda: fn(msgs), runs, pause_gc=pause_gc)
                rows.append(figure.add(Row.from_samples(f"{name}, {n:,} messages ({mode})", samples, "ms",
                                                        scale=1000)))
            rows[1].compare_to(rows[0])
            if pause_gc:
                figure.targets.append(Target(
                    f"{name}: {large // small}× the messages costs ≤ {LINEAR_LIMIT:g}× the time (collector paused)",
                    rows[1].ratio, LINEAR_LIMIT, "×", note="own check: issue 8 asks for the ratio, linear ≈ 10",
                    own=True))
    figure.notes.append("With the collector on, the ratio also carries Python's cyclic garbage collection, whose full "
                        "passes walk every live object (the transcript included); with it paused the ratio is the "
                        "algorithm's own.")
    return figure
