"""`RunDisplay`: what one ``%%agent`` cell shows while its run goes on, and after.

Events are folded into a `RunViewState` at once (cheap, pure); the widgets are brought in
line with it at a bounded rate (`Throttle`), except for changes a person must see without
delay — a new card, an ask, an end state. With no front end that can click, nothing is drawn
live and `finish` displays a static HTML + text rendering, which is what a notebook executed
by nbclient keeps.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Callable

from ..core.abort import AbortSignal
from ..core.events import AgentEvent, PermissionAskedEvent
from ..core.permission_types import ApprovalRequest, ApprovalResponse, Approver
from . import static_render as sr
from .approval import ApprovalPanel, WidgetApprover, deny_without_front_end
from .throttle import Throttle
from .view_state import CardState, RunViewState, apply_event, find_card, finish_run, record_ask, record_user_decision

DEFAULT_MAX_UPDATES_PER_SECOND = 15.0
PENDING_PANEL_SECONDS = 1.0


class RunDisplay:
    """The live (or static) view of one run.

    ``clock`` drives throttling and durations (swap it in tests); ``approval_timeout`` (seconds,
    None = no limit) ends an unanswered ask with a deny.
    """

    def __init__(
        self,
        abort: AbortSignal,
        *,
        interactive: bool,
        session: Any = None,
        clock: Callable[[], float] = time.monotonic,
        max_updates_per_second: float = DEFAULT_MAX_UPDATES_PER_SECOND,
        approval_timeout: float | None = None,
    ) -> None:
        self.abort = abort
        self.interactive = interactive
        self.session = session
        self.clock = clock
        self.state = RunViewState(started_at=clock(), wall_offset=time.time() - clock())
        self.throttle = Throttle(max_updates_per_second, clock=clock)
        self.updates = 0
        """Display updates emitted (widget syncs that changed something)."""
        self._dirty: set[str] = set()
        self._trailing: asyncio.TimerHandle | None = None
        self._display_id: str | None = None
        self._finished = False
        self._pending_panels: list[tuple[ApprovalRequest, ApprovalPanel]] = []
        """Sub-agents' approval panels waiting for their nested card to be drawn."""
        self.widgets = None
        self.approver: Approver
        if interactive:
            from .widgets import RunWidgets

            self.widgets = RunWidgets(on_stop=self.stop)
            self.widgets.sync(self.state, {"header", "footer"})
            self._approver: WidgetApprover | None = WidgetApprover(
                abort, mount=self._mount_approval, on_answer=self._record_answer, timeout=approval_timeout
            )
            self.approver = self._approver
        else:
            self._approver = None
            self.approver = deny_without_front_end

    # --- showing -------------------------------------------------------------------------
    def show(self) -> None:
        """Display the live view in the running cell (interactive only)."""
        if not self.interactive or self.widgets is None or self._display_id is not None:
            return
        from IPython.display import display

        handle = display(self.widgets.root, display_id=True)
        self._display_id = getattr(handle, "display_id", None) or ""

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return sr.StaticRunView(self.state)._repr_mimebundle_(include, exclude)

    # --- events ----------------------------------------------------------------------------
    def handle(self, event: AgentEvent) -> None:
        """Fold one event in; refresh now if it is urgent or the throttle allows."""
        update = apply_event(self.state, event)
        if self._pending_panels:
            self._dirty |= update.dirty
            self._mount_pending()
        if not update.dirty:
            return
        self._dirty |= update.dirty
        if update.urgent:
            self.throttle.mark_flushed()
            self._flush()
        elif self.throttle.note():
            self._flush()
        else:
            self._schedule_trailing_flush()

    def stop(self) -> None:
        """The Stop button: abort the run (thread-safe) and say so."""
        self.abort.abort("stopped by user")
        self.state.stop_requested = True
        if self.widgets is not None:
            self.widgets.stopping()
        self._dirty.add("header")

    def finish(self, error: BaseException | None = None) -> None:
        """Explicit end states; the final state always reaches the screen.

        If no `RunFinishedEvent` came (the consuming cell raised), the run is marked
        interrupted (KeyboardInterrupt / cancellation) or failed.
        """
        if self._finished:
            return
        self._finished = True
        self._pending_panels = []
        if self.state.finish_reason is None:
            cancelled = error is None or isinstance(error, (KeyboardInterrupt, asyncio.CancelledError)) or self.abort.aborted
            reason = "aborted" if cancelled else "error"
            message = None if cancelled else f"{type(error).__name__}: {error}"
            self._dirty |= finish_run(self.state, reason=reason, error=message, at=self.clock()).dirty
        self._dirty |= {"header", "footer"}
        self._cancel_trailing()
        for panel in (self._approver.panels.values() if self._approver is not None else ()):
            panel.disable()
        if self.widgets is not None:
            self._flush()
            self.widgets.finished()
            self._publish_final_bundle()
        else:
            self.updates += 1
            from IPython.display import display

            display(sr.StaticRunView(self.state))

    # --- approvals -------------------------------------------------------------------------
    def _mount_approval(self, request: ApprovalRequest, panel: ApprovalPanel) -> None:
        """The panel goes into the asking call's card, wherever it is drawn.

        Events reach the view through the run's event stream, so the approver can be called
        before the view has seen the call. The cell's own call then gets its card here; a
        sub-agent's call must be drawn inside its ``Agent`` card, which only its events name:
        its panel waits for the card (`_mount_pending`, on each event), and after
        `PENDING_PANEL_SECONDS` without one is shown in a card of its own rather than never."""
        card = find_card(self.state, request.tool_use_id, request.agent)
        if card is None and request.agent:
            self._pending_panels.append((request, panel))
            self._schedule_pending_fallback()
            return
        self._attach(request, panel, card)

    def _attach(self, request: ApprovalRequest, panel: ApprovalPanel, card: CardState | None) -> None:
        if card is None:
            asked = PermissionAskedEvent(
                tool_use_id=request.tool_use_id,
                name=request.tool_name,
                input=request.input,
                reason=request.reason,
                suggested_rule=request.suggested_rule,
                at=self.clock(),
            )
            self._dirty |= apply_event(self.state, asked).dirty
            card = find_card(self.state, request.tool_use_id)
            if card is not None and request.agent:
                card.agent = request.agent  # drawn on its own: its title still says who asks
        else:
            self._dirty |= record_ask(self.state, card, reason=request.reason,
                                      suggested_rule=request.suggested_rule, at=self.clock()).dirty
        self._flush()
        widget = self.widgets.card(card.key) if self.widgets is not None and card is not None else None
        if widget is not None:
            widget.attach_approval(panel.box)

    def _mount_pending(self, *, force: bool = False) -> None:
        waiting = []
        for request, panel in self._pending_panels:
            card = find_card(self.state, request.tool_use_id, request.agent)
            if card is not None or force:
                self._attach(request, panel, card)
            else:
                waiting.append((request, panel))
        self._pending_panels = waiting

    def _schedule_pending_fallback(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._mount_pending(force=True)
            return
        loop.call_later(PENDING_PANEL_SECONDS, lambda: self._mount_pending(force=True))

    def _record_answer(self, request: ApprovalRequest, response: ApprovalResponse, panel: ApprovalPanel) -> None:
        update = record_user_decision(
            self.state,
            request.tool_use_id,
            behavior=response.behavior,
            decided_by=response.decided_by,
            at=self.clock(),
            wall_time=time.time(),
            always=response.always,
            rule=request.suggested_rule or request.tool_name,
            message=response.reason,
            agent=request.agent,
        )
        panel.close()  # the card's own decision line says who decided and when
        self._dirty |= update.dirty
        self.throttle.mark_flushed()
        self._flush()

    @property
    def approval_latencies(self) -> list[float]:
        """Seconds from each deciding click to the approver returning."""
        return list(self._approver.latencies) if self._approver is not None else []

    # --- refreshing ------------------------------------------------------------------------
    def _flush(self) -> None:
        if not self._dirty:
            return
        dirty, self._dirty = self._dirty, set()
        if self.widgets is not None and self.widgets.sync(self.state, dirty):
            self.updates += 1

    def _schedule_trailing_flush(self) -> None:
        """Show what the throttle held back even if no further event comes soon."""
        if self._trailing is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop (a plain call, a benchmark): the next event or finish() flushes
        delay = max(self.throttle.due_in(), self.throttle.min_interval / 2)
        self._trailing = loop.call_later(delay, self._trailing_flush)

    def _trailing_flush(self) -> None:
        self._trailing = None
        if self._dirty and not self._finished:
            self.throttle.mark_flushed()
            self._flush()

    def _cancel_trailing(self) -> None:
        if self._trailing is not None:
            self._trailing.cancel()
            self._trailing = None

    def _publish_final_bundle(self) -> None:
        """Keep the widget view live, and add HTML + text to the same output so a saved
        notebook rendered without widget state (nbconvert, viewers) still shows the run."""
        if not self._display_id or self.widgets is None:
            return
        from IPython.display import update_display

        bundle = dict(self.widgets.root._repr_mimebundle_() or {})
        bundle.update(sr.StaticRunView(self.state)._repr_mimebundle_())
        update_display(bundle, raw=True, display_id=self._display_id)
