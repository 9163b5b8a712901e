from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture
def events() -> list[Any]:
    return []
