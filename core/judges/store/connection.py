"""The run store's one connection: a lock, transactions and queries on it, and chunked reads beside it.

Every part of the store (runs, judgments, the response cache, reviews, locks) works
over one :class:`StoreConnection`: one SQLite connection, guarded by a lock so a UI
thread may read while the event loop writes.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .records import StoreError

#: Rows fetched at a time when reading a run; keys asked for in one IN (...) list.
READ_CHUNK = 2000
IN_CHUNK = 500


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class StoreConnection:
    """One SQLite connection in autocommit mode: :meth:`transaction` opens a write transaction,
    :meth:`query` reads under the same lock, :meth:`rows` streams a large read on a connection
    of its own."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.RLock()
        self.db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA busy_timeout=5000")

    def close(self) -> None:
        with self.lock:
            self.db.close()

    @staticmethod
    def now() -> str:
        """The time stamp rows are written with (UTC, to the millisecond)."""
        return _now()

    def transaction(self) -> _Transaction:
        return _Transaction(self)

    def query(self, sql: str, params: Iterable[Any] = ()) -> list[sqlite3.Row]:
        with self.lock:
            return self.db.execute(sql, tuple(params)).fetchall()

    # Large reads go through a connection of their own, fetched in chunks: a large run streams
    # without holding the lock the engine's writes take, and WAL lets both go on at once.

    def rows(self, sql: str, params: Iterable[Any] = ()) -> Iterator[tuple[Any, ...]]:
        """Plain tuples of one SELECT, read on a connection of their own (one consistent snapshot)."""
        for chunk in self.row_chunks(sql, params):
            yield from chunk

    def row_chunks(self, sql: str, params: Iterable[Any] = ()) -> Iterator[list[tuple[Any, ...]]]:
        if str(self.path) == ":memory:":  # a second connection would see another database
            yield [tuple(row) for row in self.query(sql, params)]
            return
        try:
            reader = sqlite3.connect(self.path, check_same_thread=False)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: cannot read the run store: {exc}") from None
        try:
            reader.execute("PRAGMA query_only = 1")
            reader.execute("PRAGMA busy_timeout = 5000")
            cursor = reader.execute(sql, tuple(params))
            while chunk := cursor.fetchmany(READ_CHUNK):
                yield chunk
        finally:
            reader.close()


class _Transaction:
    def __init__(self, connection: StoreConnection) -> None:
        self.connection = connection

    def __enter__(self) -> sqlite3.Connection:
        self.connection.lock.acquire()
        self.connection.db.execute("BEGIN IMMEDIATE")
        return self.connection.db

    def __exit__(self, exc_type: object, *rest: object) -> None:
        try:
            self.connection.db.execute("ROLLBACK" if exc_type else "COMMIT")
        finally:
            self.connection.lock.release()
