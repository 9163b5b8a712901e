from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tool_support import make_ctx

from jupyter_toolagent.core.tool import ToolUseContext


@pytest.fixture
def ctx_in(tmp_path: Path) -> Any:
    """``ctx_in(namespace=..., **extra)``: a context whose cwd is this test's tmp_path."""

    def build(namespace: dict[str, Any] | None = None, **extra: Any) -> ToolUseContext:
        return make_ctx(tmp_path, namespace, **extra)

    return build
