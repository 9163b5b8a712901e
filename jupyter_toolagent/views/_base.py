"""What every teaching/debugging view shares: both display forms, escaping, bounding, style.

A view is a plain object with a text form and an HTML form. Jupyter picks the HTML through
`_repr_mimebundle_`; a terminal, a log, `print(view)` or a saved notebook opened without
JavaScript still get the text. Nothing here imports IPython: the views are used by the magics,
but also from scripts and tests.

The HTML is meant to sit inside JupyterLab or the classic notebook in a light or dark theme, so
colours come from the front end's CSS variables (``--jp-…``) with fallbacks for other hosts,
and highlight backgrounds mix a theme colour with transparency instead of fixing a light tint
that would be unreadable on a dark background.
"""

from __future__ import annotations

import html
from abc import ABC, abstractmethod
from typing import Any

from ..core.results import truncate_middle

__all__ = ["View", "cut_middle", "esc", "STYLESHEET", "ROOT_CLASS"]

ROOT_CLASS = "tav"


def esc(value: Any) -> str:
    """HTML-escape anything (quotes too: the result may go into an attribute)."""
    return html.escape(str(value), quote=True)


def cut_middle(text: str, limit: int | None) -> str:
    """``text`` if it fits in ``limit`` characters, else its head and tail with a count between.

    The middle goes because both ends carry meaning: a traceback's last line, a file's header.
    The one algorithm is `core.results.truncate_middle`; for people the marker is inline and
    not counted, so a column of ``limit`` characters shows ``limit`` characters of text.
    """
    if limit is None:
        return text
    return truncate_middle(text, limit, note=_inline_cut_note, note_in_limit=False)


def _inline_cut_note(cut: int) -> str:
    return f"… [{cut} characters cut] …"


def _mix(color: str, fallback: str, percent: int) -> str:
    return f"color-mix(in srgb, var({color}, {fallback}) {percent}%, transparent)"


STYLESHEET = f"""
.{ROOT_CLASS} {{
  font-family: var(--jp-ui-font-family, system-ui, sans-serif);
  font-size: var(--jp-ui-font-size1, 13px);
  color: var(--jp-ui-font-color1, #1f1f1f);
  line-height: 1.4;
}}
.{ROOT_CLASS} h3, .{ROOT_CLASS} h4 {{ margin: 0.4em 0 0.2em; font-weight: 600; }}
.{ROOT_CLASS} h3 {{ font-size: 1.1em; }}
.{ROOT_CLASS} h4 {{ font-size: 1em; }}
.{ROOT_CLASS} pre, .{ROOT_CLASS} code, .{ROOT_CLASS} .tav-mono {{
  font-family: var(--jp-code-font-family, ui-monospace, monospace);
  font-size: var(--jp-code-font-size, 12px);
}}
.{ROOT_CLASS} pre {{
  margin: 0.2em 0; padding: 0.3em 0.5em; white-space: pre-wrap; word-break: break-word;
  background: var(--jp-layout-color2, rgba(127, 127, 127, 0.08));
  border-radius: 3px; max-height: 40em; overflow: auto;
}}
.{ROOT_CLASS} .tav-muted {{ color: var(--jp-ui-font-color2, #616161); }}
.{ROOT_CLASS} .tav-ok {{ color: var(--jp-success-color1, #2e7d32); }}
.{ROOT_CLASS} .tav-bad {{ color: var(--jp-error-color1, #c62828); font-weight: 600; }}
.{ROOT_CLASS} .tav-warn {{ color: var(--jp-warn-color1, #ef6c00); }}
.{ROOT_CLASS} .tav-message {{
  border-left: 3px solid var(--jp-border-color1, #bdbdbd); margin: 0.4em 0; padding: 0.1em 0.6em;
}}
.{ROOT_CLASS} .tav-message.tav-role-assistant {{ border-left-color: var(--jp-brand-color1, #1976d2); }}
.{ROOT_CLASS} .tav-message.tav-has-violation, .{ROOT_CLASS} .tav-violation {{
  background: {_mix("--jp-error-color1", "#c62828", 12)};
}}
.{ROOT_CLASS} .tav-violation {{ padding: 0.2em 0.5em; border-radius: 3px; margin: 0.2em 0; }}
.{ROOT_CLASS} .tav-block {{ margin: 0.2em 0; }}
.{ROOT_CLASS} .tav-pair {{
  display: grid; grid-template-columns: 1fr 1fr; gap: 0.5em; margin: 0.3em 0;
  padding: 0.3em; border: 1px solid var(--jp-border-color2, #e0e0e0); border-radius: 4px;
}}
.{ROOT_CLASS} .tav-pair.tav-pair-error {{ background: {_mix("--jp-warn-color1", "#ef6c00", 10)}; }}
.{ROOT_CLASS} .tav-pair.tav-pair-broken {{ background: {_mix("--jp-error-color1", "#c62828", 12)}; }}
.{ROOT_CLASS} .tav-cache {{ background: {_mix("--jp-brand-color1", "#1976d2", 16)}; }}
.{ROOT_CLASS} .tav-cache-mark {{ color: var(--jp-brand-color1, #1976d2); font-weight: 600; }}
.{ROOT_CLASS} .tav-diff-add {{ background: {_mix("--jp-success-color1", "#2e7d32", 16)}; }}
.{ROOT_CLASS} .tav-diff-del {{ background: {_mix("--jp-error-color1", "#c62828", 16)}; }}
.{ROOT_CLASS} table {{ border-collapse: collapse; margin: 0.3em 0; }}
.{ROOT_CLASS} th, .{ROOT_CLASS} td {{
  text-align: left; padding: 0.15em 0.6em; border-bottom: 1px solid var(--jp-border-color2, #e0e0e0);
  vertical-align: top;
}}
.{ROOT_CLASS} details > summary {{ cursor: pointer; }}
.{ROOT_CLASS} svg text {{ fill: var(--jp-ui-font-color1, #1f1f1f); font-size: 11px; }}
.{ROOT_CLASS} svg .tav-seg-queued {{ fill: var(--jp-layout-color3, #bdbdbd); }}
.{ROOT_CLASS} svg .tav-seg-waiting {{ fill: var(--jp-warn-color2, #ffb74d); }}
.{ROOT_CLASS} svg .tav-status-done {{ fill: var(--jp-success-color1, #2e7d32); }}
.{ROOT_CLASS} svg .tav-status-error {{ fill: var(--jp-error-color1, #c62828); }}
.{ROOT_CLASS} svg .tav-status-denied {{ fill: var(--jp-warn-color1, #ef6c00); }}
.{ROOT_CLASS} svg .tav-status-invalid {{ fill: var(--jp-error-color2, #e57373); }}
.{ROOT_CLASS} svg .tav-status-cancelled, .{ROOT_CLASS} svg .tav-status-interrupted {{
  fill: var(--jp-ui-font-color3, #9e9e9e);
}}
.{ROOT_CLASS} svg .tav-status-running {{ fill: var(--jp-brand-color1, #1976d2); }}
.{ROOT_CLASS} svg .tav-group-band {{ fill: {_mix("--jp-brand-color1", "#1976d2", 7)}; }}
"""


class View(ABC):
    """Base of the views: `to_text` and `to_html` are the two renderings of the same content."""

    title: str = ""

    @abstractmethod
    def to_text(self) -> str:
        """Plain text (no markup at all): terminals, logs, ``text/plain``."""

    @abstractmethod
    def _html_body(self) -> str:
        """The view's HTML without the stylesheet wrapper."""

    def to_html(self) -> str:
        """A self-contained HTML fragment: the stylesheet and the view, under one root element."""
        return f'<div class="{ROOT_CLASS}"><style>{STYLESHEET}</style>{self._html_body()}</div>'

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": self.to_text(), "text/html": self.to_html()}

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        first = self.to_text().split("\n", 1)[0]
        return f"<{type(self).__name__}: {first}>"
