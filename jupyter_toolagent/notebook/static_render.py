"""A run as HTML and plain text, from its view state alone.

Used three ways: the fragments below fill the live widgets (so the live and the saved view look
the same), `render_html` / `render_text` give the whole run for notebooks executed headless
(nbclient, papermill) and for terminals, and `StaticRunView` puts both into one
``_repr_mimebundle_``. Everything the model or a tool produced is escaped; Markdown is rendered
with raw HTML escaped and unsafe links neutralised. Colours come from JupyterLab's CSS
variables, with fallbacks, so light and dark themes both read well; the markup stays readable
when a sanitiser strips styles (an untrusted notebook).
"""

from __future__ import annotations

import datetime
import html
import json
import re
from typing import Any, Iterable

from ..core.usage import Usage
from .markdown_text import MarkdownStream, markdown_html
from .view_state import Ask, CardState, Decision, Notice, RunViewState, TextBlock, cut_middle

PREFIX = "jp-toolagent"

STYLE = f"""<style>
.{PREFIX}-run {{ color: var(--jp-ui-font-color1, #1f1f1f); font-family: var(--jp-ui-font-family, sans-serif);
  font-size: var(--jp-ui-font-size1, 13px); }}
.{PREFIX}-card {{ border: 1px solid var(--jp-border-color2, #d0d0d0); border-left-width: 4px;
  border-radius: 4px; padding: 4px 8px; margin: 4px 0; background: var(--jp-layout-color1, transparent); }}
.{PREFIX}-card-header {{ display: flex; gap: 8px; align-items: baseline; flex-wrap: wrap; }}
.{PREFIX}-tool {{ font-weight: 600; font-family: var(--jp-code-font-family, monospace); }}
.{PREFIX}-muted {{ color: var(--jp-ui-font-color2, #666); font-size: 0.9em; }}
.{PREFIX}-badge {{ border-radius: 8px; padding: 0 6px; font-size: 0.85em; border: 1px solid currentColor; }}
.{PREFIX}-s-queued {{ color: var(--jp-ui-font-color2, #666); }}
.{PREFIX}-s-waiting {{ color: var(--jp-warn-color1, #b36b00); }}
.{PREFIX}-s-running {{ color: var(--jp-brand-color1, #1976d2); }}
.{PREFIX}-s-done {{ color: var(--jp-success-color1, #388e3c); }}
.{PREFIX}-s-error, .{PREFIX}-s-invalid, .{PREFIX}-s-denied {{ color: var(--jp-error-color1, #d32f2f); }}
.{PREFIX}-s-cancelled, .{PREFIX}-s-interrupted {{ color: var(--jp-warn-color1, #b36b00); }}
.{PREFIX}-card.{PREFIX}-s-queued, .{PREFIX}-card.{PREFIX}-s-waiting, .{PREFIX}-card.{PREFIX}-s-running,
.{PREFIX}-card.{PREFIX}-s-done, .{PREFIX}-card.{PREFIX}-s-error, .{PREFIX}-card.{PREFIX}-s-invalid,
.{PREFIX}-card.{PREFIX}-s-denied, .{PREFIX}-card.{PREFIX}-s-cancelled, .{PREFIX}-card.{PREFIX}-s-interrupted
  {{ border-left-color: currentColor; }}
.{PREFIX}-card > * {{ color: var(--jp-ui-font-color1, #1f1f1f); }}
.{PREFIX}-run .{PREFIX}-card pre, .{PREFIX}-run .{PREFIX}-notice pre {{ margin: 2px 0; padding: 4px; white-space: pre-wrap; word-break: break-word;
  font-family: var(--jp-code-font-family, monospace); font-size: var(--jp-code-font-size, 12px);
  background: var(--jp-layout-color2, rgba(127,127,127,0.08)); color: var(--jp-content-font-color1, inherit);
  max-height: 24em; overflow: auto; }}
.{PREFIX}-run table.{PREFIX}-input {{ border-collapse: collapse; table-layout: auto; width: 100%; margin: 2px 0; }}
.{PREFIX}-run table.{PREFIX}-input tr, .{PREFIX}-run table.{PREFIX}-input td,
.{PREFIX}-run table.{PREFIX}-input th {{ text-align: left; vertical-align: top; border: none;
  background: transparent; padding: 0 6px 0 0; }}
.{PREFIX}-run table.{PREFIX}-input th {{ font-weight: normal; width: 1%; white-space: nowrap;
  color: var(--jp-ui-font-color2, #666); font-family: var(--jp-code-font-family, monospace); }}
.{PREFIX}-run .{PREFIX}-text pre {{ padding: 4px 8px; background: var(--jp-layout-color2, rgba(127,127,127,0.08)); }}
.{PREFIX}-label {{ color: var(--jp-ui-font-color2, #666); font-size: 0.9em; }}
.{PREFIX}-decision {{ font-size: 0.95em; }}
.{PREFIX}-ask {{ border-top: 1px dashed var(--jp-border-color2, #d0d0d0); margin-top: 4px; padding-top: 4px; }}
.{PREFIX}-rule {{ font-family: var(--jp-code-font-family, monospace); }}
.{PREFIX}-notice {{ padding: 2px 8px; margin: 4px 0; border-left: 4px solid var(--jp-info-color1, #0288d1); }}
.{PREFIX}-notice-warning {{ border-left-color: var(--jp-warn-color1, #b36b00); }}
.{PREFIX}-notice-error {{ border-left-color: var(--jp-error-color1, #d32f2f);
  background: var(--jp-error-color3, rgba(211,47,47,0.08)); }}
.{PREFIX}-thinking {{ color: var(--jp-ui-font-color2, #666); font-style: italic; }}
.{PREFIX}-footer {{ color: var(--jp-ui-font-color2, #666); font-size: 0.9em; margin-top: 4px; }}
.{PREFIX}-result img {{ max-width: 100%; max-height: 20em; }}
</style>"""

NEVER_FOLD_KEYS = frozenset({"command", "path", "file_path", "notebook_path", "pattern", "glob", "url", "cwd", "name"})
"""Input fields a person must see whole to judge a call (§8.2: commands and paths in full)."""
FOLD_CHARS = 600
FOLD_LINES = 12
FOLDED_BODY_CHARS = 100_000
_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_BASE64 = re.compile(r"^[A-Za-z0-9+/=\s]*$")

STATUS_LABELS = {
    "queued": "queued",
    "waiting": "waiting for approval",
    "running": "running",
    "done": "done",
    "error": "error",
    "invalid": "invalid input",
    "denied": "denied",
    "cancelled": "cancelled",
    "interrupted": "interrupted",
}
RUN_STATUS_LABELS = {"running": "running", "done": "finished", "stopped": "stopped", "error": "failed", "ended": "ended"}
DECIDERS = {
    "user": "you",
    "rule": "a permission rule",
    "mode": "the permission mode",
    "hook": "a hook",
    "policy": "policy (no interactive front end)",
    "timeout": "timeout (no answer)",
    "interrupt": "interrupt",
    "read_only": "read-only check",
    "safety": "safety check",
    "tool": "the tool's own check",
    "default": "default",
}

_esc = html.escape


def css_id(tool_use_id: str) -> str:
    """A tool_use id reduced to characters safe in a CSS class (for locating cards)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", tool_use_id)


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    return f"{int(seconds // 60)} min {seconds % 60:.0f} s"


def format_clock(epoch: float | None) -> str:
    if epoch is None:
        return ""
    return datetime.datetime.fromtimestamp(epoch).strftime("%H:%M:%S")


def _value_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        compact = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)
    return json.dumps(value, ensure_ascii=False, indent=2) if len(compact) > 80 else compact


def _folds(key: str, text: str) -> bool:
    return key not in NEVER_FOLD_KEYS and (len(text) > FOLD_CHARS or text.count("\n") >= FOLD_LINES)


def input_html(input: dict[str, Any]) -> str:
    """A call's input: every field shown; long values folded but one click away."""
    if not input:
        return f'<div class="{PREFIX}-input {PREFIX}-muted">(no input)</div>'
    rows = []
    for key, value in input.items():
        text = _value_text(value)
        if _folds(str(key), text):
            lines = text.splitlines() or [""]
            head = "\n".join(lines[:3])[:300]
            body = cut_middle(text, FOLDED_BODY_CHARS)
            cell = (
                f"<details><summary><span class=\"{PREFIX}-muted\">{len(lines):,} lines, {len(text):,} characters"
                f" — show all</span><pre>{_esc(head)}…</pre></summary><pre>{_esc(body)}</pre></details>"
            )
        else:
            cell = f"<pre>{_esc(text)}</pre>"
        rows.append(f"<tr><th>{_esc(str(key))}</th><td>{cell}</td></tr>")
    return f'<table class="{PREFIX}-input">{"".join(rows)}</table>'


def card_header_html(card: CardState) -> str:
    label = STATUS_LABELS.get(card.status, card.status)
    bits = [
        f'<span class="{PREFIX}-tool">{_esc(card.name)}</span>',
        f'<span class="{PREFIX}-badge {PREFIX}-s-{card.status}" data-status="{card.status}">{_esc(label)}</span>',
    ]
    if card.duration is not None:
        bits.append(f'<span class="{PREFIX}-muted {PREFIX}-duration">{format_duration(card.duration)}</span>')
    if card.batch is not None:
        bits.append(f'<span class="{PREFIX}-muted">batch {card.batch}</span>')
    if card.label:
        bits.append(f'<span class="{PREFIX}-muted {PREFIX}-label">{_esc(card.label)}</span>')
    bits.append(f'<span class="{PREFIX}-muted">{_esc(card.tool_use_id)}</span>')
    return f'<div class="{PREFIX}-card-header">{" ".join(bits)}</div>'


def ask_html(ask: Ask | None, tool_name: str) -> str:
    """Why the runtime asks, and what "Always allow" would add."""
    if ask is None:
        return ""
    rule = ask.suggested_rule or tool_name
    return (
        f'<div class="{PREFIX}-ask-reason"><b>Permission needed:</b> {_esc(ask.reason or "no rule allows this call")}</div>'
        f'<div class="{PREFIX}-muted">“Always allow” adds the session rule '
        f'<code class="{PREFIX}-rule">{_esc(rule)}</code></div>'
    )


def decision_text(decision: Decision | None, wall_offset: float = 0.0) -> str:
    if decision is None:
        return ""
    who = DECIDERS.get(decision.decided_by, decision.decided_by or "the runtime")
    wall = decision.wall_time if decision.wall_time is not None else decision.at + wall_offset
    if decision.decided_by == "interrupt":
        return f"Not answered: the run was stopped at {format_clock(wall)}"
    if decision.decided_by == "timeout":
        return f"Denied at {format_clock(wall)}: no answer in time"
    if decision.behavior == "allow":
        verb = "Always allowed" if decision.always else ("Allowed once" if decision.decided_by == "user" else "Allowed")
    else:
        verb = "Denied"
    text = f"{verb} by {who} at {format_clock(wall)}"
    if decision.rule_added:
        text += f"; session rule added: {decision.rule_added}"
    if decision.behavior == "deny" and decision.message:
        text += f" — “{cut_middle(decision.message, 500)}”"
    return text


def decision_html(decision: Decision | None, wall_offset: float = 0.0) -> str:
    """The decision line; ``data-decided-at`` (epoch seconds) is when the answer was taken."""
    if decision is None:
        return ""
    mark = "✔" if decision.behavior == "allow" else "✘"
    stamp = decision.wall_time if decision.wall_time is not None else decision.at + wall_offset
    return (
        f'<div class="{PREFIX}-decision {PREFIX}-decision-{decision.behavior}" data-behavior="{decision.behavior}"'
        f' data-decided-by="{_esc(decision.decided_by)}" data-decided-at="{stamp:.3f}">'
        f"{mark} {_esc(decision_text(decision, wall_offset))}</div>"
    )


def progress_html(card: CardState) -> str:
    if card.finished or (card.progress_fraction is None and not card.progress_message):
        return ""
    bar = f'<progress max="1" value="{card.progress_fraction:.3f}"></progress> ' if card.progress_fraction is not None else ""
    return f'<div class="{PREFIX}-progress">{bar}<span class="{PREFIX}-muted">{_esc(card.progress_message)}</span></div>'


def output_html(text: str, label: str = "Printed output") -> str:
    if not text:
        return ""
    return f'<details class="{PREFIX}-output" open><summary class="{PREFIX}-label">{label}</summary><pre>{_esc(text)}</pre></details>'


def _image_html(media_type: str, data: str) -> str:
    if media_type not in _IMAGE_TYPES or len(data) > 4_000_000 or not _BASE64.match(data):
        return f'<span class="{PREFIX}-muted">[image]</span>'
    return f'<img alt="tool image" src="data:{media_type};base64,{data.strip()}">'


def result_html(card: CardState) -> str:
    """The bounded preview of the one tool_result, plus what the tool printed."""
    if not card.finished:
        return output_html(card.live_output)
    parts = [output_html(card.captured_output)]
    if card.result_text or card.result_images:
        cls = f"{PREFIX}-result {PREFIX}-result-error" if card.is_error else f"{PREFIX}-result"
        label = "Error result" if card.is_error else "Result"
        images = "".join(_image_html(t, d) for t, d in card.result_images)
        text = f"<pre>{_esc(card.result_text)}</pre>" if card.result_text else ""
        parts.append(f'<div class="{cls}"><div class="{PREFIX}-label">{label}</div>{text}{images}</div>')
    return "".join(parts)


def card_html(card: CardState, wall_offset: float = 0.0) -> str:
    """One whole card, for the static view (the live card is assembled from the same parts)."""
    ask = f'<div class="{PREFIX}-ask">{ask_html(card.ask, card.name)}</div>' if card.ask is not None else ""
    return (
        f'<div class="{PREFIX}-card {PREFIX}-s-{card.status} {PREFIX}-card-{css_id(card.tool_use_id)}"'
        f' data-tool-use-id="{_esc(card.tool_use_id)}" data-status="{card.status}">'
        f"{card_header_html(card)}{input_html(card.input)}{progress_html(card)}{ask}"
        f"{decision_html(card.decision, wall_offset)}{result_html(card)}</div>"
    )


def text_html(block: TextBlock, stream: MarkdownStream | None = None) -> str:
    """A text block; ``stream`` (kept by the live view per block) makes re-rendering a growing
    block cost only its open tail until the block is complete."""
    if block.thinking:
        return (
            f'<details class="{PREFIX}-thinking"><summary>Thinking</summary>'
            f"<pre>{_esc(block.text)}</pre></details>"
        )
    body = markdown_html(block.text) if stream is None else stream.render(block.text, final=block.complete)
    return f'<div class="{PREFIX}-text jp-RenderedHTMLCommon jp-RenderedMarkdown">{body}</div>'


def notice_html(notice: Notice) -> str:
    text = notice.text
    body = f"<pre>{_esc(cut_middle(text, 20_000))}</pre>" if "\n" in text or len(text) > 200 else _esc(text)
    return f'<div class="{PREFIX}-notice {PREFIX}-notice-{notice.level}" data-level="{notice.level}">{body}</div>'


def estimate_cost(model: str | None, usage: Usage) -> float | None:
    """The run's cost in USD if the pricing table knows the model, else None (never raises:
    a missing price must not break the display)."""
    if not model:
        return None
    try:
        from ..models.pricing import estimate_cost as _estimate
    except ImportError:
        return None
    try:
        value = _estimate(model, usage)
        if value is None:
            return None
        return float(value.total_usd)
    except Exception:
        return None


def usage_text(state: RunViewState) -> str:
    u = state.usage
    requests = u.requests or state.requests_finished
    parts = [
        f"{requests} request{'s' if requests != 1 else ''}",
        f"input {u.input_tokens:,}",
        f"output {u.output_tokens:,}",
        f"cache write {u.cache_creation_input_tokens:,}",
        f"cache read {u.cache_read_input_tokens:,}",
    ]
    cost = estimate_cost(state.model, u)
    if cost is not None:
        parts.append(f"≈ ${cost:.4f}")
    if state.context_window:
        parts.append(context_text(state.context_tokens, state.context_window))
    if state.model:
        parts.append(state.model)
    return " · ".join(parts)


def context_text(tokens: int, window: int) -> str:
    """``context 37% of 200k``: the last request's share of the model's window (SPEC §14)."""
    from ..core.context_window import format_window

    return f"context {100 * tokens / window:.0f}% of {format_window(window)}"


def footer_html(state: RunViewState) -> str:
    if state.status == "running" and not (state.requests_finished or state.usage.requests):
        return ""  # nothing to count yet: no line of zeros while the first reply streams
    return f'<div class="{PREFIX}-footer">{_esc(usage_text(state))}</div>'


def run_status_text(state: RunViewState) -> str:
    label = RUN_STATUS_LABELS[state.status]
    if state.status == "running":
        return "Stopping…" if state.stop_requested else "Agent running…"
    text = f"Agent {label}"
    if state.finish_reason and state.finish_reason not in ("end_turn", "aborted"):
        text += f" ({state.finish_reason})"
    if state.finished_at is not None:
        text += f" after {format_duration(state.finished_at - state.started_at)}"
    return text


def header_html(state: RunViewState) -> str:
    error = ""
    if state.error:
        rid = f" (request id {state.last_request_id})" if state.last_request_id and state.last_request_id not in state.error else ""
        error = f'<div class="{PREFIX}-notice {PREFIX}-notice-error"><pre>{_esc(state.error + rid)}</pre></div>'
    return (
        f'<div class="{PREFIX}-status {PREFIX}-run-{state.status}" data-run-status="{state.status}">'
        f"<b>{_esc(run_status_text(state))}</b></div>{error}"
    )


def _items_html(state: RunViewState) -> Iterable[str]:
    for kind, key in state.items:
        if kind == "text":
            yield text_html(state.texts[key])
        elif kind == "card":
            yield card_html(state.cards[key], state.wall_offset)
        else:
            yield notice_html(state.notices[key])


def render_html(state: RunViewState) -> str:
    return (
        f'{STYLE}<div class="{PREFIX}-run">{header_html(state)}{"".join(_items_html(state))}'
        f"{footer_html(state)}</div>"
    )


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def card_text(card: CardState, wall_offset: float = 0.0) -> str:
    head = f"[{card.name}] {STATUS_LABELS.get(card.status, card.status)}"
    if card.duration is not None:
        head += f" ({format_duration(card.duration)})"
    if card.label:
        head += f" [{card.label}]"
    lines = [head]
    for key, value in card.input.items():
        text = _value_text(value)
        if _folds(str(key), text):
            text = cut_middle(text, FOLD_CHARS)
        lines.append(f"  {key}: " + (text if "\n" not in text else "\n" + _indent(text)))
    if card.ask is not None and card.decision is None:
        lines.append(f"  permission needed: {card.ask.reason}")
    if card.decision is not None:
        lines.append("  " + decision_text(card.decision, wall_offset))
    if card.captured_output:
        lines.append("  printed:\n" + _indent(card.captured_output))
    if card.finished and card.result_text:
        lines.append(("  error result:\n" if card.is_error else "  result:\n") + _indent(card.result_text))
    return "\n".join(lines)


def render_text(state: RunViewState) -> str:
    out = [run_status_text(state)]
    if state.error:
        out.append(f"Error: {state.error}")
    for kind, key in state.items:
        if kind == "text":
            block = state.texts[key]
            out.append(("(thinking) " if block.thinking else "") + block.text)
        elif kind == "card":
            out.append(card_text(state.cards[key], state.wall_offset))
        else:
            notice = state.notices[key]
            out.append(f"[{notice.level}] {notice.text}")
    out.append(usage_text(state))
    return "\n\n".join(out)


class StaticRunView:
    """A finished (or running) run as a display object for any front end."""

    def __init__(self, state: RunViewState) -> None:
        self.state = state

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": render_text(self.state), "text/html": render_html(self.state)}

    def __repr__(self) -> str:
        return render_text(self.state)
