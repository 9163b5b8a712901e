"""``%agent agents``, ``%agent transcript --agent TOOL_USE_ID`` and ``%agent schedule --agent
TOOL_USE_ID`` (SPEC §12). The cell's own schedule shows the ``Agent`` calls themselves (two
explore agents overlap in one batch); a sub-agent's schedule shows its own calls."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

if TYPE_CHECKING:
    from ..core.session import Session


def agents_listing(session: "Session") -> str:
    """The sub-agent definitions the ``Agent`` tool offers now, and this session's sub-runs."""
    from ..agents import all_definitions, iter_subruns

    settings = session.permissions.settings if session.permissions is not None else None
    lines = ["Sub-agent definitions (Agent subagent_type):"]
    for d in all_definitions(settings).values():
        tools = "the caller's tools" if d.tools is None else (
            "read-only tools" if d.tools == "read_only" else ", ".join(d.tools) or "no tools")
        lines.append(f"  {d.name:<18} [{d.source}] {d.description}  (tools: {tools}; max_turns {d.max_turns})")
    subs = iter_subruns(session)
    if subs:
        lines.append("Sub-agent runs in this session (%agent transcript --agent ID):")
        for s in subs:
            lines.append(f"  {s.tool_use_id}  {'  ' * (s.depth - 1)}{s.agent}: {s.description} "
                         f"({s.record.finish_reason}, {len(s.messages)} messages)")
    return "\n".join(lines)


def _subrun(session: "Session", tool_use_id: str, command: str) -> Any:
    from ..agents import find_subrun

    sub = find_subrun(session, tool_use_id)
    if sub is None:
        raise UsageError(f"%agent {command} --agent: no sub-agent run started by {tool_use_id!r} in session "
                         f"{session.name!r} (%agent agents lists them)")
    return sub


def subagent_schedule(session: "Session", tool_use_id: str) -> Any:
    from ..views import ScheduleView

    sub = _subrun(session, tool_use_id, "schedule")
    view = ScheduleView(sub.record)
    view.title = f"Schedule of sub-agent {sub.agent} ({tool_use_id})"
    return view


def subagent_transcript(session: "Session", tool_use_id: str) -> Any:
    from ..views import TranscriptView

    sub = _subrun(session, tool_use_id, "transcript")
    return TranscriptView.for_session(sub.session, title=f"Transcript of sub-agent {sub.agent} ({tool_use_id})")
