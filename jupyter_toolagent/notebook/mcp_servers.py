"""MCP servers of a notebook: one `McpServers` per shell, prepared before every ``%%agent`` cell.

The servers belong to the kernel, not to one conversation, so every session of the notebook
sees the same ones. Before a cell runs, the project's servers are (re)read — ``.mcp.json`` in
the working directory and the settings file's ``"mcpServers"`` — and any not yet decided on is
put to the person: in JupyterLab as a card with Allow / Deny buttons (the same approval panel
as a tool call's), and where nobody can click only by an ``--allow mcp__NAME`` rule or
``"enableProjectMcpServers": true``. Then whatever may start is started; a server that cannot
start is one warning line in the cell, and the cell runs without it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.events import NoticeEvent, PermissionDecidedEvent, ToolFinishedEvent, ToolQueuedEvent
from ..core.permission_types import ApprovalRequest
from ..mcp import McpServers
from ..mcp.names import server_prefix
from .per_owner import PerOwner

if TYPE_CHECKING:
    from .agent_cell import PreparedCell

_servers: PerOwner[McpServers] = PerOwner(McpServers)


def servers_for(shell: Any) -> McpServers:
    """The MCP servers of this shell (created on first use)."""
    return _servers.get(shell)


def close_servers(shell: Any) -> None:
    """Stop every MCP server of this shell (``%unload_ext``)."""
    servers = _servers.pop(shell)
    if servers is not None:
        servers.close()


async def prepare_servers(cell: "PreparedCell", shell: Any) -> list[str]:
    """Before a cell: read the project's servers, ask about new ones, start what may start.
    Returns the problem lines (each names its server)."""
    servers = servers_for(shell)
    servers.cwd = Path.cwd()
    settings = getattr(cell.session.permissions, "settings", None)
    seen = len(servers.problems)
    enable_all = servers.load_project(Path.cwd(), settings)
    pending = servers.needs_approval()
    if pending and cell.config.approver is not None and not enable_all:
        for config in pending:
            await _ask(cell, servers, config)
    allow = [*cell.config.allow]
    if cell.session.permissions is not None:
        allow += [str(e.rule) for e in cell.session.permissions.entries("allow")]
    servers.approve_by_policy(allow, enable_all)
    await servers.start_pending()
    return servers.problems[seen:]


async def _ask(cell: "PreparedCell", servers: McpServers, config: Any) -> None:
    """The approval card of one project server: it starts only on Allow."""
    view, approver = cell.view, cell.config.approver
    assert approver is not None  # asked only when the cell has an approver (see the caller)
    card_id = f"mcp-server-{config.name}"
    name = server_prefix(config.name)
    shown = {"server": config.name, "from": config.source, "runs": config.describe()}
    view.handle(ToolQueuedEvent(tool_use_id=card_id, name=name, input=shown))
    reason = (f"the project file {config.source} wants to start the MCP server {config.name!r}, which runs "
              f"`{config.describe()}` on this machine; a cloned repository must not start programs by itself")
    answer = await approver(ApprovalRequest(name, shown, card_id, reason=reason, suggested_rule=name))
    allowed = answer.behavior == "allow"
    servers.approve(config.name, allowed)  # for this kernel; "Always allow" adds no rule for its tools' calls
    view.handle(PermissionDecidedEvent(tool_use_id=card_id, name=name, behavior=answer.behavior,
                                       decided_by=answer.decided_by, message=answer.reason))
    text = f"MCP server {config.name!r} approved" if allowed else f"MCP server {config.name!r} not started"
    view.handle(ToolFinishedEvent(tool_use_id=card_id, name=name, status="done" if allowed else "denied",
                                  result={"type": "tool_result", "tool_use_id": card_id, "content": text}))


def notice_events(problems: list[str]) -> list[NoticeEvent]:
    return [NoticeEvent(level="warning", text=p) for p in problems]
