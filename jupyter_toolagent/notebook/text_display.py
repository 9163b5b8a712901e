"""A run as plain text printed while it happens: terminal IPython's view.

Terminals have no widgets, and a static rendering at the end would leave the person staring at
nothing while a ``[y/N]`` question appears; so text streams as it arrives and each tool call
gets a line when it is queued, decided and finished. It has the same interface as `RunDisplay`
(``show``, ``handle``, ``finish``, ``approver``) so the cell code does not care which it got.
"""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from ..core.abort import AbortSignal
from ..core.events import AgentEvent

_PREVIEW = 200


class TextDisplay:
    def __init__(self, abort: AbortSignal, *, interactive: bool = False, session: Any = None,
                 stream: TextIO | None = None, model: str | None = None) -> None:
        self.abort = abort
        self.interactive = interactive
        self.session = session
        self.approver = None
        self.model = model
        self._stream = stream
        self._in_text = False
        self._finished = False

    @property
    def out(self) -> TextIO:
        return self._stream or sys.stdout

    def show(self) -> None:
        """Nothing to draw up front: lines appear as events arrive."""

    def _line(self, text: str) -> None:
        if self._in_text:
            self.out.write("\n")
            self._in_text = False
        self.out.write(text + "\n")
        self.out.flush()

    def handle(self, event: AgentEvent) -> None:
        kind = event.kind
        # each `kind` names one event class; mypy does not narrow the union on it (the ignores below)
        if kind == "text_delta":
            self.out.write(event.text)  # type: ignore[union-attr]
            self.out.flush()
            self._in_text = True
        elif kind == "tool_queued":
            self._line(f"▶ {event.name}({_short(event.input)})  [{event.tool_use_id}]")  # type: ignore[union-attr]
        elif kind == "permission_decided":  # a denial's message follows in its result line
            verb = "allowed" if event.behavior == "allow" else "denied"  # type: ignore[union-attr]
            self._line(f"  {event.name} {verb} by {event.decided_by}")  # type: ignore[union-attr]
        elif kind == "tool_progress" and event.label:  # type: ignore[union-attr]
            self._line(f"  {event.label}")  # type: ignore[union-attr]
        elif kind == "tool_finished":
            self._line(f"  {event.name} {event.status}{_duration(event.duration)}: "  # type: ignore[union-attr]
                       f"{_preview(event.result)}")  # type: ignore[union-attr]
        elif kind == "notice":
            self._line(f"[{event.level}] {event.text}")  # type: ignore[union-attr]
        elif kind == "run_finished":
            self._line(_finished_line(event, self.model))

    def finish(self, error: BaseException | None = None) -> None:
        if self._finished:
            return
        self._finished = True
        if self._in_text:
            self.out.write("\n")
            self._in_text = False
        if error is not None and not isinstance(error, (KeyboardInterrupt,)):
            self._line(f"[error] {type(error).__name__}: {error}")
        self.out.flush()


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    return text if len(text) <= _PREVIEW else text[: _PREVIEW - 1] + "…"


def _duration(seconds: float | None) -> str:
    return "" if seconds is None else f" in {seconds:.2f} s"


def _preview(result: dict[str, Any]) -> str:
    content = result.get("content", "")
    if isinstance(content, list):
        content = " ".join(str(b.get("text", f"[{b.get('type')}]")) for b in content if isinstance(b, dict))
    text = " ".join(str(content).split())
    return text if len(text) <= _PREVIEW else text[: _PREVIEW - 1] + "…"


def _finished_line(event: Any, model: str | None) -> str:
    usage = event.usage
    parts = [f"— run finished: {event.reason}",
             f"{usage.requests} request(s), {usage.total_input_tokens} input / {usage.output_tokens} output tokens"]
    if model:
        try:
            from ..models.pricing import format_cost

            parts.append(format_cost(model, usage))
        except Exception:  # pricing data unavailable: the footer still shows tokens
            pass
    line = " · ".join(parts)
    if event.error:
        line += f"\n  {event.error}"
    return line
