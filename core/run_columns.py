"""A run's judgments as evaluator columns: one 0-1 score per item and judge (None: failed), and
the judges' mean pool, which the agreement statistics take beside the reference-based metrics."""

from __future__ import annotations

from collections.abc import Mapping

from .judges.post_run.pool import PoolMethod, pool_scores
from .judges.store.run_store import RunStore
from .judges.types import Judgment

#: The column of the judges' mean score, when a run has more than one judge.
POOL = "pool"


def run_scores(store: RunStore, run_id: int, *, repeat: int = 0, with_pool: bool = True
               ) -> tuple[dict[str, dict[str, float | None]], dict[str, int]]:
    """A run's judges (and their mean pool) as evaluator columns of 0-1 scores, plus failure counts."""
    columns = store.judgments.score_columns(run_id, repeat=repeat)
    if with_pool and len(columns) > 1:  # the pool is made from the judgments themselves
        return judgment_columns(store.judgments.load_judgments(run_id, repeat=repeat), with_pool=with_pool)
    # One judge, or no pool: read as arrays, without a Judgment per row.
    return ({judge: column.normalized_by_item() for judge, column in columns.items()},
            {judge: int(column.failed.sum()) for judge, column in columns.items()})


def judgment_columns(table: Mapping[str, Mapping[str, Judgment]], *, with_pool: bool = True
                     ) -> tuple[dict[str, dict[str, float | None]], dict[str, int]]:
    """Judgments as loaded from the store (``{judge: {item: Judgment}}``) as evaluator columns."""
    scores: dict[str, dict[str, float | None]] = {}
    failures: dict[str, int] = {}
    for judge, judgments in table.items():
        scores[judge] = {item: j.normalized for item, j in judgments.items()}
        failures[judge] = sum(1 for j in judgments.values() if j.failed)
    if with_pool and len(table) > 1:
        pooled = pool_scores(dict(table), PoolMethod.MEAN)
        scores[POOL] = {item: p.value for item, p in pooled.items()}
        failures[POOL] = sum(1 for p in pooled.values() if p.value is None)
    return scores, failures
