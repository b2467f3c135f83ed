"""Can the judge replace an annotator, and what do a few labels buy: a stored run's answers for the app.

Both come from core (:func:`~dialjudge.core.api.labels_estimates.alt_test_for_run` and
:func:`~dialjudge.core.api.labels_estimates.estimate_for_run`, the functions behind
``dialjudge runs alt-test`` and ``runs estimate``). They read the store, resample and
test, so they run in the compute process (``core/api/decisions_in_worker.py``, which
reads the run from the store there), waited for on a thread worker; the screen that
asked receives :class:`LabelEstimatesComputed`. Either part may not apply to a run (the
alternative annotator test needs three annotators): its reason travels in the message,
so the other part still shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.message import Message
from textual.message_pump import MessagePump
from textual.worker import Worker, get_current_worker

from dialjudge.core.api import (
    AltTestReport,
    EstimateReport,
    LabelPlan,
)
from dialjudge.core.api.compute_worker import ComputeCancelled
from dialjudge.core.api.decisions_in_worker import label_estimates_in_worker, label_next_in_worker

from .base import start_thread_work

if TYPE_CHECKING:
    from ..services import Services
    from .datasets import DatasetController

LABEL_ESTIMATES_GROUP = "label-estimates"
LABEL_NEXT_GROUP = "label-next"
#: What ``runs estimate N --labelled 50 --seed 0`` asks: 50 labels drawn with seed 0.
DEFAULT_LABELLED = 50
DEFAULT_SEED = 0


@dataclass
class LabelEstimatesComputed(Message):
    """Run ``run_id``'s judges were put to the alternative annotator test and estimated from a few labels.

    A part that does not apply to the run is empty, and its ``*_problem`` says why."""

    run_id: int
    alt_tests: list[AltTestReport]
    alt_test_problem: str | None
    estimates: list[EstimateReport]
    estimate_problem: str | None


@dataclass
class LabelNextPlanned(Message):
    """The Review queue's "label next" plan of run ``run_id`` was drawn, and the estimate from the reviewers'
    own ratings so far (``estimate``, or ``estimate_problem`` saying why there is none yet) computed."""

    run_id: int
    plan: LabelPlan
    estimate: EstimateReport | None
    estimate_problem: str | None


class LabelEstimatesController:
    """Computes a run's alternative annotator test and few-label estimates on a worker."""

    def __init__(self, app: App[Any], services: Services, datasets: DatasetController) -> None:
        self.app = app
        self.services = services
        self.datasets = datasets

    def compute(self, run_id: int, reply_to: MessagePump, *, labelled: int = DEFAULT_LABELLED,
                seed: int = DEFAULT_SEED) -> Worker[None]:
        """Test and estimate run ``run_id`` as the CLI does by default (``--labelled`` and ``--seed`` as given);
        ``reply_to`` receives :class:`LabelEstimatesComputed`."""
        current = self.datasets.workspace.dataset
        session = self.services.session

        def work() -> None:
            worker = get_current_worker()
            try:  # in the compute process, which reads the run from the store itself
                found = label_estimates_in_worker(session, run_id, labelled=labelled, seed=seed, current=current,
                                                  is_cancelled=lambda: worker.is_cancelled)
            except ComputeCancelled:
                return
            if not worker.is_cancelled:
                reply_to.post_message(LabelEstimatesComputed(run_id, found.alt_tests, found.alt_test_problem,
                                                             found.estimates, found.estimate_problem))

        return start_thread_work(self.app, work, group=LABEL_ESTIMATES_GROUP,
                                 description=f"Testing run {run_id}'s judge against the annotators")

    def plan_label_next(self, run_id: int, reply_to: MessagePump, *, budget: int, seed: int = DEFAULT_SEED,
                        judge: str | None = None) -> Worker[None]:
        """Draw run ``run_id``'s items to label next (as ``runs label-next N --budget B --seed S``) for ``judge``
        (default: the run's first) and estimate from the own ratings given so far (as ``runs estimate N
        --reviews --active-budget B --seed S``); ``reply_to`` receives :class:`LabelNextPlanned`."""
        current = self.datasets.workspace.dataset
        session = self.services.session

        def work() -> None:
            worker = get_current_worker()
            try:  # in the compute process, which reads the run from the store itself
                found = label_next_in_worker(session, run_id, budget=budget, seed=seed, judge=judge, current=current,
                                             is_cancelled=lambda: worker.is_cancelled)
            except ComputeCancelled:
                return
            if not worker.is_cancelled:
                reply_to.post_message(LabelNextPlanned(run_id, found.plan, found.estimate, found.estimate_problem))

        return start_thread_work(self.app, work, group=LABEL_NEXT_GROUP,
                                 description=f"Drawing run {run_id}'s items to label next")
