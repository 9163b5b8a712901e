"""Coalescing of display updates: many small changes, few front-end messages.

A streaming reply arrives as thousands of deltas; every widget update is a comm message the
browser must parse and lay out. The view therefore folds deltas into its state at once and only
pushes to the widgets at a bounded rate. As in tqdm, a cheap counter is checked before the clock
(the clock is read only once enough changes have accumulated), and the clock is injectable so
tests of the rate are deterministic. Whatever is still pending is flushed by the caller at the
end (`RunDisplay.finish`) or by a trailing timer, so throttling never loses the final state.
"""

from __future__ import annotations

import math
import time
from typing import Callable

Clock = Callable[[], float]


class Throttle:
    """Decides when accumulated changes deserve a display update.

    ``max_per_second`` bounds the updates driven by `note`; forced updates (`mark_flushed`
    after an urgent change) also restart the interval, so a burst of urgent changes followed by
    deltas still stays within the rate.

    ``check_every`` adapts to the arrival rate: it doubles (up to ``max_skip``) each time the
    clock says "too soon", and after an update it becomes about a quarter of the changes seen
    in the last interval, so a fast stream reads the clock a few times per interval instead of
    once per delta, while a slow stream (one change per interval or less) reads it on every
    change and is shown at once. The price is that up to ``max_skip`` changes can wait past
    the interval; the caller's trailing flush and urgent updates cover that.
    """

    def __init__(self, max_per_second: float = 15.0, *, clock: Clock = time.monotonic, max_skip: int = 16) -> None:
        if max_per_second <= 0:
            raise ValueError("max_per_second must be positive")
        self.min_interval = 1.0 / max_per_second
        self.clock = clock
        self.max_skip = max(1, max_skip)
        self.pending = 0
        """Changes noted since the last update."""
        self.check_every = 1
        self.updates = 0
        self.clock_reads = 0
        self._since_check = 0
        self._last = -math.inf

    def note(self) -> bool:
        """Record one change; return True when an update should be emitted now.

        When True is returned the update is considered done (the caller must emit it).
        """
        self.pending += 1
        self._since_check += 1
        if self._since_check < self.check_every:
            return False
        self._since_check = 0
        now = self._now()
        if now - self._last < self.min_interval:
            # too soon: changes are arriving fast, so look at the clock less often
            self.check_every = min(self.max_skip, self.check_every * 2)
            return False
        self._adapt(now)
        self._record(now)
        return True

    def mark_flushed(self) -> None:
        """Record an update emitted for another reason (an urgent change, a trailing flush,
        the end of the run). The stream may have paused, so the clock is consulted again on
        the next change."""
        self.check_every = 1
        self._record(self._now())

    def due_in(self) -> float:
        """Seconds until `note` may return True again (0 if it may now)."""
        return max(0.0, self._last + self.min_interval - self._now())

    def _now(self) -> float:
        self.clock_reads += 1
        return self.clock()

    def _adapt(self, now: float) -> None:
        """Set ``check_every`` to about a quarter of the changes expected per interval."""
        elapsed = now - self._last
        if math.isfinite(elapsed) and elapsed > 0:
            per_interval = self.pending * min(1.0, self.min_interval / elapsed)
            self.check_every = max(1, min(self.max_skip, int(per_interval // 4)))
        else:
            self.check_every = 1

    def _record(self, now: float) -> None:
        self.pending = 0
        self._since_check = 0
        self.updates += 1
        self._last = now
