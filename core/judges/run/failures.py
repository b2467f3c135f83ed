"""Why a judge request failed, and when a judge should stop being asked.

Backends raise :class:`RequestFailed` with a :class:`FailureKind` after their
own retries are spent. The engine feeds every request's outcome to a
:class:`CircuitBreaker` per judge: a judge whose first requests all fail the
same hopeless way (connection refused, key rejected, model not found), or
whose recent failure rate passes a threshold, is paused with a reason instead
of being asked once per item. A paused run stays resumable: the items it did
not reach are simply not stored yet.
"""

from __future__ import annotations

import asyncio
import enum
from collections import deque
from dataclasses import dataclass, field

from ...errors import BackendError


class FailureKind(str, enum.Enum):
    """What went wrong with one request, as far as deciding to go on is concerned."""

    #: No connection at all (refused, unknown host): the server is not there.
    CONNECTION = "connection"
    #: 401/403: the key is missing or wrong; every further request would fail alike.
    AUTH = "auth"
    #: 404: wrong URL or model name.
    NOT_FOUND = "not-found"
    #: Timeouts, resets, 429, 5xx: retried, and failing only when the retries ran out.
    TRANSIENT = "transient"
    #: A 200 answer that could not be read (not JSON, no choices, impossible log-probabilities).
    MALFORMED = "malformed"
    #: Anything else (another 4xx, a local error).
    OTHER = "other"


#: Kinds that say the judge cannot work at all, so the first few requests decide.
HOPELESS_KINDS = frozenset({FailureKind.CONNECTION, FailureKind.AUTH, FailureKind.NOT_FOUND})


class RequestFailed(BackendError):
    """A request that failed for good; ``str()`` is a one-line reason a person understands."""

    def __init__(self, message: str, kind: FailureKind) -> None:
        super().__init__(message)
        self.kind = kind


def failure_kind(exc: BaseException) -> FailureKind:
    return exc.kind if isinstance(exc, RequestFailed) else FailureKind.OTHER


@dataclass
class BreakerSettings:
    """When a judge is paused.

    ``first_n``: that many first requests all failing with the same hopeless
    kind pause it (an AUTH failure pauses at once: a rejected key is never
    retried item by item). ``window``/``max_failure_rate``: over the last
    ``window`` requests, a failure share above the rate pauses it.
    """

    first_n: int = 3
    window: int = 20
    max_failure_rate: float = 0.5


@dataclass
class CircuitBreaker:
    """Watches one judge's request outcomes; :attr:`reason` is set once it trips."""

    judge: str
    settings: BreakerSettings = field(default_factory=BreakerSettings)
    reason: str | None = None
    _seen: int = 0
    _first_failures: list[tuple[FailureKind, str]] = field(default_factory=list)
    _recent: deque[bool] = field(default_factory=deque)
    #: Set once the judge has answered a request (or its first worker stopped); until then
    #: only one request is in flight, so a hopeless judge costs one request, not one per slot.
    answered: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def tripped(self) -> bool:
        return self.reason is not None

    def record_success(self) -> None:
        self._note(failed=False)

    def record_failure(self, kind: FailureKind, message: str) -> None:
        """Count one failed request; returns with :attr:`reason` set when the judge must pause."""
        if self.tripped:
            return
        first = self._seen < self.settings.first_n and len(self._first_failures) == self._seen
        self._note(failed=True)
        if kind is FailureKind.AUTH:
            self.reason = f"judge {self.judge!r} paused: the server rejected the key ({message})"
            return
        if first:
            self._first_failures.append((kind, message))
            kinds = {k for k, _ in self._first_failures}
            if (len(self._first_failures) >= self.settings.first_n and len(kinds) == 1
                    and kind in HOPELESS_KINDS):
                self.reason = (f"judge {self.judge!r} paused: its first {len(self._first_failures)} requests "
                               f"all failed ({message})")
                return
        window = self.settings.window
        if len(self._recent) >= window:
            failed = sum(self._recent)
            if failed / len(self._recent) > self.settings.max_failure_rate:
                self.reason = (f"judge {self.judge!r} paused: {failed} of its last {len(self._recent)} "
                               f"requests failed (latest: {message})")

    def _note(self, *, failed: bool) -> None:
        self._seen += 1
        self._recent.append(failed)
        while len(self._recent) > self.settings.window:
            self._recent.popleft()
