"""What the app decides with, computed in the session's compute process (:mod:`.compute_worker`): two
evaluator columns compared (the paired bootstrap and Williams's test), the discernment table of an
adversarial set, and a stored run's label estimates (the alternative annotator test, the few-label
estimates and the "label next" plan, each a bootstrap or a resampling).

Each use case runs the same core function the command line runs in its own process, with the same
arguments, so the numbers are the same; only where it runs differs. In a thread of the app these took the
interpreter from its UI thread for as long as they resampled.

What crosses to the process: the two compared columns or every evaluator's column (in pieces, as
:meth:`~.compute_worker.ComputeWorker.compute` sends columns), the open dataset once (it is usually there
already), and small arguments. A stored run's judgments do not cross: the process opens the session's run
store itself (see :func:`label_estimates_in_worker`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..adversarial.discernment import DiscernmentTable, discernment_table
from ..config import Config
from ..errors import DialjudgeError
from ..judges.store.run_store import default_store_path
from ..model import Dataset
from ..stats.paired import PairedComparison
from .compute_worker import compute_worker
from .labels_estimates import AltTestReport, EstimateReport, LabelPlan
from .session import Session
from .stored_use_cases import alt_test_for_run, estimate_for_run, label_next
from .view import compare_columns

Column = Mapping[str, "float | None"]


@dataclass(frozen=True)
class LabelEstimates:
    """A run's alternative annotator tests and few-label estimates; a part that does not apply to the run
    is empty and its ``*_problem`` says why (the alternative annotator test needs three annotators)."""

    alt_tests: list[AltTestReport]
    alt_test_problem: str | None
    estimates: list[EstimateReport]
    estimate_problem: str | None


@dataclass(frozen=True)
class LabelNext:
    """A run's "label next" plan for one judge, and the estimate from the reviewers' own ratings so far
    (``estimate``, or ``estimate_problem`` saying why there is none yet)."""

    plan: LabelPlan
    estimate: EstimateReport | None
    estimate_problem: str | None


def compare_columns_in_worker(session: Session, dataset: Dataset, quality: str, subset: str,
                              columns: Mapping[str, Column | None], name_a: str, name_b: str, *, n_boot: int,
                              seed: int, is_cancelled: Callable[[], bool] | None = None) -> PairedComparison:
    """:func:`~.view.compare_columns` (column ``name_b`` against ``name_a``; a column given as None is the
    length baseline, computed there from the dataset), in the compute process."""
    sent = {name: column for name, column in columns.items() if column is not None}
    baselines = tuple(name for name, column in columns.items() if column is None)
    return compute_worker(session).compute(_compare_columns, dataset, quality, subset, tuple(columns), baselines,
                                           name_a, name_b, n_boot, seed, columns=sent, is_cancelled=is_cancelled)


def discernment_in_worker(session: Session, dataset: Dataset, evaluator_scores: Mapping[str, Column], *,
                          is_cancelled: Callable[[], bool] | None = None) -> DiscernmentTable:
    """:func:`~dialjudge.core.adversarial.discernment_table` of every evaluator column (in their order), in the
    compute process."""
    return compute_worker(session).compute(_discernment, dataset, tuple(evaluator_scores),
                                           columns=evaluator_scores, is_cancelled=is_cancelled)


# A stored run's answers are read in the process from the session's store, not read here and sent: the
# parent would build every judgment object of the run (100,000 rows of SQLite read into Python objects) and
# pickle them on its own interpreter, which is the UI thread's share this module exists to remove; the
# store's path and the configuration are all that cross (SQLite lets the two processes read it at once).
# The run's dataset is found as the command line finds it (``dataset_of_run``): the open one, which the
# process already holds, when the run judged it; else the process opens the run's own file.


def label_estimates_in_worker(session: Session, run_id: int, *, labelled: int, seed: int,
                              current: Dataset | None = None,
                              is_cancelled: Callable[[], bool] | None = None) -> LabelEstimates:
    """Run ``run_id``'s :func:`~.stored_use_cases.alt_test_for_run` and :func:`~.stored_use_cases.estimate_for_run`
    (``labelled`` labels drawn with ``seed``), as ``runs alt-test`` and ``runs estimate`` compute them, in
    the compute process; ``current``: the open dataset (used when it is the run's)."""
    return compute_worker(session).compute(_label_estimates, current, *_store_of(session), run_id, labelled, seed,
                                           is_cancelled=is_cancelled)


def label_next_in_worker(session: Session, run_id: int, *, budget: int, seed: int, judge: str | None = None,
                         current: Dataset | None = None,
                         is_cancelled: Callable[[], bool] | None = None) -> LabelNext:
    """Run ``run_id``'s items to label next for ``judge`` (default: the run's first), as ``runs label-next N
    --budget B --seed S``, and the estimate from the own ratings given so far, as ``runs estimate N --reviews
    --active-budget B --seed S``, in the compute process; ``current`` as for :func:`label_estimates_in_worker`.
    """
    return compute_worker(session).compute(_label_next, current, *_store_of(session), run_id, budget, seed, judge,
                                           is_cancelled=is_cancelled)


def _store_of(session: Session) -> tuple[Path, Config]:
    """Where the session's store is (resolved here: the process must open the parent's) and its configuration."""
    return session.store_path or default_store_path(), session.config


# -- the child's side ---------------------------------------------------------------------------------------


def _compare_columns(dataset: Dataset, columns: Mapping[str, Column], quality: str, subset: str,
                     names: tuple[str, ...], baselines: tuple[str, ...], name_a: str, name_b: str, n_boot: int,
                     seed: int, *, progress: Callable[[int, int], None]) -> PairedComparison:
    given = {name: None if name in baselines else columns[name] for name in names}
    return compare_columns(dataset, quality, subset, given, name_a, name_b, n_boot=n_boot, seed=seed)


def _discernment(dataset: Dataset, columns: Mapping[str, Column], names: tuple[str, ...], *,
                 progress: Callable[[int, int], None]) -> DiscernmentTable:
    return discernment_table(dataset, {name: columns[name] for name in names})


def _label_estimates(current: Dataset | None, columns: Mapping[str, Any], store_path: Path, app_config: Config,
                     run_id: int, labelled: int, seed: int, *,
                     progress: Callable[[int, int], None]) -> LabelEstimates:
    session = Session(app_config, store_path=store_path)
    alt_tests: list[AltTestReport] = []
    estimates: list[EstimateReport] = []
    alt_problem = estimate_problem = None
    try:
        alt_tests = alt_test_for_run(session, run_id, dataset=current, app_config=app_config)
    except DialjudgeError as exc:
        alt_problem = str(exc)
    try:
        estimates = estimate_for_run(session, run_id, labelled=labelled, seed=seed, dataset=current,
                                     app_config=app_config)
    except DialjudgeError as exc:
        estimate_problem = str(exc)
    return LabelEstimates(alt_tests, alt_problem, estimates, estimate_problem)


def _label_next(current: Dataset | None, columns: Mapping[str, Any], store_path: Path, app_config: Config,
                run_id: int, budget: int, seed: int, judge: str | None, *,
                progress: Callable[[int, int], None]) -> LabelNext:
    session = Session(app_config, store_path=store_path)
    judges = [judge] if judge is not None else None
    plan = label_next(session, run_id, budget=budget, seed=seed, judges=judges, dataset=current,
                      app_config=app_config)[0]
    estimate: EstimateReport | None = None
    problem = None
    try:
        (estimate,) = estimate_for_run(session, run_id, judges=[plan.judge], from_reviews=True, active_budget=budget,
                                       seed=seed, dataset=current, app_config=app_config)
    except DialjudgeError as exc:
        problem = str(exc)
    return LabelNext(plan, estimate, problem)


__all__ = ["LabelEstimates", "LabelNext", "compare_columns_in_worker", "discernment_in_worker",
           "label_estimates_in_worker", "label_next_in_worker"]
