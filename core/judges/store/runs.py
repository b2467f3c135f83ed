"""The runs table: a run's record made, updated, found and deleted, with its judgment counts."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from typing import Any

from ..run.events import RunStatus
from .connection import StoreConnection
from .records import RunRecord, StoreError

RUN_STATUSES = tuple(status.value for status in RunStatus)
#: Statuses of a run that stopped before all its judgments were made.
RESUMABLE_STATUSES = (RunStatus.RUNNING, RunStatus.CANCELLED, RunStatus.FAILED, RunStatus.INTERRUPTED)


class Runs:
    """The runs of one store (``store.runs``)."""

    def __init__(self, connection: StoreConnection) -> None:
        self._connection = connection

    def create_run(self, config: Mapping[str, Any], fingerprint: str, *, name: str = "",
                   total: int = 0, source_run: int | None = None) -> int:
        now = self._connection.now()
        with self._connection.transaction() as db:
            cur = db.execute(
                "INSERT INTO runs (created, updated, name, status, config, fingerprint, total, source_run) "
                "VALUES (?, ?, ?, 'running', ?, ?, ?, ?)",
                (now, now, name, json.dumps(config, ensure_ascii=False, sort_keys=True, default=str), fingerprint,
                 total, source_run),
            )
            assert cur.lastrowid is not None  # an INSERT always sets it
            return int(cur.lastrowid)

    def set_status(self, run_id: int, status: RunStatus, *, error: str | None = None) -> None:
        with self._connection.transaction() as db:
            db.execute("UPDATE runs SET status = ?, error = ?, updated = ? WHERE id = ?",
                       (RunStatus(status).value, error, self._connection.now(), run_id))  # refuses a stray string

    def set_total(self, run_id: int, total: int) -> None:
        with self._connection.transaction() as db:
            db.execute("UPDATE runs SET total = ?, updated = ? WHERE id = ?", (total, self._connection.now(), run_id))

    def add_wall_time(self, run_id: int, seconds: float) -> None:
        """Add a session's wall time to the run's (a resumed run adds each session's)."""
        with self._connection.transaction() as db:
            db.execute("UPDATE runs SET wall_s = wall_s + ? WHERE id = ?", (max(seconds, 0.0), run_id))

    def get_run(self, run_id: int) -> RunRecord:
        rows = self._connection.query(_RUN_SELECT + " WHERE r.id = ?", (run_id,))
        if not rows:
            raise StoreError(f"{self._connection.path}: no run with id {run_id}")
        return _run_record(rows[0])

    def list_runs(self, *, status: RunStatus | None = None) -> list[RunRecord]:
        """Every run (or every run with this status), newest first."""
        where, params = ("WHERE r.status = ?", (status.value,)) if status else ("", ())
        rows = self._connection.query(_RUN_SELECT + f" {where} ORDER BY r.id DESC", params)
        return [_run_record(row) for row in rows]

    def find_resumable(self, fingerprint: str) -> RunRecord | None:
        """The newest unfinished run made from the same config, if any."""
        marks = ", ".join("?" for _ in RESUMABLE_STATUSES)
        rows = self._connection.query(
            _RUN_SELECT + f" WHERE r.fingerprint = ? AND r.status IN ({marks}) ORDER BY r.id DESC LIMIT 1",
            (fingerprint, *(status.value for status in RESUMABLE_STATUSES)),
        )
        return _run_record(rows[0]) if rows else None

    def find_finished(self, fingerprint: str, *, name: str = "") -> RunRecord | None:
        """The newest finished run made from the same config under the same name (a judge command
        given again shows it instead of adding an identical run)."""
        rows = self._connection.query(
            _RUN_SELECT + " WHERE r.fingerprint = ? AND r.status = ? AND r.name = ? AND r.source_run IS NULL "
            "ORDER BY r.id DESC LIMIT 1",
            (fingerprint, RunStatus.FINISHED.value, name),
        )
        return _run_record(rows[0]) if rows else None

    def find_awaiting(self, fingerprint: str) -> RunRecord | None:
        """The newest run of the same config written to a batch file and still awaiting its answers."""
        rows = self._connection.query(
            _RUN_SELECT + " WHERE r.fingerprint = ? AND r.status = ? ORDER BY r.id DESC LIMIT 1",
            (fingerprint, RunStatus.AWAITING_ANSWERS.value))
        return _run_record(rows[0]) if rows else None

    def set_config_entry(self, run_id: int, key: str, value: Any) -> None:
        """Record ``value`` under ``key`` of the run's stored configuration (provenance the run gathers
        after it was made: a batch run's files and imports); the fingerprint is not touched."""
        with self._connection.transaction() as db:
            row = db.execute("SELECT config FROM runs WHERE id = ?", (run_id,)).fetchone()
            if row is None:
                raise StoreError(f"{self._connection.path}: no run with id {run_id}")
            config = {**json.loads(row[0]), key: value}
            db.execute("UPDATE runs SET config = ?, updated = ? WHERE id = ?",
                       (json.dumps(config, ensure_ascii=False, sort_keys=True, default=str),
                        self._connection.now(), run_id))

    def delete_run(self, run_id: int) -> bool:
        """Delete a run with its judgments and reviews. The response cache is kept."""
        with self._connection.transaction() as db:
            return db.execute("DELETE FROM runs WHERE id = ?", (run_id,)).rowcount > 0


# Counted per run from indexes (the unique key's and judgments_failed_by_run), never by reading
# the judgments themselves: listing runs stays quick with a 100,000-judgment run among them.
_RUN_SELECT = (
    "SELECT r.*, (SELECT COUNT(*) FROM judgments WHERE run_id = r.id) AS n_judgments, "
    "(SELECT COUNT(*) FROM judgments WHERE run_id = r.id AND score IS NULL) "
    "AS n_failures FROM runs r"
)


def _run_record(row: sqlite3.Row) -> RunRecord:
    return RunRecord(
        id=row["id"], created=row["created"], updated=row["updated"], name=row["name"],
        status=RunStatus(row["status"]), config=json.loads(row["config"]), fingerprint=row["fingerprint"],
        total=row["total"], error=row["error"], judgments=row["n_judgments"], failures=row["n_failures"],
        source_run=row["source_run"], wall_s=float(row["wall_s"] or 0.0),
    )


