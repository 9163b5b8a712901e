"""The live widget tree of a run: status line with a Stop button, the timeline, the footer.

Each timeline item (a text block, a tool card, a notice) gets its widgets once, when it first
appears; `sync` then writes only the values of the items named dirty. Items are kept in dicts
by key — never found by position in ``children``. A sub-agent's items go into the nested
timeline of its ``Agent`` card, at any depth.
"""

from __future__ import annotations

from typing import Callable, Iterable

import ipywidgets as widgets

from . import static_render as sr
from .cards import ToolCardWidget, set_value
from .markdown_text import MarkdownStream
from .view_state import RunViewState


class RunWidgets:
    """All widgets of one run. ``on_stop`` is called (from the comm handler) on Stop."""

    def __init__(self, on_stop: Callable[[], None]) -> None:
        self.style = widgets.HTML(sr.STYLE, layout=widgets.Layout(display="none"))
        self.status = widgets.HTML()
        self.stop_button = widgets.Button(description="Stop", icon="stop", button_style="warning", tooltip="Stop the agent run")
        self.stop_button.add_class(f"{sr.PREFIX}-stop")
        self.stop_button.on_click(lambda _b: on_stop())
        self.header = widgets.HBox([self.status, self.stop_button], layout=widgets.Layout(align_items="center"))
        self.timeline = widgets.VBox()
        self.footer = widgets.HTML()
        self.root = widgets.VBox([self.style, self.header, self.timeline, self.footer])
        self.root.add_class(f"{sr.PREFIX}-run")
        self.texts: dict[str, widgets.HTML] = {}
        self.text_streams: dict[str, MarkdownStream] = {}
        self.cards: dict[str, ToolCardWidget] = {}
        self.notices: dict[str, widgets.HTML] = {}
        self._shown_items = 0

    def sync(self, state: RunViewState, dirty: Iterable[str]) -> int:
        """Apply the dirty parts of ``state``; return how many widget values changed."""
        dirty = set(dirty)
        changed = 0
        if "items" in dirty or len(state.items) != self._shown_items:
            changed += self._add_new_items(state)
        if any(key.startswith("nested:") for key in dirty):
            changed += self._add_new_nested_items(state)
        for key in dirty:
            kind, _, ident = key.partition(":")
            if kind == "text" and ident in self.texts:
                changed += set_value(self.texts[ident], sr.text_html(state.texts[ident], self.text_streams[ident]))
            elif kind == "card" and ident in self.cards:
                changed += self.cards[ident].update(state.cards[ident], state.wall_offset)
            elif kind == "notice" and ident in self.notices:
                changed += set_value(self.notices[ident], sr.notice_html(state.notices[ident]))
        if "header" in dirty:
            changed += set_value(self.status, sr.header_html(state))
        if "footer" in dirty:
            changed += set_value(self.footer, sr.footer_html(state))
        return changed

    def _build_item(self, state: RunViewState, kind: str, key: str) -> widgets.Widget:
        if kind == "text":
            stream = self.text_streams[key] = MarkdownStream()
            widget = self.texts[key] = widgets.HTML(sr.text_html(state.texts[key], stream))
            return widget
        if kind == "card":
            card = self.cards[key] = ToolCardWidget(state.cards[key])
            return card.box
        widget = self.notices[key] = widgets.HTML(sr.notice_html(state.notices[key]))
        return widget

    def _add_new_items(self, state: RunViewState) -> int:
        new = [self._build_item(state, kind, key) for kind, key in state.items[self._shown_items :]]
        self._shown_items = len(state.items)
        if new:
            self.timeline.children = self.timeline.children + tuple(new)
        return len(new) + (self._add_new_nested_items(state) if new else 0)

    def _add_new_nested_items(self, state: RunViewState) -> int:
        """Give the sub-agents' new items their widgets, inside their ``Agent`` cards; repeated
        until nothing is added, since an item may be an ``Agent`` card of the next level."""
        added = 0
        grew = True
        while grew:
            grew = False
            for key, card_widget in list(self.cards.items()):
                nested = state.cards[key].nested
                if nested is None or len(nested.items) <= card_widget.nested_shown:
                    continue
                new = [self._build_item(state, kind, k) for kind, k in nested.items[card_widget.nested_shown :]]
                card_widget.add_nested(new)
                added += len(new)
                grew = True
        return added

    def card(self, tool_use_id: str) -> ToolCardWidget | None:
        return self.cards.get(tool_use_id)

    def stopping(self) -> None:
        self.stop_button.disabled = True
        self.stop_button.description = "Stopping…"

    def finished(self) -> None:
        """End state: no Stop button once there is nothing to stop."""
        self.stop_button.disabled = True
        self.stop_button.layout.display = "none"
