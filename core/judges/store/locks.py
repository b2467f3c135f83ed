"""Run locks: which process is executing a run configuration now, so that a second one is refused."""

from __future__ import annotations

import os
import socket
import uuid
from typing import Any

from ..run.events import RunStatus
from .connection import StoreConnection
from .records import RunLocked


def process_is_alive(pid: int) -> bool:
    """Whether a process with this id exists on this machine (signal 0 checks without sending)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    except OSError:
        return False
    return True


class RunLocks:
    """The run locks of one store (``store.locks``)."""

    def __init__(self, connection: StoreConnection) -> None:
        self._connection = connection

    def lock_run(self, fingerprint: str, *, label: str = "") -> str:
        """Claim the run configuration ``fingerprint`` for this process; returns the lock's owner token.

        Raises :class:`RunLocked` naming the other process when a live one holds it
        (two processes on one run would send, and pay for, every request twice). A
        lock left by a process that no longer exists on this host is taken over.
        """
        owner = uuid.uuid4().hex
        host = socket.gethostname()
        with self._connection.transaction() as db:
            row = db.execute("SELECT * FROM run_locks WHERE fingerprint = ?", (fingerprint,)).fetchone()
            if row is not None and not (row["host"] == host and not process_is_alive(int(row["pid"]))):
                what = f"run {row['run_id']}" if row["run_id"] is not None else f"run {label or fingerprint[:8]}"
                where = f"process {row['pid']}" + (f" on {row['host']}" if row["host"] != host else "")
                raise RunLocked(
                    f"{what} is already being executed by {where} (since {row['started'][:19]} UTC); "
                    "wait for it to finish or stop it, then run again", pid=int(row["pid"]), host=row["host"])
            db.execute("INSERT OR REPLACE INTO run_locks (fingerprint, run_id, pid, host, owner, started) "
                       "VALUES (?, NULL, ?, ?, ?, ?)",
                       (fingerprint, os.getpid(), host, owner, self._connection.now()))
        return owner

    def set_lock_run(self, owner: str, run_id: int) -> None:
        """Name the run a held lock covers (known once the run is created or found)."""
        with self._connection.transaction() as db:
            db.execute("UPDATE run_locks SET run_id = ? WHERE owner = ?", (run_id, owner))

    def unlock_run(self, owner: str) -> None:
        with self._connection.transaction() as db:
            db.execute("DELETE FROM run_locks WHERE owner = ?", (owner,))

    def run_lock(self, fingerprint: str) -> dict[str, Any] | None:
        rows = self._connection.query("SELECT * FROM run_locks WHERE fingerprint = ?", (fingerprint,))
        return dict(rows[0]) if rows else None

    def mark_dead_runs_interrupted(self) -> list[int]:
        """Mark ``interrupted`` every ``running`` run that no live process holds, and return their ids.

        A run is held by the lock of its configuration (by run id, or by fingerprint while the run is
        being created), and a lock by its process: a run whose process ended without finishing it (killed,
        crashed) stays ``running`` in the file until someone looks. A lock of another host counts as held
        (its process cannot be checked from here).
        """
        host = socket.gethostname()
        marked = []
        with self._connection.transaction() as db:
            running = db.execute("SELECT id, fingerprint FROM runs WHERE status = ?",
                                 (RunStatus.RUNNING.value,)).fetchall()
            for run in running:
                locks = db.execute("SELECT pid, host FROM run_locks WHERE run_id = ? OR fingerprint = ?",
                                   (run["id"], run["fingerprint"])).fetchall()
                if any(lock["host"] != host or process_is_alive(int(lock["pid"])) for lock in locks):
                    continue
                db.execute("UPDATE runs SET status = ?, updated = ? WHERE id = ? AND status = ?",
                           (RunStatus.INTERRUPTED.value, self._connection.now(), run["id"], RunStatus.RUNNING.value))
                marked.append(int(run["id"]))
        return marked
