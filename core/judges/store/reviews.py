"""Reviews: a person's verdict on a judgment of a run (the judge wrong, the human rating doubtful, fine)."""

from __future__ import annotations

from .connection import StoreConnection
from .records import Review

REVIEW_VERDICTS = ("judge-wrong", "human-doubtful", "fine")


class Reviews:
    """The reviews of one store (``store.reviews``)."""

    def __init__(self, connection: StoreConnection) -> None:
        self._connection = connection

    def set_review(self, run_id: int, item_id: str, verdict: str, *, note: str = "",
                   own_rating: float | None = None) -> Review:
        if verdict not in REVIEW_VERDICTS:
            raise ValueError(f"unknown review verdict {verdict!r} (one of {', '.join(REVIEW_VERDICTS)})")
        now = self._connection.now()
        with self._connection.transaction() as db:
            db.execute(
                "INSERT INTO reviews (run_id, item_id, verdict, note, own_rating, updated) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, item_id) DO UPDATE SET "
                "verdict = excluded.verdict, note = excluded.note, own_rating = excluded.own_rating, "
                "updated = excluded.updated",
                (run_id, item_id, verdict, note, own_rating, now),
            )
        return Review(run_id, item_id, verdict, note, own_rating, now)

    def reviews(self, run_id: int) -> dict[str, Review]:
        rows = self._connection.query("SELECT * FROM reviews WHERE run_id = ? ORDER BY item_id", (run_id,))
        return {r["item_id"]: Review(r["run_id"], r["item_id"], r["verdict"], r["note"], r["own_rating"],
                                     r["updated"]) for r in rows}

    def delete_review(self, run_id: int, item_id: str) -> bool:
        with self._connection.transaction() as db:
            return db.execute("DELETE FROM reviews WHERE run_id = ? AND item_id = ?",
                              (run_id, item_id)).rowcount > 0
