"""A run's judgments: written in batches (with their answers for the response cache), counted, and read back
in chunks (whole, by repeat, by page, by item, as score columns, as export rows)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from ..run.scoring import group_failure_reasons
from ..types import BackendResult, Judgment
from .connection import IN_CHUNK, StoreConnection
from .judgment_rows import (
    EXPORT_COLUMNS,
    READ_SELECT,
    UPSERT_CACHE,
    UPSERT_JUDGMENT,
    JudgmentParser,
    cache_row,
    judgment_row,
    with_booleans,
)
from .records import JudgmentKey, JudgmentPage, JudgmentWrite, ScoreColumns
from .runs import Runs

#: Rows given to one executemany (see add_judgments).
_WRITE_CHUNK = 256


class Judgments:
    """The judgments of one store (``store.judgments``); ``runs`` tells an unknown run from an empty one."""

    def __init__(self, connection: StoreConnection, runs: Runs) -> None:
        self._connection = connection
        self._runs = runs

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
        now = self._connection.now()
        rows, cached = [], []
        for w in writes:
            row = judgment_row(run_id, w.judgment, w.cache_key, w.request_failed, now)
            rows.append(row)
            if w.response is not None and w.cache_key is not None:
                cached.append(cache_row(w.cache_key, w.model_identity, w.response, now, w.judgment, row))
        if not rows:
            return 0
        with self._connection.transaction() as db:
            before = db.total_changes
            # A few hundred rows a call: each row's step lets go of the interpreter and takes it back at
            # once, which keeps any other thread of the process from it for as long as the call.
            for start in range(0, len(rows), _WRITE_CHUNK):
                db.executemany(UPSERT_JUDGMENT, rows[start:start + _WRITE_CHUNK])
            written = db.total_changes - before
            for start in range(0, len(cached), _WRITE_CHUNK):
                db.executemany(UPSERT_CACHE, cached[start:start + _WRITE_CHUNK])
            db.execute("UPDATE runs SET updated = ? WHERE id = ?", (now, run_id))
        return written

    def done_keys(self, run_id: int, *, retry_failed: bool = True) -> set[JudgmentKey]:
        """Judgments already made; with ``retry_failed``, failed requests count as not done."""
        sql = "SELECT item_id, judge, repeat FROM judgments WHERE run_id = ?"
        if retry_failed:
            sql += " AND request_failed = 0"
        rows = self._connection.query(sql, (run_id,))
        return {JudgmentKey(r["item_id"], r["judge"], r["repeat"]) for r in rows}

    def request_failed_keys(self, run_id: int) -> set[JudgmentKey]:
        """Judgments whose request failed (no answer at all), as opposed to answers without a score."""
        rows = self._connection.query(
            "SELECT item_id, judge, repeat FROM judgments WHERE run_id = ? AND request_failed = 1", (run_id,))
        return {JudgmentKey(r["item_id"], r["judge"], r["repeat"]) for r in rows}

    def mark_answered_anew(self, run_id: int, keys: Iterable[JudgmentKey]) -> int:
        """Mark the run's judgments ``keys`` as answered for this run, not reused from the cache (a batch
        run's answers, scored through the cache: they were asked, and cost, for it). One statement per
        judgment through the run's unique (run, item, judge, repeat) index: matching by cache key scanned
        the run's rows once per chunk of keys, quadratic in a 100,000-answer import."""
        rows = [(run_id, key.item_id, key.judge, key.repeat) for key in dict.fromkeys(keys)]
        with self._connection.transaction() as db:
            before = db.total_changes
            db.executemany("UPDATE judgments SET cached = 0 WHERE run_id = ? AND item_id = ? AND judge = ? "
                           "AND repeat = ? AND cached = 1", rows)
            return db.total_changes - before

    def mark_failed_for_retry(self, run_id: int) -> int:
        """Mark every judgment of a run without a score as a failed request, so the next run of its
        configuration asks again (a retry); returns how many. Scored judgments stay as they are."""
        with self._connection.transaction() as db:
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
        return int(self._connection.query(sql, (run_id,))[0][0])

    def judge_counts(self, run_id: int) -> dict[str, tuple[int, int]]:
        """Per judge: (judgments stored, of which failed)."""
        rows = self._connection.query(
            "SELECT judge, COUNT(*) AS n, SUM(score IS NULL) AS failed FROM judgments "
            "WHERE run_id = ? GROUP BY judge ORDER BY judge", (run_id,))
        return {r["judge"]: (int(r["n"]), int(r["failed"] or 0)) for r in rows}

    def failure_reasons(self, run_id: int) -> list[tuple[str, int]]:
        """Why a run's judgments failed: each distinct reason with its count, commonest first; those
        for too little valid mass grouped into one line with the range of masses."""
        rows = self._connection.query(
            "SELECT error, valid_mass, COUNT(*) AS n FROM judgments WHERE run_id = ? AND score IS NULL "
            "GROUP BY error, valid_mass", (run_id,))
        return group_failure_reasons((r["error"] or "no score and no reason recorded", r["valid_mass"], int(r["n"]))
                                     for r in rows)

    # Reads go through a connection of their own (StoreConnection.row_chunks), fetched in chunks.

    def _judgments(self, where: str, params: Iterable[Any], order: str, *, limit: str = "") -> Iterator[Judgment]:
        parse = JudgmentParser()
        sql = f"SELECT {READ_SELECT} FROM judgments WHERE {where} ORDER BY {order}{limit}"
        for chunk in self._connection.row_chunks(sql, params):
            yield from parse(chunk)

    def last_judgment_id(self) -> int:
        """The id of the newest judgment written to the store (of any run; 0: none yet)."""
        return int(self._connection.query("SELECT COALESCE(MAX(id), 0) FROM judgments")[0][0])

    def judgments_after(self, run_id: int, after_id: int, *, limit: int = 5000) -> tuple[list[Judgment], int]:
        """Up to ``limit`` judgments of a run written after the one with id ``after_id``, in the order they
        were written, with the id to ask after next time (``after_id`` when there were none). Ids follow the
        order of writing (a retried request's answer takes a new one): a process following a run another
        process writes reads only what is new."""
        # "+run_id": not the (run_id, ...) index, whose every entry of the run SQLite would read and then sort
        # on each call (at 100,000 judgments, the app's follower spent most of a core on it), but the id's own
        # order from after_id on: only what is new is read.
        rows = self._connection.query("SELECT id FROM judgments WHERE +run_id = ? AND id > ? ORDER BY id LIMIT ?",
                                      (run_id, after_id, limit))
        if not rows:
            return [], after_id
        last = int(rows[-1][0])
        found = list(self._judgments("+run_id = ? AND id > ? AND id <= ?", (run_id, after_id, last), "id"))
        return found, last

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
        total = int(next(self._connection.rows(f"SELECT COUNT(*) FROM judgments WHERE {where}", params))[0])
        rows = list(self._judgments(where, (*params, limit, offset), "item_id, judge, repeat",
                                    limit=" LIMIT ? OFFSET ?"))
        return JudgmentPage(offset=offset, total=total, judgments=rows)

    def judgments_for_items(self, run_id: int, item_ids: Iterable[str], *, repeat: int | None = 0
                            ) -> dict[str, dict[str, list[Judgment]]]:
        """The judgments of the given items only (the rows a screen shows), as
        ``{item_id: {judge: [Judgment by repeat]}}``; ``repeat`` None: every repeat."""
        wanted = list(dict.fromkeys(item_ids))
        out: dict[str, dict[str, list[Judgment]]] = {}
        for start in range(0, len(wanted), IN_CHUNK):
            chunk = wanted[start:start + IN_CHUNK]
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
        rows = list(self._connection.rows("SELECT judge, item_id, score, normalized FROM judgments "
                                          "WHERE run_id = ? AND repeat = ? ORDER BY judge, item_id",
                                          (run_id, repeat)))
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
        self._runs.get_run(run_id)
        rows = self._connection.rows(f"SELECT {', '.join(EXPORT_COLUMNS)} FROM judgments WHERE run_id = ? "
                                     "ORDER BY judge, item_id, repeat", (run_id,))
        return (with_booleans(row) for row in rows)


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
