"""``%agent context``, ``%agent compact``, ``%agent resume`` and ``%agent sessions`` (SPEC §14).

Thin: the numbers come from the session's `ContextState` and the core's estimates, the
compaction from `core.context_guard.compact_now`, saved sessions from
`jupyter_toolagent.sessions`. Each answers with a `TextView` or one `UsageError` line.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ..core.sync_run import run_to_completion
from .sessions import registry_for

if TYPE_CHECKING:
    from .magics import AgentMagics
    from .subcommands import TextView


def _text(text: str) -> "TextView":
    from .subcommands import TextView

    return TextView(text)


def _window_of(magics: "AgentMagics", session: Any) -> int:
    from ..models.context_windows import context_window_for
    from .offline import resolve_model_name

    table = context_window_for(resolve_model_name(None, magics.model))
    return session.context.meter.window(magics.context_window or None, table)


def context(magics: "AgentMagics", args: list[str]) -> "TextView":
    """How full the window is, and where the tokens go."""
    from ..core.context_window import context_breakdown, context_tokens, format_window
    from ..models.pricing import estimate_cost

    if args:
        raise UsageError(f"%agent context takes no arguments (got {' '.join(args)!r})")
    session = registry_for(magics.shell).current()
    state = session.context
    window = state.last_window or _window_of(magics, session)
    used = context_tokens(state.meter.last_usage)
    lines = [f"session {session.name!r}: context {100 * used / window:.0f}% of {format_window(window)} "
             f"({used:,} tokens in the last request)" if used else
             f"session {session.name!r}: no request yet; the window is {format_window(window)}"]
    if state.meter.learned_window:
        lines.append(f"window learned from the API's \"prompt is too long\" answer: {state.meter.learned_window:,}")
    if state.last_body is not None:
        b = context_breakdown(state.last_body)
        lines.append(f"last request (estimated, characters/4): system {b.system:,} · tools {b.tools:,} · "
                     f"messages {b.messages:,} (tool results {b.tool_results:,}) · "
                     f"{len(state.last_body.get('messages') or [])} messages sent of {len(session.messages)} in the transcript")
        if b.largest_results:
            lines.append("largest tool results sent:")
            lines += [f"  {tid} {name or '?'}: ~{tokens:,} tokens" for tid, name, tokens in b.largest_results]
    u = state.meter.last_usage
    if used:
        lines.append(f"last request: input {u.input_tokens:,} · cache read {u.cache_read_input_tokens:,} · "
                     f"cache write {u.cache_creation_input_tokens:,} (cache read share {u.cache_read_input_tokens / used:.0%})")
    total = None
    for run in session.runs:
        total = run.usage if total is None else total + run.usage
    if total is not None and total.cache_read_input_tokens:
        model = state.last_body.get("model") if state.last_body else None
        actual = estimate_cost(model, total) if model else None
        uncached = estimate_cost(model, type(total)(total.input_tokens + total.cache_read_input_tokens,
                                                     total.output_tokens, total.cache_creation_input_tokens, 0,
                                                     total.requests)) if model else None
        saved = f" ≈ ${uncached.total_usd - actual.total_usd:.4f} saved" if actual and uncached else ""
        lines.append(f"caching: {total.cache_read_input_tokens:,} tokens read from the cache over the session{saved}")
    for number, c in enumerate(state.compactions, start=1):
        lines.append(f"compaction {number} ({c.reason}, {time.strftime('%H:%M:%S', time.localtime(c.at))}): "
                     f"{c.boundary} messages summarised, {len(c.cleared)} results cleared, "
                     f"~{c.tokens_before:,} → ~{c.tokens_after:,} tokens")
    return _text("\n".join(lines))


def compact(magics: "AgentMagics", args: list[str]) -> "TextView":
    """Compact the current conversation now (``--keep N``: turns kept as they are)."""
    from ..core.context_guard import compact_now
    from ..core.session import RunConfig
    from .agent_cell import load_permissions, make_tool_provider
    from .offline import choose_model, resolve_model_name

    keep: int | None = None
    if args[:1] == ["--keep"] and len(args) == 2 and args[1].isdigit() and int(args[1]) >= 1:
        keep = int(args[1])
    elif args:
        raise UsageError("usage: %agent compact [--keep N]  (N ≥ 1 turns kept as they are)")
    session = registry_for(magics.shell).current()
    if not session.messages:
        raise UsageError(f"session {session.name!r} has nothing to compact yet")
    load_permissions(session)
    choice = choose_model(resolve_model_name(None, magics.model), script_var=None,
                          user_ns=magics.shell.user_ns, offline_demo=magics.offline_demo)
    config = RunConfig(model=choice.model, system=magics.system or None,
                       tool_provider=make_tool_provider(magics.shell, None),
                       context_window=magics.context_window or None)
    notices: list[Any] = []

    async def go() -> Any:
        try:
            return await compact_now(session, config, keep=keep, emit=notices.append)
        finally:
            close = getattr(choice.model, "aclose", None)
            if choice.owned and close is not None:
                await close()

    result = run_to_completion(go, thread_name="toolagent-compact")
    session.save()
    text = "\n".join(getattr(n, "text", str(n)) for n in notices) or "nothing was compacted"
    return _text(text if result is not None else "not compacted: " + text)


def resume(magics: "AgentMagics", args: list[str]) -> "TextView":
    """Continue a saved session; it becomes the current one."""
    from ..errors import SessionFileError

    if len(args) != 1:
        raise UsageError("usage: %agent resume NAME  (%agent sessions lists the saved ones)")
    registry = registry_for(magics.shell)
    registry.save = bool(magics.save_sessions)
    try:
        report = registry.resume(args[0])
    except SessionFileError as exc:
        raise UsageError(str(exc)) from None
    return _text(report.summary() + "\nthe next %%agent cell continues it")


def sessions(magics: "AgentMagics", args: list[str]) -> "TextView":
    """The live conversations of this kernel and the saved ones of the working directory."""
    from ..sessions import list_saved

    if args:
        raise UsageError(f"%agent sessions takes no arguments (got {' '.join(args)!r})")
    registry = registry_for(magics.shell)
    lines = ["live in this kernel:"]
    live_files = set()
    for name in registry.names():
        s = registry.get(name)
        assert s is not None
        mark = "*" if name == registry.current_name else " "
        store: Any = getattr(s, "store", None)
        saved = getattr(store, "saved_name", None)
        if getattr(store, "path", None) is not None:
            live_files.add(store.path.resolve())
        where = f", saved as {saved!r}" if saved else (", not saved" if store is None else "")
        lines.append(f"{mark} {name}: {len(s.messages)} messages, {len(s.runs)} runs{where}")
    if not registry.names():
        lines.append("  (none yet: the first %%agent cell creates 'default')")
    saved, problems = list_saved()
    lines.append("saved in .toolagent/sessions/ (%agent resume NAME continues one):")
    for entry in saved:
        live = " (live)" if entry.path.resolve() in live_files else ""
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(entry.modified_at))
        lines.append(f"  {entry.path.stem}{live}: {len(entry.messages)} messages, {len(entry.runs)} runs, "
                     f"last written {when}" + (f" — {entry.first_prompt!r}" if entry.first_prompt else ""))
    if not saved:
        lines.append("  (none)")
    lines += [f"  ! {p}" for p in problems]
    return _text("\n".join(lines))
