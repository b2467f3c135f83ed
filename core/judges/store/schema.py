"""The run store's schema: its tables, the version a file records, and bringing an older file up to date."""

from __future__ import annotations

from .connection import StoreConnection
from .records import StoreError

#: 1: runs, judgments, response cache, reviews. 2: run locks. 3: judgments keep their top
#: log-probabilities (so a run can be rescored with another top-K) and runs their source run.
#: 4: judgments and cached answers keep the probability on valid answers at the answer position
#: (NULL in rows from before: unknown, shown as such), judgments how many valid answers their
#: top list showed and whether the mass is a lower bound. 5: a run may await a batch file's answers
#: (status 'awaiting') or be ``interrupted`` (its process ended without finishing it); the runs table is
#: rebuilt for its status check.
SCHEMA_VERSION = 5

#: The runs table's columns; {table} is "runs", or the new table an upgrade to version 5 fills.
_RUNS_TABLE = """
CREATE TABLE IF NOT EXISTS {table} (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    name TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'cancelled', 'failed', 'awaiting', 'interrupted')),
    config TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    total INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    -- The run this one was rescored from (core.judges.post_run.rescore); NULL for a judged run.
    source_run INTEGER,
    -- Seconds the engine spent on the run, summed over its sessions (resumes, retries).
    wall_s REAL NOT NULL DEFAULT 0
);
"""
_RUNS_INDEX = "CREATE INDEX IF NOT EXISTS runs_by_fingerprint ON runs (fingerprint, id);"

_SCHEMA = _RUNS_TABLE.format(table="runs") + _RUNS_INDEX + """

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


def prepare(connection: StoreConnection) -> None:
    """Check the file's version, set the connection up and bring the schema up to date."""
    version = _check_version(connection)  # before anything is written to a file we may not own
    connection.db.execute("PRAGMA journal_mode=WAL")
    connection.db.execute("PRAGMA synchronous=NORMAL")
    connection.db.execute("PRAGMA foreign_keys=ON")
    _migrate(connection, version)


def stored_version(connection: StoreConnection) -> int:
    """The schema version the file records."""
    with connection.lock:
        return int(connection.db.execute("PRAGMA user_version").fetchone()[0])


def _check_version(connection: StoreConnection) -> int:
    """The file's schema version; refuses a file this dialjudge must not touch."""
    # One statement, one snapshot: another process may be creating the schema right now.
    version, tables = connection.db.execute(
        "SELECT (SELECT user_version FROM pragma_user_version), (SELECT COUNT(*) FROM sqlite_master)").fetchone()
    if version == 0 and tables:
        raise StoreError(f"{connection.path}: an SQLite file that is not a dialjudge run store (no schema "
                         "version); use another data directory")
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{connection.path}: written by a newer dialjudge (schema {version}, this one reads "
            f"up to {SCHEMA_VERSION}); upgrade dialjudge or use another data directory"
        )
    return int(version)


def _migrate(connection: StoreConnection, version: int) -> None:
    if version < SCHEMA_VERSION:
        # One script so that two processes opening a fresh file cannot interleave;
        # every statement is idempotent (IF NOT EXISTS), so it also brings an older
        # store up to date: version 1 lacks only the run_locks table.
        with connection.lock:
            connection.db.executescript(f"BEGIN IMMEDIATE;\n{_SCHEMA}\nCOMMIT;")
        # Columns added since: ALTER TABLE has no IF NOT EXISTS, so look first, in one transaction.
        with connection.transaction() as db:
            for table, column, kind in _ADDED_COLUMNS:
                if column not in {row[1] for row in db.execute(f"PRAGMA table_info({table})")}:
                    db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
        if version and version < 5:
            _allow_new_statuses(connection)
        with connection.transaction() as db:
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    _ensure_indexes(connection)


def _allow_new_statuses(connection: StoreConnection) -> None:
    """Rebuild the runs table of a file from before version 5 so that its status check admits
    ``awaiting`` and ``interrupted`` (SQLite cannot change a check in place: SQLite's own procedure for altering a
    table, with foreign keys off so that dropping the old table deletes no judgment)."""
    with connection.lock:
        db = connection.db
        db.execute("PRAGMA foreign_keys=OFF")  # a no-op inside a transaction: set before it begins
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                sql = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'runs'").fetchone()
                if sql is not None and "'interrupted'" not in sql[0]:  # another process may have done it
                    columns = ", ".join(row[1] for row in db.execute("PRAGMA table_info(runs)"))
                    sequence = db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'runs'").fetchone()
                    db.execute(_RUNS_TABLE.format(table="runs_v5"))
                    db.execute(f"INSERT INTO runs_v5 ({columns}) SELECT {columns} FROM runs")
                    db.execute("DROP TABLE runs")
                    db.execute("ALTER TABLE runs_v5 RENAME TO runs")
                    db.execute(_RUNS_INDEX)
                    if sequence is not None:  # ids of deleted runs are still never given again
                        db.execute("UPDATE sqlite_sequence SET seq = MAX(seq, ?) WHERE name = 'runs'", (sequence[0],))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        finally:
            db.execute("PRAGMA foreign_keys=ON")


def _ensure_indexes(connection: StoreConnection) -> None:
    with connection.lock:
        present = {row[0] for row in connection.db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    missing = [sql for name, sql in _INDEXES.items() if name not in present]
    if missing:
        with connection.transaction() as db:
            for sql in missing:
                db.execute(sql)
