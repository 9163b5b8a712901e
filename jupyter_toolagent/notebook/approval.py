"""Asking the person in the running cell: Allow once / Always allow / Deny (+ reason).

The wait is an ``await`` on the kernel's event loop, never a blocking call: on ipykernel 7 a
cell that awaits still receives widget comm messages, so the click arrives on the loop thread;
on ipykernel 6 a pump delivers it, possibly from another thread. Button callbacks therefore do
only thread-safe, short work — disable the buttons and hand the answer to the loop with
``call_soon_threadsafe``. The wait proceeds in short slices (`POLL_INTERVAL`) because a kernel
interrupt is only noticed when the awaiting code wakes up (measured: ≈0.4 s with 0.1 s slices,
versus the whole timeout with one long wait).

The wait ends on the first of: a click, the run's abort signal (Stop button, kernel
interrupt), or the approval timeout. Whatever ends it, the buttons end disabled.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any, Callable

import ipywidgets as widgets

from ..core.abort import AbortSignal
from ..core.permission_types import ApprovalRequest, ApprovalResponse, how_to_allow
from . import static_render as sr
from .view_state import Ask

POLL_INTERVAL = 0.1


class ApprovalPanel:
    """The widgets of one ask, and the first-answer-wins hand-off to the waiting coroutine."""

    def __init__(self, request: ApprovalRequest) -> None:
        self.request = request
        reason = f"sub-agent {request.agent} asks: {request.reason}" if request.agent else request.reason
        self.reason = widgets.HTML(sr.ask_html(Ask(reason, request.suggested_rule, 0.0), request.tool_name))
        self.allow_once = widgets.Button(description="Allow once", button_style="success", icon="check")
        rule = request.suggested_rule or request.tool_name
        self.always_allow = widgets.Button(
            description="Always allow", button_style="info", icon="check-double", tooltip=f"Adds the session rule {rule}"
        )
        self.deny = widgets.Button(description="Deny", button_style="danger", icon="times")
        self.deny_reason = widgets.Text(
            placeholder="Reason for denying (sent to the model)", layout=widgets.Layout(width="28em")
        )
        self.outcome = widgets.HTML()
        self.buttons = widgets.HBox([self.allow_once, self.always_allow, self.deny, self.deny_reason])
        self.box = widgets.VBox([self.reason, self.buttons, self.outcome])
        self.box.add_class(f"{sr.PREFIX}-ask")
        self.response: ApprovalResponse | None = None
        self.clicked_at: float | None = None
        """Epoch time of the deciding click (for the click → decision latency)."""
        self._lock = threading.Lock()
        self._deliver: Callable[[ApprovalResponse], None] | None = None
        self.allow_once.on_click(lambda _b: self.decide(ApprovalResponse("allow")))
        self.always_allow.on_click(lambda _b: self.decide(ApprovalResponse("allow", always=True)))
        self.deny.on_click(lambda _b: self.decide(ApprovalResponse("deny", reason=self.deny_reason.value.strip())))

    @property
    def controls(self) -> tuple[widgets.Widget, ...]:
        return (self.allow_once, self.always_allow, self.deny, self.deny_reason)

    def bind(self, deliver: Callable[[ApprovalResponse], None]) -> None:
        """Where a click's answer goes; bound by the waiting coroutine."""
        with self._lock:
            self._deliver = deliver
            pending = self.response
        if pending is not None:  # clicked before the wait began
            deliver(pending)

    def decide(self, response: ApprovalResponse) -> bool:
        """Record the first answer; later ones are ignored. Safe from any thread."""
        with self._lock:
            if self.response is not None:
                return False
            self.response = response
            self.clicked_at = time.time()
            deliver = self._deliver
        self.disable()
        if deliver is not None:
            deliver(response)
        return True

    def disable(self) -> None:
        for control in self.controls:
            if not control.disabled:
                control.disabled = True

    def close(self, outcome_html: str = "") -> None:
        """End state: controls disabled, and (when the panel stands alone, not in a card that
        shows the decision itself) a line saying how the ask ended."""
        self.disable()
        if outcome_html and self.outcome.value != outcome_html:
            self.outcome.value = outcome_html


async def wait_for_answer(
    panel: ApprovalPanel,
    abort: AbortSignal,
    *,
    timeout: float | None = None,
    poll_interval: float = POLL_INTERVAL,
    clock: Callable[[], float] = time.monotonic,
) -> ApprovalResponse:
    """Wait for a click, an abort or the timeout, in short slices (see the module docstring)."""
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[ApprovalResponse] = loop.create_future()

    def _set(response: ApprovalResponse) -> None:
        if not answer.done():
            answer.set_result(response)

    def deliver(response: ApprovalResponse) -> None:
        try:
            loop.call_soon_threadsafe(_set, response)
        except RuntimeError:  # loop closed: nobody is waiting any more
            pass

    panel.bind(deliver)
    aborted = asyncio.ensure_future(abort.wait())
    deadline = None if timeout is None else clock() + timeout
    try:
        while True:
            waiting: set[asyncio.Future[Any]] = {answer, aborted}
            await asyncio.wait(waiting, timeout=poll_interval, return_when=asyncio.FIRST_COMPLETED)
            if answer.done():
                return answer.result()
            if abort.aborted:
                panel.decide(ApprovalResponse("deny", reason=abort.reason or "The run was stopped.", decided_by="interrupt"))
                return panel.response or ApprovalResponse("deny", decided_by="interrupt")
            if deadline is not None and clock() >= deadline:
                panel.decide(
                    ApprovalResponse(
                        "deny",
                        reason=f"No answer within {timeout:g} s; the call was not run.",
                        decided_by="timeout",
                    )
                )
                return panel.response or ApprovalResponse("deny", decided_by="timeout")
    finally:
        aborted.cancel()
        panel.disable()


class WidgetApprover:
    """The `Approver` of an interactive run: one `ApprovalPanel` per ask, in the call's card.

    ``mount(request, panel)`` shows the panel (the run display puts it into the card and marks
    the card as waiting); ``on_answer(request, response, panel)`` records the outcome — it is
    also called when the wait is cancelled (kernel interrupt), with ``decided_by="interrupt"``,
    before the cancellation propagates.
    """

    def __init__(
        self,
        abort: AbortSignal,
        *,
        mount: Callable[[ApprovalRequest, ApprovalPanel], None],
        on_answer: Callable[[ApprovalRequest, ApprovalResponse, ApprovalPanel], None],
        timeout: float | None = None,
        poll_interval: float = POLL_INTERVAL,
    ) -> None:
        self.abort = abort
        self.mount = mount
        self.on_answer = on_answer
        self.timeout = timeout
        self.poll_interval = poll_interval
        self.panels: dict[str, ApprovalPanel] = {}
        self.latencies: list[float] = []
        """Seconds from each deciding click to this approver returning (benchmark B9)."""

    async def __call__(self, request: ApprovalRequest) -> ApprovalResponse:
        panel = ApprovalPanel(request)
        self.panels[request.tool_use_id] = panel
        self.mount(request, panel)
        if self.abort.aborted:  # stopped before we could even ask
            panel.decide(ApprovalResponse("deny", reason=self.abort.reason or "The run was stopped.", decided_by="interrupt"))
        try:
            response = await wait_for_answer(panel, self.abort, timeout=self.timeout, poll_interval=self.poll_interval)
        except asyncio.CancelledError:
            why = f"The run was stopped: {self.abort.reason}." if self.abort.aborted else "Interrupted while waiting for approval."
            panel.decide(ApprovalResponse("deny", reason=why, decided_by="interrupt"))
            self.on_answer(request, panel.response or ApprovalResponse("deny", decided_by="interrupt"), panel)
            raise
        if response.decided_by == "user" and panel.clicked_at is not None:
            self.latencies.append(max(0.0, time.time() - panel.clicked_at))
        self.on_answer(request, response, panel)
        return response


async def deny_without_front_end(request: ApprovalRequest) -> ApprovalResponse:
    """The approver where nothing can click (§8.3): deny at once, naming the allow rule."""
    rule = request.suggested_rule or request.tool_name
    return ApprovalResponse(
        "deny",
        reason=(
            f"Not allowed: {request.reason or 'this call needs approval'}. No interactive front end can "
            f"approve it here; to allow it, {how_to_allow(rule, 'cell')} to the cell's `%%agent` line."
        ),
        decided_by="policy",
    )
