"""Fixtures: a kernel python for each supported ipykernel line (7.x here, 6.29 from a cached venv)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from kernel_harness import ipykernel6_venv


@pytest.fixture(scope="session")
def ipykernel6_python() -> str:
    """ipykernel 6.29 from a cached virtualenv. Without CI a failed build skips (loudly);
    with CI set it fails: the 6.x path must be tested there."""
    try:
        return str(ipykernel6_venv())
    except Exception as exc:  # noqa: BLE001 - reported in full
        if os.environ.get("CI"):
            pytest.fail(f"ipykernel 6 virtualenv could not be built: {exc}")
        pytest.skip(f"ipykernel 6 virtualenv could not be built (not CI): {exc}")


@pytest.fixture(params=["ipykernel7", "ipykernel6"])
def kernel_python(request: pytest.FixtureRequest) -> str:
    if request.param == "ipykernel6":
        return request.getfixturevalue("ipykernel6_python")
    import ipykernel

    assert ipykernel.version_info[0] >= 7, ipykernel.__version__
    return sys.executable


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    return tmp_path
