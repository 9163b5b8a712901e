"""The schedule view: which calls shared a batch, when each was queued, waited, ran (SPEC §9).

HTML is an inline SVG (no script, so it survives a saved notebook): one row per call, grouped by
batch, each segment coloured by state — queued, waiting for approval (labelled with the wait),
running (coloured by how the call ended). Every drawn segment carries ``data-tool-use-id``,
``data-group``, ``data-segment``, ``data-status`` and ``data-waited`` so a page test or a
teacher's inspector can read the schedule back. The text form is a table with an ASCII bar.
"""

from __future__ import annotations

from typing import Any

from ._base import View, cut_middle, esc
from .timeline import CallTimeline, Schedule, build_schedule

__all__ = ["ScheduleView"]

_BAR_CHARS = {"queued": "-", "waiting": "?", "running": "#"}
_FALLBACK_FILL = {
    "queued": "#bdbdbd", "waiting": "#ffb74d", "done": "#2e7d32", "error": "#c62828", "denied": "#ef6c00",
    "invalid": "#e57373", "cancelled": "#9e9e9e", "interrupted": "#9e9e9e", "running": "#1976d2",
}
_ROW = 20
_LABEL_WIDTH = 230
_PLOT_WIDTH = 420
_TOP = 22


def _seconds(value: float) -> str:
    return f"{value:.3f}"


class ScheduleView(View):
    """``source``: a `RunRecord`, a list of events (a partial list works, for a live run), or
    ``None``. ``now`` ends unfinished calls (default: the clock, while calls are unfinished).
    ``schedule`` holds the data drawn."""

    title = "Schedule"

    def __init__(self, source: Any | None, *, now: float | None = None, bar_width: int = 32) -> None:
        self.source = source
        self.bar_width = max(4, bar_width)
        if source is None:
            events: list[Any] = []
        elif isinstance(source, (list, tuple)):
            events = list(source)
        else:
            events = list(getattr(source, "events", []) or [])
        self.schedule: Schedule = build_schedule(events, now=now)

    def _headline(self) -> str:
        s = self.schedule
        if not s.calls:
            return f"{self.title} — no tool call" + (" (no run yet)" if self.source is None else "")
        live = " (still running)" if s.live else ""
        return (f"{self.title} — {len(s.calls)} tool call(s) in {len(s.groups)} group(s), "
                f"{_seconds(s.duration)} s{live}")

    # --- text ---------------------------------------------------------------------------------
    def _bar(self, call: CallTimeline) -> str:
        s = self.schedule
        cells = [" "] * self.bar_width
        scale = self.bar_width / s.duration if s.duration > 0 else 0.0
        for segment in call.segments:
            first = min(self.bar_width - 1, int((segment.start - s.origin) * scale))
            last = min(self.bar_width, max(first + 1, round((segment.end - s.origin) * scale)))
            for i in range(first, last):
                cells[i] = _BAR_CHARS[segment.state]
        return "|" + "".join(cells) + "|"

    def to_text(self) -> str:
        s = self.schedule
        lines = [self._headline()]
        if not s.calls:
            return lines[0]
        header = (f"    {'tool_use id':<32} {'tool':<14} {'status':<11} {'queued':>7} {'wait':>7} {'start':>7} "
                  f"{'end':>7}  bar")
        lines.append(header)
        for group in s.groups:
            together = "concurrent" if group.concurrent else "alone"
            lines.append(f"  {group.label} ({len(group.calls)} call(s), {together})")
            for call in group.calls:
                wait = _seconds(call.waited) if call.asked_at is not None else ""
                started = _seconds(call.started_at - s.origin) if call.started_at is not None else "-"
                lines.append(
                    f"    {cut_middle(call.tool_use_id, 32):<32} {cut_middle(call.name, 14):<14} {call.status:<11} "
                    f"{_seconds(call.start - s.origin):>7} {wait:>7} {started:>7} {_seconds(call.end - s.origin):>7}  "
                    f"{self._bar(call)}"
                )
        lines.append("times in seconds from the run's first event (queued: when the call was queued, start: when it "
                     "began running, '-' if it never did); bar: - queued, ? waiting for approval, # running")
        return "\n".join(lines)

    # --- svg ----------------------------------------------------------------------------------
    def _x(self, t: float) -> float:
        s = self.schedule
        if s.duration <= 0:
            return float(_LABEL_WIDTH)
        return _LABEL_WIDTH + (t - s.origin) / s.duration * _PLOT_WIDTH

    def _segment_svg(self, call: CallTimeline, group_key: str, y: float) -> list[str]:
        out = []
        for segment in call.segments:
            x0, x1 = self._x(segment.start), self._x(segment.end)
            width = max(1.5, x1 - x0)
            css = f"tav-seg-{segment.state}" if segment.state != "running" else f"tav-status-{call.status}"
            fill = _FALLBACK_FILL.get(segment.state if segment.state != "running" else call.status, "#1976d2")
            state_text = {"queued": "queued", "waiting": "waiting for approval", "running": "running"}[segment.state]
            tip = (f"{call.name} {call.tool_use_id}: {state_text} {_seconds(segment.duration)} s"
                   + (" (still going)" if segment.open else "") + f" — {call.status}")
            out.append(
                f'<rect class="{css}" fill="{fill}" x="{x0:.1f}" y="{y + 3:.1f}" width="{width:.1f}" height="{_ROW - 6}" '
                f'data-tool-use-id="{esc(call.tool_use_id)}" data-group="{esc(group_key)}" '
                f'data-segment="{segment.state}" data-status="{esc(call.status)}" '
                f'data-waited="{call.waited:.3f}"><title>{esc(tip)}</title></rect>'
            )
            if segment.state == "waiting":
                out.append(f'<text x="{x0 + 2:.1f}" y="{y + _ROW - 7:.1f}" data-tool-use-id="{esc(call.tool_use_id)}">'
                           f"approval {_seconds(segment.duration)} s</text>")
        return out

    def _svg(self) -> str:
        s = self.schedule
        rows = sum(len(g.calls) + 1 for g in s.groups)
        height = _TOP + rows * _ROW + 8
        width = _LABEL_WIDTH + _PLOT_WIDTH + 20
        parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
                 f'viewBox="0 0 {width} {height}" role="img" aria-label="{esc(self._headline())}">',
                 f'<text x="{_LABEL_WIDTH}" y="14">0 s</text>',
                 f'<text x="{_LABEL_WIDTH + _PLOT_WIDTH}" y="14" text-anchor="end">{_seconds(s.duration)} s</text>']
        y = float(_TOP)
        for group in s.groups:
            band_height = (len(group.calls) + 1) * _ROW
            parts.append(f'<rect class="tav-group-band" fill="rgba(25,118,210,0.07)" x="0" y="{y:.1f}" '
                         f'width="{width}" height="{band_height}" data-group="{esc(group.key)}"/>')
            together = "concurrent" if group.concurrent else "alone"
            parts.append(f'<text x="4" y="{y + 14:.1f}" font-weight="600">{esc(group.label)} '
                         f"({len(group.calls)} call(s), {together})</text>")
            y += _ROW
            for call in group.calls:
                label = f"{cut_middle(call.name, 16)} …{call.tool_use_id[-8:]}"  # the tail tells ids apart
                parts.append(f'<text x="14" y="{y + 14:.1f}">{esc(label)}</text>')
                parts += self._segment_svg(call, group.key, y)
                y += _ROW
        parts.append("</svg>")
        return "".join(parts)

    def _html_body(self) -> str:
        head = f"<h3>{esc(self._headline())}</h3>"
        if not self.schedule.calls:
            return head
        legend = ('<div class="tav-muted">grey: queued · amber: waiting for approval · running, coloured by outcome: '
                  "green done, red error, orange denied, grey cancelled/interrupted</div>")
        return head + self._svg() + legend
