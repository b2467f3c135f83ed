"""The engine's counters: how far a run is (done of total, failed, answered from the cache, requests
sent, tokens), its rates since judging began, and when a progress event is due."""

from __future__ import annotations

from collections.abc import Callable

from ..types import Judgment
from .events import RunProgress


class RunCounters:
    """Counts of one engine session; ``clock`` is the run's (a test may freeze it)."""

    def __init__(self, clock: Callable[[], float], *, progress_interval_s: float = 0.2,
                 progress_every: int = 50) -> None:
        self._clock = clock
        self.progress_interval_s = progress_interval_s
        self.progress_every = max(1, progress_every)
        #: Judgments of the run (all sessions): asked for, made, failed, answered from the cache.
        self.total = 0
        self.done = 0
        self.failures = 0
        self.cached = 0
        #: Requests sent to a backend in this session.
        self.backend_calls = 0
        #: Judgments made in this session, per judge.
        self.session_done_by_judge: dict[str, int] = {}
        self._session_done = 0
        self._tokens = 0
        self.started_at = 0.0
        #: When judging began (after the preparing and the judges' loading); rates are counted from it.
        self.judging_since: float | None = None
        self._last_progress_at = 0.0
        self._last_progress_done = 0

    def start(self) -> None:
        self.started_at = self._last_progress_at = self._clock()

    def start_judging(self) -> None:
        self.judging_since = self._clock()

    def elapsed_s(self) -> float:
        """Seconds since the session started."""
        return max(self._clock() - self.started_at, 0.0)

    def count(self, judgment: Judgment) -> None:
        """One judgment made in this session."""
        self.done += 1
        self._session_done += 1
        self.session_done_by_judge[judgment.judge] = self.session_done_by_judge.get(judgment.judge, 0) + 1
        if judgment.failed:
            self.failures += 1
        if judgment.cached:
            self.cached += 1
        else:
            self._tokens += (judgment.evaluated_tokens or judgment.prompt_tokens) + judgment.completion_tokens

    def progress(self) -> RunProgress:
        since = self.judging_since if self.judging_since is not None else self.started_at
        elapsed = max(self._clock() - since, 0.0)
        items_per_s = self._session_done / elapsed if elapsed > 0 else 0.0
        remaining = self.total - self.done
        eta = 0.0 if remaining == 0 else (remaining / items_per_s if items_per_s > 0 else None)
        return RunProgress(
            done=self.done, total=self.total, failures=self.failures, cached=self.cached,
            tokens_per_s=self._tokens / elapsed if elapsed > 0 else 0.0, items_per_s=items_per_s, eta_s=eta)

    def due_progress(self, *, force: bool = False) -> RunProgress | None:
        """The progress to report now (``force``: whatever the interval), or None when it is not yet due."""
        now = self._clock()
        if (force or now - self._last_progress_at >= self.progress_interval_s
                or self.done - self._last_progress_done >= self.progress_every):
            self._last_progress_at = now
            self._last_progress_done = self.done
            return self.progress()
        return None
