"""`%agent raw`: each request and response of a run as JSON, with what changed in between.

For each request: its id, stop reason and usage (from the run's events), where the cache
breakpoints are, what changed since the previous request (messages added / changed / removed,
tools or settings, a moved breakpoint) and whether the previous request's cached prefix is still
reused, then the response. Both forms show the first and the last body in full (folded in HTML)
and, in between, only the changes: every request repeats the whole conversation, so embedding
every body would make the output grow with the square of the run's length (a 500-request run:
tens of megabytes in the notebook). ``full=True`` (``%agent raw --full``) shows every body.
"""

from __future__ import annotations

import json
from typing import Any

from ..core.events import RequestFinishedEvent
from ._base import View, esc
from ._json import format_json
from .request_diff import RequestDiff, cache_breakpoints, diff_requests

__all__ = ["RawView"]


def _usage_text(usage: Any) -> str:
    if usage is None:
        return ""
    return (f"input {usage.input_tokens}, output {usage.output_tokens}, cache write "
            f"{usage.cache_creation_input_tokens}, cache read {usage.cache_read_input_tokens}")


class RawView(View):
    """The requests and responses of one run (a `RunRecord`), or a note when there is none."""

    title = "Raw requests"

    def __init__(self, run: Any | None, *, max_string: int | None = 300, full: bool = False) -> None:
        self.run = run
        self.max_string = max_string
        self.full = full
        self.requests: list[dict[str, Any]] = list(getattr(run, "requests", None) or [])
        self.responses: list[dict[str, Any]] = list(getattr(run, "responses", None) or [])
        self.request_ids: list[str | None] = list(getattr(run, "request_ids", None) or [])
        self.finished: dict[int, RequestFinishedEvent] = {
            ev.index: ev for ev in getattr(run, "events", None) or [] if isinstance(ev, RequestFinishedEvent)
        }
        self.diffs: list[RequestDiff | None] = [
            None if i == 0 else diff_requests(self.requests[i - 1], body) for i, body in enumerate(self.requests)
        ]

    # --- shared pieces -----------------------------------------------------------------------
    def _empty_text(self) -> str | None:
        if self.run is None:
            return "No run yet: run a %%agent cell first."
        if not self.requests:
            return "This run made no request."
        return None

    def _meta(self, i: int) -> list[str]:
        finished = self.finished.get(i)
        request_id = finished.request_id if finished and finished.request_id else (
            self.request_ids[i] if i < len(self.request_ids) else None)
        lines = [f"request id: {request_id or '(none)'}"]
        if finished is not None:
            lines.append(f"stop_reason: {finished.stop_reason}")
            lines.append(f"usage: {_usage_text(finished.usage)}")
        elif getattr(self.run, "finish_reason", None) == "dry_run":
            lines.append("dry run: this request was not sent")
        elif i >= len(self.responses):
            lines.append("no response recorded")
        lines.append("cache breakpoints: " + (", ".join(cache_breakpoints(self.requests[i])) or "none"))
        return lines

    def _shows_body(self, i: int) -> bool:
        return self.full or i == 0 or i == len(self.requests) - 1

    def _header(self, i: int) -> str:
        return f"Request {i + 1} of {len(self.requests)}"

    def _diff_lines(self, i: int) -> list[tuple[str, str]]:
        """``(css class, line)`` pairs describing the changes since request ``i - 1``."""
        diff = self.diffs[i]
        if diff is None:
            return []
        out: list[tuple[str, str]] = [("", f"Changes since request {i}:")]
        for change in diff.messages:
            if change.kind == "added":
                out.append(("tav-diff-add", f"+ messages[{change.index}] added:"))
                out += [("tav-diff-add", "  " + l) for l in format_json(change.message, max_string=self.max_string).splitlines()]
            elif change.kind == "removed":
                out.append(("tav-diff-del", f"- messages[{change.index}] removed"))
            else:
                out.append(("tav-warn", f"~ messages[{change.index}] changed:"))
                for line in change.diff:
                    css = "tav-diff-add" if line.startswith("+") else "tav-diff-del" if line.startswith("-") else ""
                    out.append((css, "  " + line))
        out += [("tav-warn", "~ " + line) for line in diff.summary_lines()]
        if len(out) == 1:
            out.append(("tav-muted", "  (no change besides the cache breakpoints)"))
        out.append(("tav-ok" if diff.cache.reused else "tav-bad", "prompt cache: " + diff.cache.reason))
        return out

    # --- text --------------------------------------------------------------------------------
    def to_text(self) -> str:
        empty = self._empty_text()
        if empty is not None:
            return f"{self.title} — {empty}"
        lines = [f"{self.title} — {len(self.requests)} request(s) in this run"]
        for i, body in enumerate(self.requests):
            lines += ["", f"=== {self._header(i)} ===", *self._meta(i)]
            if self._shows_body(i):
                lines += ["request body:", format_json(body, max_string=self.max_string)]
            if i > 0:
                lines += [line for _, line in self._diff_lines(i)]
            if i < len(self.responses):
                lines += ["response:", format_json(self.responses[i], max_string=self.max_string)]
        error = getattr(self.run, "error", None)
        if error:
            lines += ["", f"run error: {error}"]
        return "\n".join(lines)

    # --- html --------------------------------------------------------------------------------
    def _html_body(self) -> str:
        empty = self._empty_text()
        if empty is not None:
            return f"<h3>{esc(self.title)}</h3><div class=\"tav-muted\">{esc(empty)}</div>"
        parts = [f"<h3>{esc(self.title)} — {len(self.requests)} request(s) in this run</h3>"]
        for i, body in enumerate(self.requests):
            parts.append(f'<section data-request-index="{i}"><h4>{esc(self._header(i))}</h4>')
            parts.append("<div>" + "<br>".join(esc(line) for line in self._meta(i)) + "</div>")
            if i > 0:
                rendered = [f'<span class="{css}">{esc(line)}</span>' if css else esc(line)
                            for css, line in self._diff_lines(i)]
                parts.append('<pre class="tav-diff">' + "\n".join(rendered) + "</pre>")
            if self._shows_body(i):
                size = len(json.dumps(body, ensure_ascii=False, default=repr))
                opened = " open" if self.full else ""
                parts.append(f"<details{opened}><summary>request body ({size} characters of JSON)</summary>"
                             f"<pre>{format_json(body, max_string=self.max_string, html=True)}</pre></details>")
            else:
                parts.append('<div class="tav-muted">request body: the previous one with the changes above '
                             "(%agent raw --full shows every body)</div>")
            if i < len(self.responses):
                parts.append("<details open><summary>response</summary>"
                             f"<pre>{format_json(self.responses[i], max_string=self.max_string, html=True)}</pre>"
                             "</details>")
            parts.append("</section>")
        error = getattr(self.run, "error", None)
        if error:
            parts.append(f'<div class="tav-violation">run error: {esc(error)}</div>')
        return "".join(parts)
