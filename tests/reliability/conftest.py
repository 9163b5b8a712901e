"""Fixtures of the reliability suite (its counts are reported by the suite's conftest)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator

import pytest

HERE = Path(__file__).resolve().parent
for shared in (HERE.parent / "permissions", HERE.parent / "kernel", HERE.parent / "core"):
    if str(shared) not in sys.path:
        sys.path.append(str(shared))  # corpus_data / fakes / kernel_harness / runtime_support are reused as they are


from jupyter_toolagent.hooks import HookRegistry, default_registry  # noqa: E402


@pytest.fixture
def clean_default_registry() -> Iterator[HookRegistry]:
    """The process-wide hook registry, emptied before and after the test (``RunConfig(hooks=None)``
    reads it, so a hook registered here must never outlive the test)."""
    saved = list(default_registry)
    default_registry.clear()
    try:
        yield default_registry
    finally:
        default_registry.clear()
        for spec in saved:
            default_registry.add(spec.event, spec.func, spec.matcher, timeout=spec.timeout)
