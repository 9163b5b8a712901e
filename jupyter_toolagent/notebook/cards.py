"""The live card of one tool call: a fixed set of widgets whose values follow `CardState`.

Built once when the call appears; afterwards `update` only assigns ``.value``s (and skips
assignments that would not change anything, since each one is a message to the browser). The
approval panel, when the call needs one, goes into a slot made for it, so nothing is ever
looked up by its position in ``children``. An ``Agent`` call's card has a nested timeline
(`nested_items`) that the run's widgets fill with the sub-agent's own text and tool cards.
"""

from __future__ import annotations

import ipywidgets as widgets

from . import static_render as sr
from .view_state import CardState


def set_value(widget: widgets.Widget, value: object) -> bool:
    """Assign only on change; return whether a message was sent."""
    if getattr(widget, "value") == value:
        return False
    widget.value = value
    return True


class ToolCardWidget:
    """Widgets of one card, with a named reference to each part."""

    def __init__(self, card: CardState) -> None:
        self.tool_use_id = card.tool_use_id
        self.key = card.key
        self.header = widgets.HTML()
        self.input = widgets.HTML()
        self.progress_bar = widgets.FloatProgress(min=0.0, max=1.0, value=0.0, layout=widgets.Layout(display="none", width="60%"))
        self.progress_text = widgets.HTML()
        self.approval_slot = widgets.VBox()
        self.decision = widgets.HTML()
        self.result = widgets.HTML()
        self.nested_header = widgets.HTML()
        self.nested_items = widgets.VBox()
        """The sub-agent's timeline (text blocks, tool cards), for an ``Agent`` call."""
        self.nested_box = widgets.VBox([self.nested_header, self.nested_items], layout=widgets.Layout(display="none"))
        self.nested_box.add_class(f"{sr.PREFIX}-nested")
        self.nested_shown = 0
        """How many of the sub-agent's items have widgets in `nested_items`."""
        self.box = widgets.VBox(
            [self.header, self.input, self.progress_bar, self.progress_text, self.nested_box, self.approval_slot,
             self.decision, self.result]
        )
        self.box.add_class(f"{sr.PREFIX}-card")
        self.box.add_class(f"{sr.PREFIX}-card-{sr.css_id(card.tool_use_id)}")
        self._status_class: str | None = None
        self._has_approval = False
        self.update(card)

    def add_nested(self, items: list[widgets.Widget]) -> None:
        """Append widgets of the sub-agent's new items (built once by the run's widgets)."""
        if items:
            self.nested_items.children = self.nested_items.children + tuple(items)
            self.nested_shown += len(items)

    def attach_approval(self, panel_box: widgets.Widget) -> None:
        """Show an approval panel inside this card (once per call)."""
        if not self._has_approval:
            self.approval_slot.children = (panel_box,)
            self._has_approval = True

    def update(self, card: CardState, wall_offset: float = 0.0) -> int:
        """Bring the widgets in line with ``card``; return how many values changed."""
        changed = 0
        status_class = f"{sr.PREFIX}-s-{card.status}"
        if status_class != self._status_class:
            if self._status_class is not None:
                self.box.remove_class(self._status_class)
            self.box.add_class(status_class)
            self._status_class = status_class
            changed += 1
        changed += set_value(self.header, sr.card_header_html(card))
        changed += set_value(self.input, sr.input_html(card.input))
        show_bar = card.progress_fraction is not None and not card.finished
        display = None if show_bar else "none"
        if self.progress_bar.layout.display != display:
            self.progress_bar.layout.display = display
            changed += 1
        if card.progress_fraction is not None:
            changed += set_value(self.progress_bar, round(card.progress_fraction, 3))
        # a sub-agent's text is drawn in full in the nested timeline; its last line is not repeated
        message = "" if card.finished or card.nested is not None else sr._esc(card.progress_message)
        changed += set_value(self.progress_text, f'<span class="{sr.PREFIX}-muted">{message}</span>' if message else "")
        if card.nested is not None:
            if self.nested_box.layout.display is not None:
                self.nested_box.layout.display = None
                changed += 1
            changed += set_value(self.nested_header, sr.nested_header_html(card))
        # the approval panel shows the reason itself; once answered the decision line says it all
        changed += set_value(self.decision, sr.decision_html(card.decision, wall_offset))
        changed += set_value(self.result, sr.result_html(card))
        return changed
