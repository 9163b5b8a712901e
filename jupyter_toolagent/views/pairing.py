"""`%agent check` and the repair report: the pairing verdict and what a repair changed.

Both are short by design. The check answers one question — would the API accept this
transcript, and if not, what exactly would it say — with every violation in the API's words,
the first one marked as the 400 the API would return. The repair view makes a repair visible
(SPEC §6: a repair is never silent): each change, where, and the check before and after.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.pairing.check import PairingViolation, check_pairing
from ..core.pairing.repair import RepairReport, repair_pairing
from ._base import View, esc

__all__ = ["PairingCheckView", "RepairView"]


def _check(messages: Sequence[Any]) -> tuple[list[PairingViolation], str | None]:
    try:
        return check_pairing(messages), None
    except Exception as exc:
        return [], f"check_pairing cannot read this transcript: {exc}"


class PairingCheckView(View):
    """The result of `check_pairing`: valid, or every violation with the API's exact text."""

    title = "Pairing check"

    def __init__(self, violations: Sequence[PairingViolation], *, message_count: int | None = None,
                 problem: str | None = None) -> None:
        self.violations = list(violations)
        self.message_count = message_count
        self.problem = problem

    @classmethod
    def of(cls, messages: Sequence[Any]) -> "PairingCheckView":
        """Check ``messages`` as given (API format); a malformed list is reported, not raised."""
        violations, problem = _check(messages)
        return cls(violations, message_count=len(messages), problem=problem)

    @property
    def valid(self) -> bool:
        return not self.violations and self.problem is None

    def _headline(self) -> str:
        scope = f" ({self.message_count} messages)" if self.message_count is not None else ""
        if self.problem is not None:
            return f"{self.title}{scope}: not checked — {self.problem}"
        if not self.violations:
            return f"{self.title}{scope}: valid — every tool_use has exactly one tool_result."
        return (f"{self.title}{scope}: {len(self.violations)} violation(s). The API would reject this "
                "transcript (HTTP 400, invalid_request_error) with the first:")

    def to_text(self) -> str:
        lines = [self._headline()]
        for number, v in enumerate(self.violations, 1):
            where = f"messages.{v.message_index}" + (f".content.{v.content_index}" if v.content_index is not None else "")
            lines.append(f"{number}. [{v.kind} at {where}] {v.message}")
        return "\n".join(lines)

    def _html_body(self) -> str:
        head_class = "tav-ok" if self.valid else "tav-bad"
        parts = [f'<h3 class="{head_class}">{esc(self._headline())}</h3>']
        if self.violations:
            parts.append("<ol>")
            for number, v in enumerate(self.violations, 1):
                first = ' <span class="tav-muted">(the API answers with this one)</span>' if number == 1 else ""
                parts.append(f'<li class="tav-violation" data-kind="{esc(v.kind)}" '
                             f'data-message-index="{v.message_index}"><code>{esc(v.message)}</code>{first}</li>')
            parts.append("</ol>")
        return "".join(parts)


class RepairView(View):
    """What `repair_pairing` did: each change, and the check before and after."""

    title = "Pairing repair"

    def __init__(self, report: RepairReport, *, before: Sequence[Any] | None = None,
                 violations: Sequence[PairingViolation] | None = None) -> None:
        self.report = report
        self.before = list(before) if before is not None else None
        if violations is None and before is not None:
            violations, _ = _check(before)
        self.violations = list(violations) if violations is not None else None
        self.after_violations, self.after_problem = _check(report.messages)

    @classmethod
    def of(cls, messages: Sequence[Any]) -> "RepairView":
        """Repair ``messages`` (the input is not modified) and show the report."""
        return cls(repair_pairing(messages), before=messages)

    def _after_line(self) -> str:
        if self.after_problem is not None:
            return f"After repair: {self.after_problem}"
        if self.after_violations:
            return f"After repair: still {len(self.after_violations)} violation(s): {self.after_violations[0].message}"
        return "After repair: check_pairing finds no violation; the transcript can be sent."

    def _before_lines(self) -> list[str]:
        if self.violations is None:
            return []
        if not self.violations:
            return ["Before repair: valid."]
        return [f"Before repair: {len(self.violations)} violation(s):"] + [f"  ✗ {v.message}" for v in self.violations]

    def to_text(self) -> str:
        lines = [self.title, *self._before_lines(), self.report.summary(), self._after_line()]
        return "\n".join(lines)

    def _html_body(self) -> str:
        parts = [f"<h3>{esc(self.title)}</h3>"]
        if self.violations:
            parts.append(f"<div>Before repair: {len(self.violations)} violation(s)</div>")
            parts += [f'<div class="tav-violation"><code>{esc(v.message)}</code></div>' for v in self.violations]
        elif self.violations is not None:
            parts.append('<div class="tav-ok">Before repair: valid.</div>')
        if not self.report.actions:
            parts.append(f"<div>{esc(self.report.summary())}</div>")
        else:
            parts.append("<table><tr><th>where</th><th>change</th><th>tool_use id</th><th>why</th></tr>")
            for action in self.report.actions:
                where = f"messages.{action.message_index}"
                if action.original_index is None:
                    where += " (inserted)"
                elif action.original_index != action.message_index:
                    where += f" (input messages.{action.original_index})"
                parts.append(f'<tr data-kind="{esc(action.kind)}"><td><code>{esc(where)}</code></td>'
                             f"<td>{esc(action.kind)}</td><td><code>{esc(action.tool_use_id or '')}</code></td>"
                             f"<td>{esc(action.explanation)}</td></tr>")
            parts.append("</table>")
        ok = not self.after_violations and self.after_problem is None
        parts.append(f'<div class="{"tav-ok" if ok else "tav-bad"}">{esc(self._after_line())}</div>')
        return "".join(parts)
