"""`InsertCell` is an edit of the notebook: it asks unless allowed, and acceptEdits allows it."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes import make_ctx

from jupyter_toolagent.permissions import PermissionContext
from jupyter_toolagent.permissions.engine import decide_input
from jupyter_toolagent.core.tool_call import ToolCall
from jupyter_toolagent.permissions.engine import always_allow_grant
from jupyter_toolagent.tools import InsertCell

INPUT = {"code": "df.head()"}
#            default  acceptEdits  plan    bypassPermissions  dontAsk
EXPECTED = ("ask", "allow", "deny", "allow", "deny")
MODES = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk")


@pytest.mark.asyncio
@pytest.mark.parametrize("mode", MODES)
async def test_insert_cell_by_mode(mode: str, project: Path) -> None:
    decision = await decide_input(InsertCell(), INPUT, make_ctx(PermissionContext(cwd=project, mode=mode)))
    assert decision.behavior == EXPECTED[MODES.index(mode)], decision


@pytest.mark.asyncio
async def test_rules_decide_insert_cell_and_deny_beats_accept_edits(project: Path) -> None:
    allowed = await decide_input(InsertCell(), INPUT, make_ctx(PermissionContext(cwd=project, allow=["InsertCell"])))
    assert allowed.behavior == "allow" and allowed.decided_by == "rule"
    denied = await decide_input(InsertCell(), INPUT, make_ctx(PermissionContext(cwd=project, mode="acceptEdits",
                                                                           deny=["InsertCell"])))
    assert denied.behavior == "deny"
    asked = await decide_input(InsertCell(), INPUT, make_ctx(PermissionContext(cwd=project, mode="acceptEdits",
                                                                          ask=["InsertCell"])))
    assert asked.behavior == "ask"


@pytest.mark.asyncio
async def test_the_ask_names_the_edit_and_always_allow_adds_the_tool_rule(project: Path) -> None:
    ctx = make_ctx(PermissionContext(cwd=project))
    decision = await decide_input(InsertCell(), INPUT, ctx)
    assert decision.behavior == "ask" and "insert a new code cell" in decision.message
    assert decision.suggested_rule == "InsertCell"
    assert always_allow_grant(ToolCall.of(InsertCell(), INPUT, ctx), ctx, decision) == "InsertCell"
