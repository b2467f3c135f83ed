"""The run store: every run, every judgment, a response cache and the reviews, in SQLite.

One file, ``<user_data_dir>/runs.sqlite3``, in WAL mode so the TUI can read
while a run writes. Judgments are committed in small batches as they arrive
(:meth:`RunStore.add_judgments`; the engine commits at least every quarter of a
second) and the pair (run, item, judge, repeat) is unique, so a run killed at
any point resumes without duplicating anything, redoing at most its last
uncommitted batch. API keys never reach this file: run
configs carry only the *name* of the key's environment variable.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import threading
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ...config import user_data_dir
from ...errors import DialjudgeError
from ...foreground import give_way
from ..run.config import RunConfig
from ..run.events import RunStatus
from ..run.scoring import group_failure_reasons
from ..types import BackendResult, Judgment, ScoringMode

#: 1: runs, judgments, response cache, reviews. 2: run locks. 3: judgments keep their top
#: log-probabilities (so a run can be rescored with another top-K) and runs their source run.
#: 4: judgments and cached answers keep the probability on valid answers at the answer position
#: (NULL in rows from before: unknown, shown as such), judgments how many valid answers their
#: top list showed and whether the mass is a lower bound.
SCHEMA_VERSION = 4
STORE_FILENAME = "runs.sqlite3"

RUN_STATUSES = tuple(status.value for status in RunStatus)
#: Statuses of a run that stopped before all its judgments were made.
RESUMABLE_STATUSES = (RunStatus.RUNNING, RunStatus.CANCELLED, RunStatus.FAILED)
REVIEW_VERDICTS = ("judge-wrong", "human-doubtful", "fine")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    name TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'cancelled', 'failed')),
    config TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    total INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    -- The run this one was rescored from (core.judges.post_run.rescore); NULL for a judged run.
    source_run INTEGER,
    -- Seconds the engine spent on the run, summed over its sessions (resumes, retries).
    wall_s REAL NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS runs_by_fingerprint ON runs (fingerprint, id);

CREATE TABLE IF NOT EXISTS judgments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    item_id TEXT NOT NULL,
    judge TEXT NOT NULL,
    repeat INTEGER NOT NULL,
    mode TEXT NOT NULL,
    cache_key TEXT,
    prompt_hash TEXT NOT NULL,
    raw_output TEXT NOT NULL,
    score REAL,
    normalized REAL,
    distribution TEXT,
    reasoning TEXT,
    relevancy TEXT,
    latency REAL NOT NULL DEFAULT 0,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    evaluated_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    -- 1 when the backend itself failed (no answer at all): such rows are retried on resume.
    request_failed INTEGER NOT NULL DEFAULT 0,
    cached INTEGER NOT NULL DEFAULT 0,
    sampling TEXT NOT NULL DEFAULT '{}',
    created TEXT NOT NULL,
    top_logprobs TEXT,
    valid_mass REAL,
    valid_in_top INTEGER,
    mass_lower_bound INTEGER NOT NULL DEFAULT 0,
    UNIQUE (run_id, item_id, judge, repeat)
);

CREATE TABLE IF NOT EXISTS response_cache (
    cache_key TEXT PRIMARY KEY,
    model_identity TEXT NOT NULL,
    raw_output TEXT NOT NULL,
    choice_probs TEXT,
    top_logprobs TEXT,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    evaluated_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    latency REAL NOT NULL DEFAULT 0,
    created TEXT NOT NULL,
    valid_mass REAL,
    mass_lower_bound INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS reviews (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    item_id TEXT NOT NULL,
    verdict TEXT NOT NULL CHECK (verdict IN ('judge-wrong', 'human-doubtful', 'fine')),
    note TEXT NOT NULL DEFAULT '',
    own_rating REAL,
    updated TEXT NOT NULL,
    PRIMARY KEY (run_id, item_id)
);

-- Who is executing a run configuration now: a second process is refused, a dead one's lock taken over.
CREATE TABLE IF NOT EXISTS run_locks (
    fingerprint TEXT PRIMARY KEY,
    run_id INTEGER,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    owner TEXT NOT NULL,
    started TEXT NOT NULL
);
"""

_JUDGMENT_COLUMNS = (
    "run_id", "item_id", "judge", "repeat", "mode", "cache_key", "prompt_hash", "raw_output", "score",
    "normalized", "distribution", "reasoning", "relevancy", "latency", "prompt_tokens",
    "evaluated_tokens", "completion_tokens", "error", "request_failed", "cached", "sampling", "created",
    "top_logprobs", "valid_mass", "valid_in_top", "mass_lower_bound",
)

#: Indexes for the queries of large runs, made on open where missing. They change no table, so they
#: need no schema version (an older dialjudge reads and writes the file as before).
_INDEXES = {
    # The failures of each run (run listings count them): the judgments without a score only.
    "judgments_failed_by_run": "CREATE INDEX IF NOT EXISTS judgments_failed_by_run ON judgments (run_id) "
                               "WHERE score IS NULL",
}

#: Columns later schema versions added to existing tables: (table, column, type).
_ADDED_COLUMNS = (("judgments", "top_logprobs", "TEXT"), ("runs", "source_run", "INTEGER"),
                  ("runs", "wall_s", "REAL NOT NULL DEFAULT 0"),
                  ("judgments", "valid_mass", "REAL"), ("judgments", "valid_in_top", "INTEGER"),
                  ("judgments", "mass_lower_bound", "INTEGER NOT NULL DEFAULT 0"),
                  ("response_cache", "valid_mass", "REAL"),
                  ("response_cache", "mass_lower_bound", "INTEGER NOT NULL DEFAULT 0"))

#: Columns of :meth:`RunStore.export_rows`, in order (CSV header).
EXPORT_COLUMNS = (
    "run_id", "item_id", "judge", "repeat", "mode", "score", "normalized", "error", "raw_output",
    "reasoning", "relevancy", "distribution", "latency", "prompt_tokens", "evaluated_tokens",
    "completion_tokens", "cached", "prompt_hash", "cache_key", "sampling", "created",
    "valid_mass", "valid_in_top", "mass_lower_bound",
    # Last, so that readers of older exports find every column where it was; with these two a
    # run exported and imported again (core.imports) can be rescored with another top-K.
    "top_logprobs", "request_failed",
)


class StoreError(DialjudgeError):
    """The run store file cannot be opened or was written by an incompatible version."""


class RunLocked(StoreError):
    """Another live process is executing the same run."""

    def __init__(self, message: str, *, pid: int, host: str) -> None:
        super().__init__(message)
        self.pid = pid
        self.host = host


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


def default_store_path() -> Path:
    return user_data_dir() / STORE_FILENAME


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class RunRecord:
    """One row of the runs table with its judgment counts."""

    id: int
    created: str
    updated: str
    name: str
    status: RunStatus
    config: dict[str, Any]
    fingerprint: str
    total: int
    error: str | None
    judgments: int
    failures: int
    #: The run this one was rescored from, without calling the model (None: judged by a model).
    source_run: int | None = None
    #: Seconds the engine spent on the run, over all its sessions.
    wall_s: float = 0.0

    @property
    def kind(self) -> str:
        """How the run's judgments were made: "judged" (by a model here), "rescored" (from another
        run's stored answers) or "imported" (read from a file, core.imports)."""
        if self.source_run is not None:
            return "rescored"
        return "imported" if self.config.get("imported") else "judged"

    @property
    def run_config(self) -> RunConfig:
        """The stored configuration, read (never reach into ``config`` by key)."""
        return RunConfig.from_dict(self.config)


@dataclass(frozen=True)
class Review:
    run_id: int
    item_id: str
    verdict: str
    note: str
    own_rating: float | None
    updated: str


@dataclass(frozen=True)
class JudgmentKey:
    """What makes a judgment unique within a run."""

    item_id: str
    judge: str
    repeat: int


class JudgmentWrite(NamedTuple):
    """One judgment to store, with what :meth:`RunStore.add_judgment` takes beside it."""

    judgment: Judgment
    cache_key: str | None = None
    #: The backend itself failed (no answer at all): such rows are retried on resume.
    request_failed: bool = False
    #: The backend's answer, kept in the response cache under ``cache_key``.
    response: BackendResult | None = None
    model_identity: str = ""


@dataclass(frozen=True)
class JudgmentPage:
    """Judgments ``offset`` to ``offset + len(judgments)`` of ``total``, ordered by item, judge, repeat."""

    offset: int
    total: int
    judgments: list[Judgment]


@dataclass(frozen=True)
class ScoreColumns:
    """One judge's judgments of one repeat as arrays, in item-id order (NaN: failed, no score)."""

    judge: str
    item_ids: list[str]
    #: On the template's scale.
    score: np.ndarray
    #: 0-1, what the agreement statistics take.
    normalized: np.ndarray

    @property
    def failed(self) -> np.ndarray:
        return np.isnan(self.score)

    def __len__(self) -> int:
        return len(self.item_ids)

    def normalized_for(self, item_ids: Sequence[str]) -> np.ndarray:
        """The 0-1 scores in the order of ``item_ids`` (a dataset's, a table's rows); NaN for an item
        this judge has no score of, failed or never judged."""
        position = {item: k for k, item in enumerate(self.item_ids)}
        picks = np.fromiter((position.get(item, -1) for item in item_ids), dtype=np.int64, count=len(item_ids))
        out = np.full(len(item_ids), np.nan)
        found = picks >= 0
        out[found] = self.normalized[picks[found]]
        return out

    def normalized_by_item(self) -> dict[str, float | None]:
        """``{item_id: 0-1 score}`` with None for a failed judgment (an evaluator column)."""
        return {item: (None if value != value else value)
                for item, value in zip(self.item_ids, self.normalized.tolist())}


class RunStore:
    """SQLite-backed store of runs. Open with a path, or none for the default file.

    One connection, guarded by a lock so a UI thread may read while the event
    loop writes.
    """

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path is not None else default_store_path()
        self._lock = threading.RLock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.row_factory = sqlite3.Row
            self._db.execute("PRAGMA busy_timeout=5000")
            version = self._check_version()  # before anything is written to a file we may not own
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._migrate(version)
        except StoreError:
            self._db.close()
            raise
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: cannot open the run store: {exc}") from None
        except OSError as exc:
            raise StoreError(f"{self.path}: cannot create the run store: {exc.strerror}") from None

    # -- lifecycle -------------------------------------------------------------------------

    def _check_version(self) -> int:
        """The file's schema version; refuses a file this dialjudge must not touch."""
        # One statement, one snapshot: another process may be creating the schema right now.
        version, tables = self._db.execute(
            "SELECT (SELECT user_version FROM pragma_user_version), (SELECT COUNT(*) FROM sqlite_master)").fetchone()
        if version == 0 and tables:
            raise StoreError(f"{self.path}: an SQLite file that is not a dialjudge run store (no schema "
                             "version); use another data directory")
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: written by a newer dialjudge (schema {version}, this one reads "
                f"up to {SCHEMA_VERSION}); upgrade dialjudge or use another data directory"
            )
        return int(version)

    def _migrate(self, version: int) -> None:
        if version < SCHEMA_VERSION:
            # One script so that two processes opening a fresh file cannot interleave;
            # every statement is idempotent (IF NOT EXISTS), so it also brings an older
            # store up to date: version 1 lacks only the run_locks table.
            with self._lock:
                self._db.executescript(f"BEGIN IMMEDIATE;\n{_SCHEMA}\nCOMMIT;")
            # Columns added since: ALTER TABLE has no IF NOT EXISTS, so look first, in one transaction.
            with self._transaction() as db:
                for table, column, kind in _ADDED_COLUMNS:
                    if column not in {row[1] for row in db.execute(f"PRAGMA table_info({table})")}:
                        db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        self._ensure_indexes()

    def _ensure_indexes(self) -> None:
        with self._lock:
            present = {row[0] for row in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        missing = [sql for name, sql in _INDEXES.items() if name not in present]
        if missing:
            with self._transaction() as db:
                for sql in missing:
                    db.execute(sql)

    @property
    def schema_version(self) -> int:
        with self._lock:
            return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    class _Tx:
        def __init__(self, store: RunStore) -> None:
            self.store = store

        def __enter__(self) -> sqlite3.Connection:
            self.store._lock.acquire()
            self.store._db.execute("BEGIN IMMEDIATE")
            return self.store._db

        def __exit__(self, exc_type: object, *rest: object) -> None:
            try:
                self.store._db.execute("ROLLBACK" if exc_type else "COMMIT")
            finally:
                self.store._lock.release()

    def _transaction(self) -> RunStore._Tx:
        return RunStore._Tx(self)

    def _query(self, sql: str, params: Iterable[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self._db.execute(sql, tuple(params)).fetchall()

    # -- runs ------------------------------------------------------------------------------

    def create_run(self, config: Mapping[str, Any], fingerprint: str, *, name: str = "",
                   total: int = 0, source_run: int | None = None) -> int:
        now = _now()
        with self._transaction() as db:
            cur = db.execute(
                "INSERT INTO runs (created, updated, name, status, config, fingerprint, total, source_run) "
                "VALUES (?, ?, ?, 'running', ?, ?, ?, ?)",
                (now, now, name, json.dumps(config, ensure_ascii=False, sort_keys=True, default=str), fingerprint,
                 total, source_run),
            )
            assert cur.lastrowid is not None  # an INSERT always sets it
            return int(cur.lastrowid)

    def set_status(self, run_id: int, status: RunStatus, *, error: str | None = None) -> None:
        with self._transaction() as db:
            db.execute("UPDATE runs SET status = ?, error = ?, updated = ? WHERE id = ?",
                       (RunStatus(status).value, error, _now(), run_id))  # refuses a stray string

    def set_total(self, run_id: int, total: int) -> None:
        with self._transaction() as db:
            db.execute("UPDATE runs SET total = ?, updated = ? WHERE id = ?", (total, _now(), run_id))

    def add_wall_time(self, run_id: int, seconds: float) -> None:
        """Add a session's wall time to the run's (a resumed run adds each session's)."""
        with self._transaction() as db:
            db.execute("UPDATE runs SET wall_s = wall_s + ? WHERE id = ?", (max(seconds, 0.0), run_id))

    def get_run(self, run_id: int) -> RunRecord:
        rows = self._query(_RUN_SELECT + " WHERE r.id = ?", (run_id,))
        if not rows:
            raise StoreError(f"{self.path}: no run with id {run_id}")
        return _run_record(rows[0])

    def list_runs(self, *, status: RunStatus | None = None) -> list[RunRecord]:
        """Every run (or every run with this status), newest first."""
        where, params = ("WHERE r.status = ?", (status.value,)) if status else ("", ())
        rows = self._query(_RUN_SELECT + f" {where} ORDER BY r.id DESC", params)
        return [_run_record(row) for row in rows]

    def find_resumable(self, fingerprint: str) -> RunRecord | None:
        """The newest unfinished run made from the same config, if any."""
        marks = ", ".join("?" for _ in RESUMABLE_STATUSES)
        rows = self._query(
            _RUN_SELECT + f" WHERE r.fingerprint = ? AND r.status IN ({marks}) ORDER BY r.id DESC LIMIT 1",
            (fingerprint, *(status.value for status in RESUMABLE_STATUSES)),
        )
        return _run_record(rows[0]) if rows else None

    def find_finished(self, fingerprint: str, *, name: str = "") -> RunRecord | None:
        """The newest finished run made from the same config under the same name (a judge command
        given again shows it instead of adding an identical run)."""
        rows = self._query(
            _RUN_SELECT + " WHERE r.fingerprint = ? AND r.status = ? AND r.name = ? AND r.source_run IS NULL "
            "ORDER BY r.id DESC LIMIT 1",
            (fingerprint, RunStatus.FINISHED.value, name),
        )
        return _run_record(rows[0]) if rows else None

    def delete_run(self, run_id: int) -> bool:
        """Delete a run with its judgments and reviews. The response cache is kept."""
        with self._transaction() as db:
            return db.execute("DELETE FROM runs WHERE id = ?", (run_id,)).rowcount > 0

    # -- run locks -------------------------------------------------------------------------

    def lock_run(self, fingerprint: str, *, label: str = "") -> str:
        """Claim the run configuration ``fingerprint`` for this process; returns the lock's owner token.

        Raises :class:`RunLocked` naming the other process when a live one holds it
        (two processes on one run would send, and pay for, every request twice). A
        lock left by a process that no longer exists on this host is taken over.
        """
        owner = uuid.uuid4().hex
        host = socket.gethostname()
        with self._transaction() as db:
            row = db.execute("SELECT * FROM run_locks WHERE fingerprint = ?", (fingerprint,)).fetchone()
            if row is not None and not (row["host"] == host and not process_is_alive(int(row["pid"]))):
                what = f"run {row['run_id']}" if row["run_id"] is not None else f"run {label or fingerprint[:8]}"
                where = f"process {row['pid']}" + (f" on {row['host']}" if row["host"] != host else "")
                raise RunLocked(
                    f"{what} is already being executed by {where} (since {row['started'][:19]} UTC); "
                    "wait for it to finish or stop it, then run again", pid=int(row["pid"]), host=row["host"])
            db.execute("INSERT OR REPLACE INTO run_locks (fingerprint, run_id, pid, host, owner, started) "
                       "VALUES (?, NULL, ?, ?, ?, ?)", (fingerprint, os.getpid(), host, owner, _now()))
        return owner

    def set_lock_run(self, owner: str, run_id: int) -> None:
        """Name the run a held lock covers (known once the run is created or found)."""
        with self._transaction() as db:
            db.execute("UPDATE run_locks SET run_id = ? WHERE owner = ?", (run_id, owner))

    def unlock_run(self, owner: str) -> None:
        with self._transaction() as db:
            db.execute("DELETE FROM run_locks WHERE owner = ?", (owner,))

    def run_lock(self, fingerprint: str) -> dict[str, Any] | None:
        rows = self._query("SELECT * FROM run_locks WHERE fingerprint = ?", (fingerprint,))
        return dict(rows[0]) if rows else None

    # -- judgments -------------------------------------------------------------------------

    def add_judgment(self, run_id: int, judgment: Judgment, *, cache_key: str | None = None,
                     request_failed: bool = False, response: BackendResult | None = None,
                     model_identity: str = "") -> bool:
        """Store one judgment (and, when given, the backend response for the cache), committed at once.

        A row that already exists is only replaced when it records a failed
        request, so a retried request overwrites its failure and nothing else
        is ever written twice. Returns whether a row was written.
        """
        return self.add_judgments(run_id, [JudgmentWrite(judgment, cache_key, request_failed, response,
                                                         model_identity)]) > 0

    def add_judgments(self, run_id: int, writes: Iterable[JudgmentWrite]) -> int:
        """Store judgments (and their cached responses) in one transaction, as :meth:`add_judgment`
        stores one; returns how many rows were written. One commit for many rows is what keeps a
        fast judge from waiting on the disk."""
        now = _now()
        rows, cached = [], []
        for w in writes:
            row = _judgment_row(run_id, w.judgment, w.cache_key, w.request_failed, now)
            rows.append(row)
            if w.response is not None and w.cache_key is not None:
                cached.append(_cache_row(w.cache_key, w.model_identity, w.response, now, w.judgment, row))
        if not rows:
            return 0
        with self._transaction() as db:
            before = db.total_changes
            # A few hundred rows a call: each row's step lets go of the interpreter and takes it back
            # at once, which keeps an app's UI thread from it (core.foreground) for as long as the call.
            for start in range(0, len(rows), _WRITE_CHUNK):
                give_way(take_turn=False)
                db.executemany(_UPSERT_JUDGMENT, rows[start:start + _WRITE_CHUNK])
            written = db.total_changes - before
            for start in range(0, len(cached), _WRITE_CHUNK):
                give_way(take_turn=False)
                db.executemany(_UPSERT_CACHE, cached[start:start + _WRITE_CHUNK])
            db.execute("UPDATE runs SET updated = ? WHERE id = ?", (now, run_id))
        return written

    def done_keys(self, run_id: int, *, retry_failed: bool = True) -> set[JudgmentKey]:
        """Judgments already made; with ``retry_failed``, failed requests count as not done."""
        sql = "SELECT item_id, judge, repeat FROM judgments WHERE run_id = ?"
        if retry_failed:
            sql += " AND request_failed = 0"
        return {JudgmentKey(r["item_id"], r["judge"], r["repeat"]) for r in self._query(sql, (run_id,))}

    def request_failed_keys(self, run_id: int) -> set[JudgmentKey]:
        """Judgments whose request failed (no answer at all), as opposed to answers without a score."""
        rows = self._query("SELECT item_id, judge, repeat FROM judgments WHERE run_id = ? AND request_failed = 1",
                           (run_id,))
        return {JudgmentKey(r["item_id"], r["judge"], r["repeat"]) for r in rows}

    def mark_failed_for_retry(self, run_id: int) -> int:
        """Mark every judgment of a run without a score as a failed request, so the next run of its
        configuration asks again (a retry); returns how many. Scored judgments stay as they are."""
        with self._transaction() as db:
            return db.execute("UPDATE judgments SET request_failed = 1 WHERE run_id = ? AND score IS NULL",
                              (run_id,)).rowcount

    def pending(self, run_id: int, wanted: Iterable[JudgmentKey], *,
                retry_failed: bool = True) -> list[JudgmentKey]:
        """Of ``wanted``, those still to do when resuming, in the given order."""
        done = self.done_keys(run_id, retry_failed=retry_failed)
        return [key for key in wanted if key not in done]

    def count_judgments(self, run_id: int, *, failed_only: bool = False,
                        include_request_failures: bool = True) -> int:
        """Rows of a run; ``failed_only`` counts those without a score, optionally
        leaving out failed requests (which a resume retries)."""
        sql = "SELECT COUNT(*) FROM judgments WHERE run_id = ?"
        if failed_only:
            sql += " AND score IS NULL"
        if not include_request_failures:
            sql += " AND request_failed = 0"
        return int(self._query(sql, (run_id,))[0][0])

    def judge_counts(self, run_id: int) -> dict[str, tuple[int, int]]:
        """Per judge: (judgments stored, of which failed)."""
        rows = self._query(
            "SELECT judge, COUNT(*) AS n, SUM(score IS NULL) AS failed FROM judgments "
            "WHERE run_id = ? GROUP BY judge ORDER BY judge", (run_id,))
        return {r["judge"]: (int(r["n"]), int(r["failed"] or 0)) for r in rows}

    def failure_reasons(self, run_id: int) -> list[tuple[str, int]]:
        """Why a run's judgments failed: each distinct reason with its count, commonest first; those
        for too little valid mass grouped into one line with the range of masses."""
        rows = self._query(
            "SELECT error, valid_mass, COUNT(*) AS n FROM judgments WHERE run_id = ? AND score IS NULL "
            "GROUP BY error, valid_mass", (run_id,))
        return group_failure_reasons((r["error"] or "no score and no reason recorded", r["valid_mass"], int(r["n"]))
                                     for r in rows)

    # -- reading judgments -----------------------------------------------------------------
    # Reads go through a connection of their own (:meth:`_rows`), fetched in chunks: a large run
    # streams without holding the lock the engine's writes take, and WAL lets both go on at once.

    def _rows(self, sql: str, params: Iterable[Any] = ()) -> Iterator[tuple[Any, ...]]:
        """Plain tuples of one SELECT, read on a connection of their own (one consistent snapshot)."""
        for chunk in self._row_chunks(sql, params):
            yield from chunk

    def _row_chunks(self, sql: str, params: Iterable[Any] = ()) -> Iterator[list[tuple[Any, ...]]]:
        if str(self.path) == ":memory:":  # a second connection would see another database
            yield [tuple(row) for row in self._query(sql, params)]
            return
        try:
            reader = sqlite3.connect(self.path, check_same_thread=False)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: cannot read the run store: {exc}") from None
        try:
            reader.execute("PRAGMA query_only = 1")
            reader.execute("PRAGMA busy_timeout = 5000")
            cursor = reader.execute(sql, tuple(params))
            while chunk := cursor.fetchmany(_READ_CHUNK):
                give_way(take_turn=False)  # an app's UI thread first (see add_judgments)
                yield chunk
        finally:
            reader.close()

    def _judgments(self, where: str, params: Iterable[Any], order: str, *, limit: str = "") -> Iterator[Judgment]:
        parse = _JudgmentParser()
        sql = f"SELECT {_READ_SELECT} FROM judgments WHERE {where} ORDER BY {order}{limit}"
        for chunk in self._row_chunks(sql, params):
            yield from parse(chunk)

    def iter_judgments(self, run_id: int) -> Iterator[Judgment]:
        """Every judgment of a run, ordered by judge, item and repeat."""
        return self._judgments("run_id = ?", (run_id,), "judge, item_id, repeat")

    def load_judgments(self, run_id: int, *, repeat: int = 0) -> dict[str, dict[str, Judgment]]:
        """One repeat of a run as ``{judge: {item_id: Judgment}}``."""
        out: dict[str, dict[str, Judgment]] = {}
        for j in self._judgments("run_id = ? AND repeat = ?", (run_id, repeat), "judge, item_id"):
            out.setdefault(j.judge, {})[j.item_id] = j
        return out

    def load_repeats(self, run_id: int) -> dict[str, dict[str, dict[int, Judgment]]]:
        """Every repeat of a run as ``{judge: {item_id: {repeat: Judgment}}}``."""
        out: dict[str, dict[str, dict[int, Judgment]]] = {}
        for j in self.iter_judgments(run_id):
            out.setdefault(j.judge, {}).setdefault(j.item_id, {})[j.repeat] = j
        return out

    def judgment_page(self, run_id: int, *, offset: int = 0, limit: int = 100, judge: str | None = None,
                      repeat: int | None = None) -> JudgmentPage:
        """``limit`` judgments from the ``offset``-th, ordered by item, judge and repeat (the order of
        the run's unique key, so a page is read from its index, not found by sorting the run), with
        how many there are in all. ``judge`` and ``repeat`` narrow it to one judge or one repeat."""
        if offset < 0 or limit < 0:
            raise ValueError("offset and limit must not be negative")
        where, params = _page_filter(run_id, judge, repeat)
        total = int(next(self._rows(f"SELECT COUNT(*) FROM judgments WHERE {where}", params))[0])
        rows = list(self._judgments(where, (*params, limit, offset), "item_id, judge, repeat",
                                    limit=" LIMIT ? OFFSET ?"))
        return JudgmentPage(offset=offset, total=total, judgments=rows)

    def judgments_for_items(self, run_id: int, item_ids: Iterable[str], *, repeat: int | None = 0
                            ) -> dict[str, dict[str, list[Judgment]]]:
        """The judgments of the given items only (the rows a screen shows), as
        ``{item_id: {judge: [Judgment by repeat]}}``; ``repeat`` None: every repeat."""
        wanted = list(dict.fromkeys(item_ids))
        out: dict[str, dict[str, list[Judgment]]] = {}
        for start in range(0, len(wanted), _IN_CHUNK):
            chunk = wanted[start:start + _IN_CHUNK]
            where = f"run_id = ? AND item_id IN ({', '.join('?' for _ in chunk)})"
            params: list[Any] = [run_id, *chunk]
            if repeat is not None:
                where += " AND repeat = ?"
                params.append(repeat)
            for j in self._judgments(where, params, "item_id, judge, repeat"):
                out.setdefault(j.item_id, {}).setdefault(j.judge, []).append(j)
        return out

    def score_columns(self, run_id: int, *, repeat: int = 0) -> dict[str, ScoreColumns]:
        """One repeat of a run as arrays per judge, in item-id order: the scores and 0-1 scores
        (NaN: failed), for statistics, without a Judgment object per row."""
        rows = list(self._rows("SELECT judge, item_id, score, normalized FROM judgments "
                               "WHERE run_id = ? AND repeat = ? ORDER BY judge, item_id", (run_id, repeat)))
        out: dict[str, ScoreColumns] = {}
        start = 0
        while start < len(rows):
            judge = rows[start][0]
            end = start
            while end < len(rows) and rows[end][0] == judge:
                end += 1
            part = rows[start:end]
            out[judge] = ScoreColumns(
                judge=judge, item_ids=[r[1] for r in part],
                score=np.array([r[2] for r in part], dtype=np.float64),
                normalized=np.array([r[3] for r in part], dtype=np.float64))
            start = end
        return out

    def export_rows(self, run_id: int) -> list[dict[str, Any]]:
        """A run's judgments as flat rows (keys in :data:`EXPORT_COLUMNS` order) for CSV or JSON."""
        return [dict(zip(EXPORT_COLUMNS, row)) for row in self.export_tuples(run_id)]

    def export_tuples(self, run_id: int) -> Iterator[tuple[Any, ...]]:
        """:meth:`export_rows` as tuples in :data:`EXPORT_COLUMNS` order, streamed (a file writer
        needs no dict per row). An unknown run is an error at once, not an empty export."""
        self.get_run(run_id)
        rows = self._rows(f"SELECT {', '.join(EXPORT_COLUMNS)} FROM judgments WHERE run_id = ? "
                          "ORDER BY judge, item_id, repeat", (run_id,))
        return (_with_booleans(row) for row in rows)

    # -- response cache --------------------------------------------------------------------

    def cached_response(self, cache_key: str) -> BackendResult | None:
        return self.cached_responses([cache_key]).get(cache_key)

    def cached_responses(self, cache_keys: Iterable[str]) -> dict[str, BackendResult]:
        """The cached answers of those keys that have one."""
        keys = list(dict.fromkeys(cache_keys))
        out: dict[str, BackendResult] = {}
        for start in range(0, len(keys), _IN_CHUNK):
            chunk = keys[start:start + _IN_CHUNK]
            rows = self._query(
                "SELECT cache_key, raw_output, choice_probs, top_logprobs, prompt_tokens, evaluated_tokens, "
                "completion_tokens, latency, valid_mass, mass_lower_bound FROM response_cache "
                f"WHERE cache_key IN ({', '.join('?' for _ in chunk)})", chunk)
            for row in rows:
                top = json.loads(row["top_logprobs"]) if row["top_logprobs"] else None
                out[row["cache_key"]] = BackendResult(
                    raw_output=row["raw_output"],
                    choice_probs=json.loads(row["choice_probs"]) if row["choice_probs"] else None,
                    top_logprobs=[(str(t), float(p)) for t, p in top] if top is not None else None,
                    prompt_tokens=row["prompt_tokens"],
                    evaluated_tokens=row["evaluated_tokens"],
                    completion_tokens=row["completion_tokens"],
                    latency_s=row["latency"],
                    valid_mass=row["valid_mass"],
                    mass_is_lower_bound=bool(row["mass_lower_bound"]),
                )
        return out

    def put_cached_response(self, cache_key: str, model_identity: str, response: BackendResult) -> None:
        with self._transaction() as db:
            db.execute(_UPSERT_CACHE, _cache_row(cache_key, model_identity, response, _now()))

    def cache_size(self) -> int:
        return int(self._query("SELECT COUNT(*) FROM response_cache")[0][0])

    def clear_cache(self) -> int:
        with self._transaction() as db:
            return db.execute("DELETE FROM response_cache").rowcount

    # -- reviews ---------------------------------------------------------------------------

    def set_review(self, run_id: int, item_id: str, verdict: str, *, note: str = "",
                   own_rating: float | None = None) -> Review:
        if verdict not in REVIEW_VERDICTS:
            raise ValueError(f"unknown review verdict {verdict!r} (one of {', '.join(REVIEW_VERDICTS)})")
        now = _now()
        with self._transaction() as db:
            db.execute(
                "INSERT INTO reviews (run_id, item_id, verdict, note, own_rating, updated) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, item_id) DO UPDATE SET "
                "verdict = excluded.verdict, note = excluded.note, own_rating = excluded.own_rating, "
                "updated = excluded.updated",
                (run_id, item_id, verdict, note, own_rating, now),
            )
        return Review(run_id, item_id, verdict, note, own_rating, now)

    def reviews(self, run_id: int) -> dict[str, Review]:
        rows = self._query("SELECT * FROM reviews WHERE run_id = ? ORDER BY item_id", (run_id,))
        return {r["item_id"]: Review(r["run_id"], r["item_id"], r["verdict"], r["note"], r["own_rating"],
                                     r["updated"]) for r in rows}

    def delete_review(self, run_id: int, item_id: str) -> bool:
        with self._transaction() as db:
            return db.execute("DELETE FROM reviews WHERE run_id = ? AND item_id = ?",
                              (run_id, item_id)).rowcount > 0


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


# The encoders json.dumps(value, ensure_ascii=False, sort_keys=True) and json.dumps(value, sort_keys=True)
# build on every call, built once: the same text, without the cost of an encoder per value.
_ENCODE = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode
_ENCODE_ASCII = json.JSONEncoder(sort_keys=True).encode


def _json_or_none(value: Any) -> str | None:
    return None if value is None else _ENCODE(value)


def _pairs_json(pairs: Sequence[tuple[str, float]] | None) -> str | None:
    # JSON writes a tuple as a list: the text of [[token, logprob], ...], without a list per pair.
    return None if pairs is None else _ENCODE(pairs if isinstance(pairs, list) else list(pairs))


def _judgment_row(run_id: int, j: Judgment, cache_key: str | None, request_failed: bool, now: str
                  ) -> tuple[Any, ...]:
    return (
        run_id, j.item_id, j.judge, j.repeat, j.mode.value, cache_key, j.prompt_hash, j.raw_output,
        j.score, j.normalized, _json_or_none(j.distribution), j.reasoning, j.relevancy, j.latency_s,
        j.prompt_tokens, j.evaluated_tokens, j.completion_tokens, j.error, int(request_failed),
        int(j.cached), _ENCODE_ASCII(dict(j.sampling)), now, _pairs_json(j.top_logprobs),
        j.valid_mass, j.valid_in_top, int(j.mass_is_lower_bound),
    )


#: The columns a Judgment is read from, in the order :class:`_JudgmentParser` takes them.
_READ_COLUMNS = (
    "item_id", "judge", "mode", "prompt_hash", "raw_output", "score", "normalized", "error", "reasoning",
    "relevancy", "distribution", "latency", "prompt_tokens", "evaluated_tokens", "completion_tokens", "repeat",
    "cached", "sampling", "top_logprobs", "valid_mass", "valid_in_top", "mass_lower_bound",
)
_READ_SELECT = ", ".join(_READ_COLUMNS)
#: Rows fetched at a time when reading a run; item ids asked for in one IN (...) list.
_READ_CHUNK = 2000
_WRITE_CHUNK = 256
_IN_CHUNK = 500

_BOOLEAN_EXPORT_INDEXES = tuple(EXPORT_COLUMNS.index(c) for c in ("cached", "mass_lower_bound", "request_failed"))


def _with_booleans(row: tuple[Any, ...]) -> tuple[Any, ...]:
    out = list(row)
    for i in _BOOLEAN_EXPORT_INDEXES:
        out[i] = bool(out[i])
    return tuple(out)


class _JudgmentParser:
    """Rows of :data:`_READ_COLUMNS` as Judgments, a chunk at a time. The JSON columns of a chunk are
    parsed in one ``json.loads`` each (one array of the stored texts, every one of them written by
    ``json.dumps``); a run's sampling, the same in every judgment, is parsed once. Every Judgment
    gets its own dicts and lists (values nested deeper, as a sampling's stop strings, are shared:
    Judgments are never changed in place)."""

    def __init__(self) -> None:
        self._samplings: dict[str, Any] = {}
        self._modes = {m.value: m for m in ScoringMode}

    def _sampling(self, text: str) -> dict[str, Any]:
        value = self._samplings.get(text)
        if value is None:
            if len(self._samplings) >= 1000:  # a run whose every sampling differs: keep memory bounded
                self._samplings.clear()
            value = self._samplings[text] = json.loads(text)
        return dict(value)

    def __call__(self, rows: Sequence[tuple[Any, ...]]) -> list[Judgment]:
        modes, sampling = self._modes, self._sampling
        distributions = _json_column([row[10] for row in rows])
        tops = _json_column([row[18] for row in rows])
        # Positional, in the dataclass's field order (_READ_COLUMNS follows it; a test holds them together).
        return [
            Judgment(row[0], row[1], modes[row[2]], row[3], row[4], row[5], row[6], row[7], row[8], row[9],
                     distribution, row[11], row[12], row[13], row[14], row[15], bool(row[16]), sampling(row[17]),
                     [(str(t), float(p)) for t, p in top] if top is not None else None,
                     row[19], row[20], bool(row[21]))
            for row, distribution, top in zip(rows, distributions, tops)
        ]


def _json_column(texts: list[str | None]) -> list[Any]:
    """Each stored JSON text parsed (None for none), with one ``json.loads`` for all of them."""
    present = [text for text in texts if text]
    if not present:
        return [None] * len(texts)
    values = json.loads("[" + ",".join(present) + "]")
    if len(values) != len(present):  # not one value per text after all: parse them one by one
        values = [json.loads(text) for text in present]
    parsed = iter(values)
    return [next(parsed) if text else None for text in texts]


def _page_filter(run_id: int, judge: str | None, repeat: int | None) -> tuple[str, list[Any]]:
    where = "run_id = ?"
    params: list[Any] = [run_id]
    if judge is not None:
        where += " AND judge = ?"
        params.append(judge)
    if repeat is not None:
        where += " AND repeat = ?"
        params.append(repeat)
    return where, params


def _cache_row(cache_key: str, model_identity: str, r: BackendResult, now: str, j: Judgment | None = None,
               judgment_row: tuple[Any, ...] = ()) -> tuple[Any, ...]:
    # A judgment usually holds copies of its response's probabilities: their JSON, just made for the
    # judgment's row, is the same text (the same float objects: no 0.0 against -0.0), made once.
    choice_probs = (judgment_row[_DISTRIBUTION] if j is not None and _same_values(r.choice_probs, j.distribution)
                    else _json_or_none(r.choice_probs))
    top = (judgment_row[_TOP_LOGPROBS] if j is not None and _same_items(r.top_logprobs, j.top_logprobs)
           else _pairs_json(r.top_logprobs))
    return (cache_key, model_identity, r.raw_output, choice_probs, top, r.prompt_tokens, r.evaluated_tokens,
            r.completion_tokens, r.latency_s, now, r.valid_mass, int(r.mass_is_lower_bound))


_DISTRIBUTION = _JUDGMENT_COLUMNS.index("distribution")
_TOP_LOGPROBS = _JUDGMENT_COLUMNS.index("top_logprobs")


def _same_values(a: Mapping[str, float] | None, b: Mapping[str, float] | None) -> bool:
    if a is None or b is None:
        return a is b
    return a.keys() == b.keys() and all(a[k] is b[k] for k in a)


def _same_items(a: Sequence[Any] | None, b: Sequence[Any] | None) -> bool:
    if a is None or b is None:
        return a is b
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


#: A row that already exists is only replaced when it records a failed request.
_UPSERT_JUDGMENT = (
    f"INSERT INTO judgments ({', '.join(_JUDGMENT_COLUMNS)}) VALUES ({', '.join('?' for _ in _JUDGMENT_COLUMNS)}) "
    "ON CONFLICT (run_id, item_id, judge, repeat) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in _JUDGMENT_COLUMNS[4:])
    + " WHERE judgments.request_failed = 1"
)

_UPSERT_CACHE = (
    "INSERT OR REPLACE INTO response_cache (cache_key, model_identity, raw_output, choice_probs, "
    "top_logprobs, prompt_tokens, evaluated_tokens, completion_tokens, latency, created, valid_mass, "
    "mass_lower_bound) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
