"""The counts the reliability tests report (sessions fuzzed, faults survived, interrupts, bypass
attempts, bad inputs tried, wall times).

A test calls `report`; the suite's conftest prints every count at the end of the run and writes
them to ``test-artifacts/reliability/counts.json`` (merged with the counts of earlier runs, so
running one file does not erase the others). Suite-wide, because the interrupt tests (R3) run
in the browser directory.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "test-artifacts" / "reliability"
COUNTS: dict[str, Any] = {}


def report(key: str, value: Any, text: str | None = None) -> None:
    """Record one count for counts.json and print it into the test's output."""
    COUNTS[key] = value
    print(f"[reliability] {key} = {value}" + (f"  ({text})" if text else ""))


def write_counts() -> Path | None:
    if not COUNTS:
        return None
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / "counts.json"
    merged: dict[str, Any] = {}
    if path.exists():
        try:
            merged = json.loads(path.read_text())
        except ValueError:
            merged = {}
    merged.update(COUNTS)
    merged["updated_at"] = time.strftime("%Y-%m-%dT%H:%M:%S")
    path.write_text(json.dumps(merged, indent=2, sort_keys=True))
    return path
