from __future__ import annotations

from typing import Any

import pytest

from jupyter_toolagent.core.permission_types import PermissionDecision
from jupyter_toolagent.core.tool import ToolPool, ToolUseContext


async def allow_all(call, ctx, *, hook_decision):  # noqa: ANN001
    return PermissionDecision.allow("test")


def make_ctx(*tools: Any, **kw: Any) -> ToolUseContext:
    return ToolUseContext(tools=ToolPool(tools), can_use_tool=kw.pop("can_use_tool", allow_all), **kw)


@pytest.fixture
def events() -> list[Any]:
    return []
