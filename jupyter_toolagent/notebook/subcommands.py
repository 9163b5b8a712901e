"""``%agent SUBCOMMAND``: look at and manage the conversations (SPEC §2.1, §9).

The teaching and debugging subcommands — ``transcript``, ``raw``, ``schedule``, ``check`` —
return the views of `jupyter_toolagent.views` (an HTML and a plain-text form each), so the same
command reads well in JupyterLab, in a saved notebook and in a terminal, and shows exactly what
the views show anywhere else. The management subcommands answer with a short `TextView`.
"""

from __future__ import annotations

import html
import os
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from IPython.core.error import UsageError

from .sessions import registry_for

if TYPE_CHECKING:
    from ..core.session import RunRecord, Session
    from ..views import PairingCheckView, RawView, ScheduleView, TranscriptView
    from .magics import AgentMagics

USAGE = """\
%agent SUBCOMMAND — look at and manage the notebook's agent conversations

  transcript         the conversation as API messages, each tool_use beside its tool_result
  raw [--full]       each request and response of the last run, and what each request adds
  schedule           which calls of the last run shared a batch; when each waited and ran
  check              would the API accept the transcript? violations in the API's words
  reset              clear the current conversation
  sessions           list the live conversations (* marks the current one) and the saved ones
  config             the %%agent defaults and where the model comes from
  rules              the session rules that "Always allow" added
  rules remove RULE  drop one of them
  export PATH        write the transcript and the runs' summaries as JSON
  undo               restore the names the last RunPython call rebound or deleted (once)
  context            how full the context window is, and where the tokens go
  compact [--keep N] compact the conversation now (summary of all but the last N turns)
  resume NAME        continue a saved session (also after a kernel restart)
  sandbox            whether the Bash sandbox works here, and what a command may touch in it
  mcp add|list|remove|log   the notebook's MCP servers (%agent mcp for usage)
  agents             the sub-agent definitions and this session's sub-agent runs
  transcript --agent ID   the transcript of the sub-agent started by Agent call ID
  schedule --agent ID     that sub-agent's schedule
  help               this text"""


@dataclass
class TextView:
    """A subcommand's answer: plain text for terminals, HTML for notebooks."""

    text: str
    html: str | None = None

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        bundle = {"text/plain": self.text}
        bundle["text/html"] = self.html if self.html is not None else f"<pre>{html.escape(self.text)}</pre>"
        return bundle

    def __repr__(self) -> str:
        return self.text


def run_subcommand(magics: "AgentMagics", line: str) -> Any:
    """The answer of ``%agent LINE``: a view or a `TextView`; a mistake is one `UsageError`."""
    try:
        words = shlex.split(line)
    except ValueError as exc:
        raise UsageError(f"%agent: {exc}") from None
    if not words:
        raise UsageError(f"%agent needs a subcommand: {', '.join(SUBCOMMANDS)} (%agent help explains each)")
    name, args = words[0], words[1:]
    handler = SUBCOMMANDS.get(name)
    if handler is None:
        raise UsageError(f"%agent: unknown subcommand {name!r}; expected one of: {', '.join(SUBCOMMANDS)}")
    return handler(magics, args)


def _session(magics: "AgentMagics") -> "Session":
    return registry_for(magics.shell).current()


def _no_args(name: str, args: list[str]) -> None:
    if args:
        raise UsageError(f"%agent {name} takes no arguments (got {' '.join(args)!r})")


# --- the teaching and debugging views (SPEC §9) ---------------------------------------------


def check(magics: "AgentMagics", args: list[str]) -> "PairingCheckView":
    """The API's verdict on the transcript as it would be sent (normalized, as the runtime sends
    it), every violation in the API's own words."""
    from ..core.pairing import normalize_messages_for_api
    from ..views import PairingCheckView

    _no_args("check", args)
    session = _session(magics)
    try:
        sent = normalize_messages_for_api(session.messages)
    except Exception as exc:  # a hand-edited transcript that is not even a list of messages
        view = PairingCheckView([], message_count=len(session.messages),
                                problem=f"the transcript cannot be read ({exc})")
    else:
        view = PairingCheckView.of(sent)
    view.title = f"Pairing check of session {session.name!r}"
    return view


def transcript(magics: "AgentMagics", args: list[str]) -> "TranscriptView":
    from ..views import TranscriptView

    if len(args) == 2 and args[0] == "--agent":
        from .agent_commands import subagent_transcript

        return subagent_transcript(_session(magics), args[1])
    _no_args("transcript", args)
    session = _session(magics)
    return TranscriptView.for_session(session, title=f"Transcript of session {session.name!r}")


def raw(magics: "AgentMagics", args: list[str]) -> "RawView":
    """Requests and responses of the session's last run, and what each request newly shows
    (``--full``: every request body, not only the first and the last)."""
    from ..views import RawView

    full = args == ["--full"]
    if args and not full:
        raise UsageError(f"%agent raw takes only --full (got {' '.join(args)!r})")
    session = _session(magics)
    view = RawView(_last_run(session), full=full)
    view.title = f"Raw requests of the last run in session {session.name!r}"
    return view


def schedule(magics: "AgentMagics", args: list[str]) -> "ScheduleView":
    """Which calls of the last run shared a batch, and when each was queued, waited and ran."""
    from ..views import ScheduleView

    if len(args) == 2 and args[0] == "--agent":
        from .agent_commands import subagent_schedule

        return subagent_schedule(_session(magics), args[1])
    _no_args("schedule", args)
    session = _session(magics)
    view = ScheduleView(_last_run(session))
    view.title = f"Schedule of the last run in session {session.name!r}"
    return view


def _last_run(session: "Session") -> "RunRecord | None":
    return session.runs[-1] if session.runs else None


# --- management -------------------------------------------------------------------------------


def reset(magics: "AgentMagics", args: list[str]) -> TextView:
    _no_args("reset", args)
    session = _session(magics)
    count = len(session.messages)
    session.reset()
    return TextView(f"session {session.name!r} reset ({count} messages dropped)")


def sessions(magics: "AgentMagics", args: list[str]) -> TextView:
    _no_args("sessions", args)
    registry = registry_for(magics.shell)
    names = registry.names()
    if not names:
        return TextView("no sessions yet (the first %%agent cell creates 'default')")
    lines = []
    for name in names:
        s = registry.get(name)
        assert s is not None  # a listed name
        mark = "*" if name == registry.current_name else " "
        lines.append(f"{mark} {name}: {len(s.messages)} messages, {len(s.runs)} runs")
    return TextView("\n".join(lines))


def config(magics: "AgentMagics", args: list[str]) -> TextView:
    _no_args("config", args)
    from . import kernel_run
    from .offline import demo_server_running, has_credentials, resolve_model_name
    from .sandbox_view import sandbox_config_line

    values = {name: getattr(magics, name) for name in sorted(magics.trait_names(config=True))}
    lines = [f"AgentMagics.{k} = {v!r}" for k, v in values.items()]
    lines += [
        f"model used by the next cell: {resolve_model_name(None, magics.model)}",
        f"ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN: {'set' if has_credentials() else 'not set'}",
        f"ANTHROPIC_BASE_URL: {os.environ.get('ANTHROPIC_BASE_URL') or 'not set'}",
        f"TOOLAGENT_MODEL: {os.environ.get('TOOLAGENT_MODEL') or 'not set'}",
        f"kernel integration: {kernel_run.strategy_for(magics.shell)}",
        f"offline demo server: {'running' if demo_server_running() else 'not running'}",
        sandbox_config_line(magics),
    ]
    return TextView("\n".join(lines))


def rules(magics: "AgentMagics", args: list[str]) -> TextView:
    session = _session(magics)
    if args[:1] == ["remove"]:
        if len(args) != 2:
            raise UsageError("usage: %agent rules remove RULE")
        if not remove_session_rule(session, args[1]):
            raise UsageError(f"no session rule {args[1]!r}; %agent rules lists them")
        return TextView(f"removed session rule {args[1]!r}")
    if args:
        raise UsageError("usage: %agent rules  |  %agent rules remove RULE")
    found = session_rules(session)
    if not found:
        return TextView(f"session {session.name!r} has no session rules (\"Always allow\" adds them)")
    return TextView(f"session rules of {session.name!r} (added by \"Always allow\"):\n" +
                    "\n".join(f"  allow {r}" for r in found))


def session_rules(session: "Session") -> list[str]:
    permissions = getattr(session, "permissions", None)
    listed = getattr(permissions, "session_rules", None)
    if listed is not None:
        return [str(getattr(r, "rule", r)) for r in listed]
    return sorted(getattr(session, "session_allow", ()) or ())


def remove_session_rule(session: "Session", rule: str) -> bool:
    permissions = getattr(session, "permissions", None)
    remover = getattr(permissions, "remove_session_rule", None)
    if remover is not None:
        return bool(remover(rule))
    allowed = getattr(session, "session_allow", None)
    if allowed is not None and rule in allowed:
        allowed.discard(rule)
        return True
    return False


def export(magics: "AgentMagics", args: list[str]) -> TextView:
    if len(args) != 1:
        raise UsageError("usage: %agent export PATH")
    session = _session(magics)
    try:
        path = session.export(os.path.expanduser(args[0]))
    except OSError as exc:
        raise UsageError(f"cannot export to {args[0]}: {exc.strerror or exc}") from None
    return TextView(f"exported session {session.name!r} ({len(session.messages)} messages) to {path}")


def _sandbox(magics: "AgentMagics", args: list[str]) -> TextView:
    from .sandbox_view import sandbox

    return sandbox(magics, args)


def mcp(magics: "AgentMagics", args: list[str]) -> Any:
    """``%agent mcp add|list|remove|log`` (see `mcp_commands`)."""
    from .mcp_commands import mcp_command

    return mcp_command(magics, args)


def agents(magics: "AgentMagics", args: list[str]) -> TextView:
    from .agent_commands import agents_listing

    _no_args("agents", args)
    return TextView(agents_listing(_session(magics)))


def help_text(magics: "AgentMagics", args: list[str]) -> TextView:
    _no_args("help", args)
    return TextView(USAGE)


def _undo(magics: "AgentMagics", args: list[str]) -> TextView:
    from .undo import undo

    return undo(magics, args)


SUBCOMMANDS: dict[str, Callable[["AgentMagics", list[str]], Any]] = {
    "transcript": transcript,
    "raw": raw,
    "schedule": schedule,
    "reset": reset,
    "sessions": sessions,
    "config": config,
    "rules": rules,
    "check": check,
    "export": export,
    "sandbox": _sandbox,
    "mcp": mcp,
    "agents": agents,
    "help": help_text,
    "undo": _undo,
}

from . import long_session_commands as _long  # noqa: E402  (the SPEC §14 subcommands)

SUBCOMMANDS.update({"sessions": _long.sessions, "context": _long.context, "compact": _long.compact,
                    "resume": _long.resume})
