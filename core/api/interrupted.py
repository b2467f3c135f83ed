"""The run a launch offers to resume: the newest one on the opened dataset, left unfinished."""

from __future__ import annotations

import socket

from ..judges.store.run_store import RunRecord, RunStore, process_is_alive
from ..judges.store.status import RunStatus

__all__ = ["find_interrupted_run"]


def find_interrupted_run(store: RunStore, dataset: str) -> RunRecord | None:
    """The newest run judged on ``dataset`` when it was cancelled or cut off (a quit, a crash, a closed
    terminal) rather than finished or failed; None when there is none, or another process is on it."""
    store.locks.mark_dead_runs_interrupted()
    runs = [r for r in store.runs.list_runs() if r.source_run is None and r.run_config.dataset == dataset]
    if not runs:
        return None
    newest = runs[0]
    if newest.status not in (RunStatus.CANCELLED, RunStatus.RUNNING, RunStatus.INTERRUPTED):
        return None
    # A tuning search's stage runs are resumed by running the search again (the Tune screen).
    if newest.name.startswith("tune "):
        return None
    lock = store.locks.run_lock(newest.fingerprint)
    if (lock is not None and lock.get("run_id") == newest.id and lock.get("host") == socket.gethostname()
            and process_is_alive(int(lock["pid"]))):
        return None  # another dialjudge is judging it right now
    return newest
