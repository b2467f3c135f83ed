"""The run store: every run, every judgment, a response cache and the reviews, in SQLite.

One file, ``<user_data_dir>/runs.sqlite3``, in WAL mode so the TUI can read
while a run writes. Judgments are committed in small batches as they arrive
(:meth:`.judgments.Judgments.add_judgments`; the engine commits at least every
quarter of a second) and the pair (run, item, judge, repeat) is unique, so a run
killed at any point resumes without duplicating anything, redoing at most its last
uncommitted batch. API keys never reach this file: run
configs carry only the *name* of the key's environment variable.

:class:`RunStore` opens the file and hands out its parts, each over the store's one
connection (:mod:`.connection`): ``runs``, ``judgments``, ``cache`` (the response
cache), ``reviews`` and ``locks``; the schema is :mod:`.schema`, the value types
:mod:`.records`.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ...config import user_data_dir
from .cache import ResponseCache
from .connection import StoreConnection
from .judgment_rows import EXPORT_COLUMNS
from .judgments import Judgments
from .locks import RunLocks, process_is_alive
from .records import (
    JudgmentKey,
    JudgmentPage,
    JudgmentWrite,
    Review,
    RunLocked,
    RunRecord,
    ScoreColumns,
    StoreError,
)
from .reviews import REVIEW_VERDICTS, Reviews
from .runs import RESUMABLE_STATUSES, RUN_STATUSES, Runs
from .schema import SCHEMA_VERSION, prepare, stored_version

# The names modules import from here, wherever they are defined.
__all__ = [
    "EXPORT_COLUMNS", "RESUMABLE_STATUSES", "REVIEW_VERDICTS", "RUN_STATUSES", "SCHEMA_VERSION", "STORE_FILENAME",
    "JudgmentKey", "JudgmentPage", "JudgmentWrite", "Review", "RunLocked", "RunRecord", "RunStore", "ScoreColumns",
    "StoreError", "default_store_path", "process_is_alive",
]

STORE_FILENAME = "runs.sqlite3"


def default_store_path() -> Path:
    return user_data_dir() / STORE_FILENAME


class RunStore:
    """SQLite-backed store of runs. Open with a path, or none for the default file.

    One connection, guarded by a lock so a UI thread may read while the event
    loop writes, shared by the parts the store hands out.
    """

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path is not None else default_store_path()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            connection = StoreConnection(self.path)
            try:
                prepare(connection)
            except StoreError:
                connection.close()
                raise
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: cannot open the run store: {exc}") from None
        except OSError as exc:
            raise StoreError(f"{self.path}: cannot create the run store: {exc.strerror}") from None
        self._connection = connection
        self.runs = Runs(connection)
        self.judgments = Judgments(connection, self.runs)
        self.cache = ResponseCache(connection)
        self.reviews = Reviews(connection)
        self.locks = RunLocks(connection)

    @property
    def schema_version(self) -> int:
        return stored_version(self._connection)

    def close(self) -> None:
        self._connection.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
