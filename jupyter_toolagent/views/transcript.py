"""`%agent transcript`: the conversation as API messages, each tool_use beside its tool_result.

What a person debugging pairing needs to see at a glance: for every call, its id, where it sits
(``messages.N.content.K``), its tool and input, and the one result that answers it (where,
``is_error``, a short preview) — or that none does. Violations appear on the message they name,
in the API's exact words, so the view and the API's 400 agree. A result the API would not
count (after a text block, a second result) is flagged as such even when the rest is valid.
Thinking is folded (it is long and rarely the point); every shown value is bounded.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ..core.pairing.check import PairingViolation
from ..core.pairing.normalize import normalize_messages_for_api
from ._base import View, cut_middle, esc
from ._json import format_json
from ._pairs import PairIndex, ResultInfo, ToolPair, index_pairs

__all__ = ["TranscriptView", "content_preview"]


def content_preview(content: Any) -> str:
    """A tool_result's content as one string: text as is, other blocks as ``[type]``."""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        parts = []
        for item in content:
            if isinstance(item, Mapping) and item.get("type") == "text":
                parts.append(str(item.get("text", "")))
            elif isinstance(item, Mapping) and item.get("type") == "image":
                source = item.get("source") or {}
                parts.append(f"[image {source.get('media_type', '')}]".replace(" ]", "]"))
            elif isinstance(item, Mapping):
                parts.append(f"[{item.get('type')}]")
            else:
                parts.append(repr(item))
        return "\n".join(parts)
    if content is None:
        return ""
    return json.dumps(content, ensure_ascii=False, default=repr)


def _one_line(text: str, limit: int) -> str:
    return cut_middle(text, limit).replace("\n", "⏎ ")


def _is_error_text(flag: bool) -> str:
    return f"is_error: {'true' if flag else 'false'}"


class TranscriptView(View):
    """API messages with each tool_use visually paired to its tool_result (SPEC §9).

    ``violations``: the result of `check_pairing` for these messages (computed when omitted).
    ``preview_chars`` bounds the one-line previews beside a call; ``max_chars`` bounds any
    single shown value (text, input, result). ``note`` is a line shown under the title.
    """

    def __init__(
        self,
        messages: Sequence[Any],
        *,
        violations: Sequence[PairingViolation] | None = None,
        preview_chars: int = 300,
        max_chars: int = 2000,
        title: str = "Transcript",
        note: str | None = None,
        boundaries: Sequence[tuple[int, str]] = (),
    ) -> None:
        self.boundaries = dict(boundaries)
        """Message index → the compaction line shown above it (SPEC §14)."""
        self.messages = list(messages)
        self.preview_chars = preview_chars
        self.max_chars = max_chars
        self.title = title
        self.note = note
        self._index: PairIndex = index_pairs(self.messages, violations)
        self.violations: list[PairingViolation] = list(self._index.violations)

    @classmethod
    def for_session(cls, session: Any, **options: Any) -> "TranscriptView":
        """The session's transcript as it is sent (normalized), so the numbers match
        ``session.check_pairing()``; a transcript that cannot be normalized is shown as stored."""
        stored = list(getattr(session, "messages", []) or [])
        try:
            sent = normalize_messages_for_api(stored)
        except Exception as exc:
            options.setdefault("note", f"The stored transcript is malformed ({exc}); it is shown as stored.")
            return cls(stored, **options)
        if sent != stored:
            options.setdefault("note", "Shown as sent to the API (normalized: UI-only items dropped, consecutive "
                                       "messages merged), so message numbers match check_pairing.")
        options.setdefault("boundaries", compaction_boundaries(session, stored))
        return cls(sent, **options)

    @property
    def pairs(self) -> list[ToolPair]:
        return list(self._index.pairs)

    # --- summary ------------------------------------------------------------------------------
    def _status_line(self) -> str:
        index = self._index
        counts = f"{len(self.messages)} message(s), {len(index.pairs)} tool call(s)"
        if index.problems or index.message_problems:
            return f"{counts}: cannot be fully checked (see the problems below)"
        if not self.violations:
            return f"{counts}: valid (check_pairing finds no violation)"
        return (f"{counts}: {len(self.violations)} violation(s); the API would answer HTTP 400 "
                "invalid_request_error with the first")

    def _problems(self) -> list[str]:
        problems = list(self._index.problems)
        problems += [f"messages.{n} cannot be read: {why}" for n, why in sorted(self._index.message_problems.items())]
        return problems

    # --- text ---------------------------------------------------------------------------------
    def to_text(self) -> str:
        lines = [f"{self.title} — {self._status_line()}"]
        if self.note:
            lines.append(self.note)
        lines += [f"! {p}" for p in self._problems()]
        for v in self._index.stray_violations():
            lines.append(f"  ✗ {v.message}")
        for n, message in enumerate(self.messages):
            lines.append("")
            if n in self.boundaries:
                lines += [f"──── {line}" if i == 0 else f"     {line}"
                          for i, line in enumerate(self.boundaries[n].splitlines())]
                lines.append("")
            lines += self._message_text(n, message)
        return "\n".join(lines)

    def _message_text(self, n: int, message: Any) -> list[str]:
        role = message.get("role") if isinstance(message, Mapping) else type(message).__name__
        lines = [f"messages.{n} · {role}"]
        lines += [f"  ✗ {v.message}" for v in self._index.violations_of_message(n)]
        blocks = self._index.blocks[n]
        if blocks is None:
            lines.append("  (shown as stored) " + cut_middle(repr(message), self.max_chars))
            return lines
        for k, block in enumerate(blocks):
            lines += ["  " + line for line in self._block_text(n, k, block)]
            lines += [f"    ✗ {v.message}" for v in self._index.violations_of_block(n, k)]
        return lines

    def _block_text(self, n: int, k: int, block: Mapping[str, Any]) -> list[str]:
        kind = block.get("type")
        if kind == "text":
            return [f"[{k}] text: " + cut_middle(str(block.get("text", "")), self.max_chars)]
        if kind in ("thinking", "redacted_thinking"):
            size = len(str(block.get("thinking", block.get("data", ""))))
            return [f"[{k}] {kind} ({size} characters, folded)"]
        if kind == "tool_use" and (n, k) in self._index.use_at:
            return self._use_text(k, self._index.use_at[(n, k)])
        if kind == "tool_result" and (n, k) in self._index.result_at:
            return self._result_text(k, self._index.result_at[(n, k)])
        return [f"[{k}] {kind}: " + _one_line(json.dumps(block, ensure_ascii=False, default=repr), self.preview_chars)]

    def _use_text(self, k: int, pair: ToolPair) -> list[str]:
        shown_input = _one_line(json.dumps(pair.input, ensure_ascii=False, default=repr), self.max_chars)
        lines = [f"[{k}] tool_use {pair.tool_use_id} {pair.name} {shown_input}"]
        result = pair.result
        if result is not None:
            preview = _one_line(content_preview(result.block.get("content")), self.preview_chars)
            lines.append(f"    → result {result.path} · {_is_error_text(result.is_error)} · {preview}")
        else:
            lines.append("    → NO RESULT: the API counts no tool_result for this id")
        for other in pair.results:
            if not other.counted:
                lines.append(f"    → {other.path} is {other.note}")
        return lines

    def _result_text(self, k: int, info: ResultInfo) -> list[str]:
        where = f"← tool_use {info.pair.path} ({info.pair.name})" if info.pair is not None else f"({info.note})"
        lines = [f"[{k}] tool_result {info.tool_use_id} {where} · {_is_error_text(info.is_error)}"]
        if info.pair is not None and not info.counted:
            lines.append(f"    ! {info.note}")
        lines.append("    " + _one_line(content_preview(info.block.get("content")), self.preview_chars))
        return lines

    # --- html ---------------------------------------------------------------------------------
    def _html_body(self) -> str:
        status_class = "tav-ok" if not self.violations and not self._problems() else "tav-bad"
        parts = [f"<h3>{esc(self.title)} <span class=\"{status_class}\">— {esc(self._status_line())}</span></h3>"]
        if self.note:
            parts.append(f'<div class="tav-muted">{esc(self.note)}</div>')
        parts += [f'<div class="tav-violation">{esc(p)}</div>' for p in self._problems()]
        parts += [self._violation_html(v) for v in self._index.stray_violations()]
        for n, m in enumerate(self.messages):
            if n in self.boundaries:
                parts.append(f'<div class="tav-compaction" data-boundary-index="{n}" style="border-top: 2px dashed '
                             f'#b58900; margin: 6px 0; padding: 4px;"><pre>{esc(self.boundaries[n])}</pre></div>')
            parts.append(self._message_html(n, m))
        return "".join(parts)

    @staticmethod
    def _violation_html(v: PairingViolation) -> str:
        return (f'<div class="tav-violation" data-kind="{esc(v.kind)}"><span class="tav-bad">✗ API error:</span> '
                f'<code>{esc(v.message)}</code></div>')

    def _message_html(self, n: int, message: Any) -> str:
        role = message.get("role") if isinstance(message, Mapping) else type(message).__name__
        broken = n in self._index.by_message or n in self._index.message_problems
        classes = f"tav-message tav-role-{esc(role)}" + (" tav-has-violation" if broken else "")
        parts = [f'<div class="{classes}" data-message-index="{n}"><h4>messages.{n} · {esc(role)}</h4>']
        parts += [self._violation_html(v) for v in self._index.violations_of_message(n)]
        blocks = self._index.blocks[n]
        if blocks is None:
            parts.append(f"<div>(shown as stored)</div><pre>{esc(cut_middle(repr(message), self.max_chars))}</pre>")
        else:
            for k, block in enumerate(blocks):
                parts.append(self._block_html(n, k, block))
                parts += [self._violation_html(v) for v in self._index.violations_of_block(n, k)]
        parts.append("</div>")
        return "".join(parts)

    def _block_html(self, n: int, k: int, block: Mapping[str, Any]) -> str:
        kind = block.get("type")
        label = f'<span class="tav-muted">[{k}] {esc(kind)}</span>'
        if kind == "text":
            return f'<div class="tav-block">{label}<pre>{esc(cut_middle(str(block.get("text", "")), self.max_chars))}</pre></div>'
        if kind in ("thinking", "redacted_thinking"):
            body = str(block.get("thinking", block.get("data", "")))
            return (f'<details class="tav-block"><summary>{label} ({len(body)} characters, folded)</summary>'
                    f"<pre>{esc(cut_middle(body, self.max_chars))}</pre></details>")
        if kind == "tool_use" and (n, k) in self._index.use_at:
            return self._pair_html(k, self._index.use_at[(n, k)])
        if kind == "tool_result" and (n, k) in self._index.result_at:
            return self._result_html(k, self._index.result_at[(n, k)])
        shown = format_json(dict(block), max_string=self.preview_chars, html=True)
        return f'<div class="tav-block">{label}<pre>{shown}</pre></div>'

    def _result_detail_html(self, info: ResultInfo) -> str:
        preview = content_preview(info.block.get("content"))
        short = esc(_one_line(preview, self.preview_chars))
        if len(preview) <= self.preview_chars and "\n" not in preview:
            return f"<code>{short}</code>"
        return (f"<details><summary><code>{short}</code></summary>"
                f"<pre>{esc(cut_middle(preview, self.max_chars))}</pre></details>")

    def _pair_html(self, k: int, pair: ToolPair) -> str:
        result = pair.result
        state = "broken" if result is None else ("error" if result.is_error else "ok")
        shown_input = format_json(pair.input, max_string=self.max_chars, html=True)
        left = (f'<div><span class="tav-muted">[{k}] tool_use</span> <code>{esc(pair.tool_use_id)}</code> '
                f"<b>{esc(pair.name)}</b> <span class=\"tav-muted\">{esc(pair.path)}</span>"
                f"<pre>{shown_input}</pre></div>")
        if result is None:
            right = '<div><span class="tav-bad">no tool_result is counted for this id</span>'
        else:
            error_class = "tav-bad" if result.is_error else "tav-ok"
            right = (f'<div><span class="tav-muted">tool_result</span> <span class="tav-muted">{esc(result.path)}</span> '
                     f'<span class="{error_class}">{esc(_is_error_text(result.is_error))}</span><br>'
                     f"{self._result_detail_html(result)}")
        for other in pair.results:
            if not other.counted:
                right += f'<div class="tav-warn">{esc(other.path)} is {esc(other.note)}</div>'
        right += "</div>"
        return (f'<div class="tav-pair tav-pair-{state}" data-tool-use-id="{esc(pair.tool_use_id)}">'
                f"{left}{right}</div>")

    def _result_html(self, k: int, info: ResultInfo) -> str:
        if info.pair is not None:
            where = f"← tool_use {esc(info.pair.path)} ({esc(info.pair.name)})"
        else:
            where = f'<span class="tav-bad">{esc(info.note)}</span>'
        flag = ""
        if info.pair is not None and not info.counted:
            flag = f'<div class="tav-warn">{esc(info.note)}</div>'
        error_class = "tav-bad" if info.is_error else "tav-ok"
        return (f'<div class="tav-block" data-tool-use-id="{esc(info.tool_use_id)}"><span class="tav-muted">[{k}] '
                f"tool_result</span> <code>{esc(info.tool_use_id)}</code> {where} "
                f'<span class="{error_class}">{esc(_is_error_text(info.is_error))}</span>{flag}<br>'
                f"{self._result_detail_html(info)}</div>")


def compaction_boundaries(session: Any, stored: Sequence[Any]) -> list[tuple[int, str]]:
    """Where each compaction of ``session`` cut (as indices of the normalized transcript) and
    what it did: the summary that replaces the messages above, and the results cleared."""
    context = getattr(session, "context", None)
    out: list[tuple[int, str]] = []
    for number, compaction in enumerate(getattr(context, "compactions", None) or [], start=1):
        if not compaction.boundary and not compaction.cleared:
            continue
        try:
            index = len(normalize_messages_for_api(stored[: compaction.boundary]))
        except Exception:
            index = compaction.boundary
        when = time.strftime("%H:%M:%S", time.localtime(compaction.at)) if compaction.at else ""
        lines = [f"compaction {number} ({compaction.reason or 'manual'}{', ' + when if when else ''}): "
                 f"about {compaction.tokens_before:,} → {compaction.tokens_after:,} tokens"]
        if compaction.summary is not None and compaction.boundary:
            lines.append(f"messages above this line are sent as one summary; the last {compaction.kept_turns} "
                         "turn(s) from here on are sent as they are")
            lines.append("summary: " + _one_line(compaction.summary, 600))
        if compaction.cleared:
            ids = sorted(compaction.cleared)
            lines.append(f"{len(ids)} tool result(s) cleared from what is sent (full text still here, readable "
                         f"with ReadToolOutput): {', '.join(ids[:8])}{' …' if len(ids) > 8 else ''}")
        out.append((min(index, len(stored)), "\n".join(lines)))
    merged: dict[int, str] = {}
    for index, text in out:
        merged[index] = merged[index] + "\n" + text if index in merged else text
    return sorted(merged.items())
