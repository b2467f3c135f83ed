"""The engine's writer: scored judgments committed to the run store in batches.

One commit per judgment would make a fast judge wait on the disk (each commit writes the WAL):
judgments arriving faster than ``interval_s`` go in together. Wall time (time.monotonic), not
the run's clock, which tests may freeze. A process killed at once loses at most the last
interval's judgments, which a resume asks for again; nothing is ever stored twice.
"""

from __future__ import annotations

import asyncio
import time

from ..store.run_store import JudgmentWrite, RunStore

#: Judgments are committed to the store at least this often (seconds) and at most this many at once.
WRITE_INTERVAL_S = 0.25
MAX_WRITE_BATCH = 1000


class JudgmentWriter:
    """Judgments scored and not yet in the store: committed together, within ``interval_s`` of
    the first of them, and at once when the last commit is older. Writes nothing until
    :meth:`bind` names the run (and the event loop its timer runs on)."""

    def __init__(self, store: RunStore, *, interval_s: float = WRITE_INTERVAL_S) -> None:
        self._store = store
        self.interval_s = interval_s
        self._run_id: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._unwritten: list[JudgmentWrite] = []
        self._timer: asyncio.TimerHandle | None = None
        self._last_write = 0.0
        self._error: Exception | None = None

    def bind(self, run_id: int, loop: asyncio.AbstractEventLoop | None) -> None:
        self._run_id = run_id
        self._loop = loop

    def add(self, write: JudgmentWrite) -> None:
        """Keep ``write`` for the next commit, committing now when it is due."""
        self._unwritten.append(write)
        waited = time.monotonic() - self._last_write
        if (self._error is not None or waited >= self.interval_s
                or len(self._unwritten) >= MAX_WRITE_BATCH):
            # After a failed timed write, at once: a second failure fails the run, as an immediate
            # one would, rather than a run going on for hours with its judgments only in memory.
            self._error = None
            self._write_now()
        elif self._timer is None and self._loop is not None:
            self._timer = self._loop.call_later(self.interval_s - waited, self._write_on_timer)

    def write_all(self) -> None:
        """Before the run's status or counts are read or written: everything scored is stored."""
        self._error = None
        self._write_now()

    def _write_on_timer(self) -> None:
        self._timer = None
        try:
            self._write_now()
        except Exception as exc:  # tried again with the next judgment or at the run's end, which fail on it
            self._error = exc

    def _write_now(self) -> None:
        """Commit every judgment not yet stored, in one transaction."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._unwritten or self._run_id is None:
            return
        batch = self._unwritten
        self._last_write = time.monotonic()
        self._store.judgments.add_judgments(self._run_id, batch)
        self._unwritten = []  # only once stored: a failed write keeps them for the next try
