"""A remaining-time estimate that moves between judgments, not only when one arrives.

The engine's :class:`~.events.RunProgress` carries an ETA computed when a judgment
is recorded; with a slow judge (seconds per item) it then sits still until the
next one. A front end instead asks :meth:`MovingEta.eta_s` on a timer with the
current time:

* while the item being judged is within the time items have taken so far, the
  estimate counts down, a second per second;
* once it takes longer than that, the run is evidently slower than estimated: the
  estimate is what it would be if that item finished now, and it grows with the wait.

With ``E`` the seconds from the first request to the newest judgment, ``n`` the
judgments asked in that time (each took ``p = E / n`` on average), ``s`` the seconds
since the newest one and ``r`` the judgments left, that is
``max(r·p − s, (r − 1)·(E + s)/(n + 1))``: both terms are equal when ``s = p``, so the
estimate never jumps. A judge asked several requests at once answers in bursts: judgments
that arrive together (within :data:`BURST_S`) count as one arrival of ``k`` judgments, the
wait is compared with the time between arrivals, and the overdue estimate is what it would
be if the next ``k`` arrived now, ``(r − k)·(E + s)/(n + k)``, again equal to the countdown
when the wait is the usual one. Judgments answered from the response cache arrive at once,
before any request is sent; they would make a judge look instant, so they only
move the start of the clock.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Judgments that arrive this close together came from one burst of concurrent requests.
BURST_S = 0.05


@dataclass
class MovingEta:
    """Judgments of one run session as they arrive (times from one clock), and the time left."""

    total: int = 0
    done: int = 0
    #: When asking began: the run's start, moved past each judgment answered from the cache.
    asking_since: float | None = None
    #: Judgments asked (not cached) in this session, and when the newest of any kind arrived.
    asked: int = 0
    last_at: float | None = None
    #: Arrivals of asked judgments, a burst of concurrent answers counting once.
    arrivals: int = 0

    def start(self, now: float, *, total: int, done: int) -> None:
        """The run started (``done`` of ``total`` were stored by earlier sessions)."""
        self.total, self.done = total, done
        self.asking_since, self.asked, self.last_at, self.arrivals = now, 0, None, 0

    def judged(self, now: float, *, done: int, total: int, cached: bool) -> None:
        """A judgment was recorded at ``now`` (``done`` of ``total`` are stored)."""
        if self.asking_since is None:
            self.asking_since = now
        self.done, self.total = done, total
        if cached and self.asked == 0:
            self.asking_since = now  # a cache hit cost no time: the clock of asking starts after it
        elif not cached:
            if self.asked == 0 or self.last_at is None or now - self.last_at > BURST_S:
                self.arrivals += 1
            self.asked += 1
        self.last_at = now

    def eta_s(self, now: float) -> float | None:
        """Seconds left at ``now``; 0 when nothing is left, None before a judgment was asked."""
        remaining = self.total - self.done
        if remaining <= 0:
            return 0.0
        if self.asked == 0 or self.asking_since is None or self.last_at is None:
            return None
        taken = max(self.last_at - self.asking_since, 0.0)
        waited = max(now - self.last_at, 0.0)
        per_item = taken / self.asked
        burst = self.asked / max(self.arrivals, 1)  # judgments per arrival
        counting_down = remaining * per_item - waited
        overdue = (remaining - burst) * (taken + waited) / (self.asked + burst)
        return max(counting_down, overdue, 0.0)
