"""``%agent SUBCOMMAND``: look at and manage the conversations (SPEC §2.1, §9).

Each subcommand returns a small view with a plain-text and an HTML form, so the same command
reads well in JupyterLab, in a saved notebook and in a terminal. The views here are simple on
purpose; they show the facts (pairing, raw requests, rules) a person debugging a run needs.
"""

from __future__ import annotations

import html
import json
import os
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from IPython.core.error import UsageError

from .sessions import registry_for

if TYPE_CHECKING:
    from ..core.session import Session
    from .magics import AgentMagics

_PREVIEW = 160


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


def run_subcommand(magics: "AgentMagics", line: str) -> TextView:
    try:
        words = shlex.split(line)
    except ValueError as exc:
        raise UsageError(f"%agent: {exc}") from None
    if not words:
        raise UsageError(f"%agent needs a subcommand: {', '.join(SUBCOMMANDS)}")
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


# --- check / transcript ----------------------------------------------------------------------


def check(magics: "AgentMagics", args: list[str]) -> TextView:
    _no_args("check", args)
    session = _session(magics)
    violations = session.check_pairing()
    uses = sum(1 for m in session.messages for b in _blocks(m) if b.get("type") == "tool_use")
    if not violations:
        return TextView(f"transcript valid: session {session.name!r}, {len(session.messages)} messages, "
                        f"{uses} tool_use blocks, every one paired with one tool_result")
    lines = [f"transcript INVALID: session {session.name!r}, {len(violations)} violation(s); "
             "the API would answer HTTP 400 with:"]
    lines += [f"  {v.message}" for v in violations]
    lines.append("repair_pairing(current_session().messages) shows and fixes what is wrong.")
    return TextView("\n".join(lines))


def transcript(magics: "AgentMagics", args: list[str]) -> TextView:
    _no_args("transcript", args)
    session = _session(magics)
    violations = session.check_pairing()
    result_at = {str(b.get("tool_use_id")): (i, b) for i, m in enumerate(session.messages)
                 for b in _blocks(m) if b.get("type") == "tool_result"}
    text_lines: list[str] = []
    rows: list[str] = []
    for i, message in enumerate(session.messages):
        role = str(message.get("role"))
        text_lines.append(f"[{i}] {role}")
        cells: list[str] = []
        for block in _blocks(message):
            line = _block_line(block, result_at)
            text_lines.append(f"    {line}")
            cells.append(html.escape(line))
        rows.append(f"<tr><td>{i}</td><td>{html.escape(role)}</td><td>{'<br>'.join(cells)}</td></tr>")
    header = "pairing: valid" if not violations else "pairing: INVALID\n" + "\n".join(f"  {v.message}" for v in violations)
    text = f"session {session.name!r}: {len(session.messages)} messages\n{header}\n" + "\n".join(text_lines)
    bad = "".join(f"<li style='color:var(--jp-error-color1,#c00)'>{html.escape(v.message)}</li>" for v in violations)
    page = (f"<div><b>session {html.escape(session.name)}</b> — {len(session.messages)} messages — "
            f"{'pairing valid' if not violations else 'pairing INVALID'}"
            f"{'<ul>' + bad + '</ul>' if bad else ''}"
            f"<table><tr><th>#</th><th>role</th><th>blocks</th></tr>{''.join(rows)}</table></div>")
    return TextView(text, page)


def _block_line(block: dict[str, Any], result_at: dict[str, tuple[int, dict[str, Any]]]) -> str:
    kind = block.get("type")
    if kind == "text":
        return f"text: {_short(str(block.get('text', '')))}"
    if kind == "tool_use":
        found = result_at.get(str(block.get("id")))
        paired = f"→ result in message {found[0]}" if found else "→ NO tool_result"
        return f"tool_use {block.get('id')} {block.get('name')}({_short(json.dumps(block.get('input'), ensure_ascii=False))}) {paired}"
    if kind == "tool_result":
        error = " is_error" if block.get("is_error") else ""
        return f"tool_result {block.get('tool_use_id')}{error}: {_short(_content_text(block.get('content')))}"
    return f"{kind}"


# --- raw ------------------------------------------------------------------------------------


def raw(magics: "AgentMagics", args: list[str]) -> TextView:
    _no_args("raw", args)
    session = _session(magics)
    if not session.runs:
        return TextView(f"session {session.name!r} has no runs yet")
    run = session.runs[-1]
    parts: list[str] = []
    page: list[str] = []
    previous: list[Any] = []
    for i, request in enumerate(run.requests):
        messages = list(request.get("messages") or [])
        new = messages[len(previous):] if messages[: len(previous)] == previous else messages
        head = f"request {i}: {len(messages)} messages, {len(new)} new since the previous request"
        parts += [head, _json({"new messages": new})]
        page.append(f"<h4>{html.escape(head)}</h4><pre>{html.escape(_json(new))}</pre>"
                    f"<details><summary>full request</summary><pre>{html.escape(_json(request))}</pre></details>")
        if i < len(run.responses):
            parts += [f"response {i}:", _json(run.responses[i])]
            page.append(f"<h4>response {i}</h4><pre>{html.escape(_json(run.responses[i]))}</pre>")
        previous = messages
    return TextView("\n".join(parts) or "the last run sent no request", "".join(page) or None)


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
        mark = "*" if name == registry.current_name else " "
        lines.append(f"{mark} {name}: {len(s.messages)} messages, {len(s.runs)} runs")  # type: ignore[union-attr]
    return TextView("\n".join(lines))


def config(magics: "AgentMagics", args: list[str]) -> TextView:
    _no_args("config", args)
    from . import kernel_run
    from .offline import demo_server_running, has_credentials, resolve_model_name

    values = {name: getattr(magics, name) for name in sorted(magics.trait_names(config=True))}
    lines = [f"AgentMagics.{k} = {v!r}" for k, v in values.items()]
    lines += [
        f"model used by the next cell: {resolve_model_name(None, magics.model)}",
        f"ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN: {'set' if has_credentials() else 'not set'}",
        f"ANTHROPIC_BASE_URL: {os.environ.get('ANTHROPIC_BASE_URL') or 'not set'}",
        f"TOOLAGENT_MODEL: {os.environ.get('TOOLAGENT_MODEL') or 'not set'}",
        f"kernel integration: {kernel_run.strategy_for(magics.shell)}",
        f"offline demo server: {'running' if demo_server_running() else 'not running'}",
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
    path = session.export(os.path.expanduser(args[0]))
    return TextView(f"exported session {session.name!r} ({len(session.messages)} messages) to {path}")


SUBCOMMANDS: dict[str, Callable[["AgentMagics", list[str]], TextView]] = {
    "transcript": transcript,
    "raw": raw,
    "reset": reset,
    "sessions": sessions,
    "config": config,
    "rules": rules,
    "check": check,
    "export": export,
}


# --- helpers ----------------------------------------------------------------------------------


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def _content_text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(b.get("text", f"[{b.get('type')}]")) for b in content if isinstance(b, dict))
    return str(content or "")


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _PREVIEW else text[: _PREVIEW - 1] + "…"


def _json(value: Any) -> str:
    return json.dumps(_fold_images(value), indent=2, ensure_ascii=False, default=repr)


def _fold_images(value: Any) -> Any:
    """Base64 image data is useless to read: show its size instead."""
    if isinstance(value, dict):
        if value.get("type") == "base64" and isinstance(value.get("data"), str):
            return {**value, "data": f"<{len(value['data'])} base64 characters>"}
        return {k: _fold_images(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_fold_images(v) for v in value]
    return value
