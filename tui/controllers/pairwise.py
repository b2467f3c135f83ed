"""A pairwise run's report for the app: position bias, length preference, accuracy, per-candidate scores.

After a pairwise run finishes (or a stored one is loaded), core's
:func:`~dialjudge.core.judges.post_run.pairwise_report.pairwise_report` reads its verdicts
from the store on a worker; the answer comes back to the app as
:class:`PairwiseReportComputed`. The per-candidate columns (``judge:winrate``,
``judge:bt``) then join the workspace, so the Scores screen compares them with
the humans beside pointwise judges, with the same CIs; the Run screen shows the
report itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.message import Message
from textual.worker import Worker, get_current_worker

from dialjudge.core.api import (
    PreferenceRequest,
    Report,
    judge_evaluator,
    on_prepaired_items,
    pairwise_report,
    reports_after_run,
    stored_preference_report,
)

from ..state import Change
from .base import start_thread_work
from .history import dataset_for

if TYPE_CHECKING:
    from dialjudge.core.api import PairwiseReport, PreferenceReport

    from ..services import Services
    from .datasets import DatasetController

PAIRWISE_GROUP = "pairwise-report"


@dataclass
class PairwiseReportComputed(Message):
    """Pairwise run ``run_id``'s verdicts were summarised."""

    run_id: int
    report: PairwiseReport


@dataclass
class PreferenceReportComputed(Message):
    """Run ``run_id`` on pre-paired items was compared with the humans' votes."""

    run_id: int
    report: PreferenceReport
    #: The name of the dataset whose pairs were judged.
    dataset: str


class PairwiseReportController:
    """Keeps the latest pairwise run's report and puts its candidate scores into the workspace."""

    def __init__(self, app: App[Any], services: Services, datasets: DatasetController) -> None:
        self.app = app
        self.services = services
        self.datasets = datasets
        self.report: PairwiseReport | None = None
        #: A run on pre-paired items (pairwise or pointwise): its agreement with the humans' votes (issue 21).
        self.preference: PreferenceReport | None = None
        #: The dataset ``preference`` was computed on (screens show it only while that dataset is open).
        self.preference_dataset: str | None = None
        self.run_id: int | None = None

    def compute(self, run_id: int, *, decide_in_background: bool = False) -> Worker[None] | None:
        """Summarise run ``run_id`` when it is a pairwise run of the open dataset (or read it against the
        humans' votes when it ran on pre-paired items); None otherwise. ``decide_in_background``: whether
        a report follows the run is decided on the worker too (reading the run's record and the dataset's
        qualities took seconds on the UI thread at 100,000 items), and the worker is always returned."""
        dataset = self.datasets.workspace.dataset
        if dataset is None:
            return None
        if decide_in_background:
            def decide_and_work() -> None:
                found = self._work_for(run_id, dataset)
                if found is not None:
                    found[0]()

            return start_thread_work(self.app, decide_and_work, group=PAIRWISE_GROUP,
                                     description=f"Reports after run {run_id}")
        found = self._work_for(run_id, dataset)
        if found is None:
            return None
        work, description = found
        return start_thread_work(self.app, work, group=PAIRWISE_GROUP, description=description)

    def _work_for(self, run_id: int, dataset: Any) -> tuple[Callable[[], None], str] | None:
        """What summarises run ``run_id`` and how to describe it, or None when no report follows it."""
        with self.services.open_store() as store:
            config = store.runs.get_run(run_id).run_config
        if config.dataset != dataset.name:
            return None
        if on_prepaired_items(config, dataset):  # its replies are no candidates of the workspace
            return self._preferences_work(run_id, dataset), f"Comparing run {run_id} with the humans' preferences"
        if Report.PAIRWISE not in reports_after_run(config, dataset):
            return None

        def work() -> None:
            with self.services.open_store() as store:
                judgments = store.judgments.load_judgments(run_id)
            report = pairwise_report(config, dataset_for(self.services, config, dataset), judgments)
            if not get_current_worker().is_cancelled:
                self.app.post_message(PairwiseReportComputed(run_id, report))

        return work, f"Summarising pairwise run {run_id}"

    def preference_of(self, dataset: str | None) -> PreferenceReport | None:
        """The latest run on pre-paired items' report when it is of ``dataset`` (the open one), else None."""
        return self.preference if dataset is not None and dataset == self.preference_dataset else None

    def _preferences_work(self, run_id: int, dataset: Any) -> Callable[[], None]:
        def work() -> None:
            with self.services.open_store() as store:
                report = stored_preference_report(store, run_id, dataset, PreferenceRequest())
            if not get_current_worker().is_cancelled:
                self.app.post_message(PreferenceReportComputed(run_id, report, dataset.name))

        return work

    def preference_computed(self, message: PreferenceReportComputed) -> None:
        """A run on pre-paired items was read against the humans' votes: the Run and Scores screens show it."""
        self.report = None
        self.preference = message.report
        self.preference_dataset = message.dataset
        self.run_id = message.run_id
        self.datasets.publish(Change.JUDGES)

    def computed(self, message: PairwiseReportComputed) -> None:
        self.report = message.report
        self.preference = None
        self.run_id = message.run_id
        workspace = self.datasets.workspace
        for column, scores in message.report.score_columns().items():
            workspace.add_judge_scores(judge_evaluator(column, message.run_id), scores)
        self.datasets.publish(Change.JUDGES)
        self.datasets.refresh_stats()
