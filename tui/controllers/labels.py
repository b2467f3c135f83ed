"""A label quality's comparison for the Scores screen: a run's judges against the human majority.

Numeric qualities get running correlations; categorical and binary ones also need
% agreement, κ, α, the confusion matrix and AUC, which core computes from a stored
run (:func:`~dialjudge.core.judges.post_run.labels.run_label_report`, the same numbers
``dialjudge judge`` prints). That reads the store and bootstraps, so it runs on a
worker; the answer comes back to the app as :class:`LabelReportComputed`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.message import Message
from textual.worker import Worker, get_current_worker

from dialjudge.core.api import Report, reports_after_run, run_label_report

from ..state import Change
from .base import start_thread_work
from .history import dataset_for

if TYPE_CHECKING:
    from dialjudge.core.api import LabelReport, RunConfig

    from ..services import Services
    from .datasets import DatasetController

LABELS_GROUP = "label-report"


@dataclass
class LabelReportComputed(Message):
    """Run ``run_id``'s judges were compared with the human labels of ``report.quality``."""

    run_id: int
    report: LabelReport


class LabelReportController:
    """Keeps the latest run's label comparison; the Scores screen shows it for its quality."""

    def __init__(self, app: App[Any], services: Services, datasets: DatasetController) -> None:
        self.app = app
        self.services = services
        self.datasets = datasets
        self.report: LabelReport | None = None
        self.run_id: int | None = None

    def report_for(self, quality: str | None, numeric_qualities: Sequence[str]) -> LabelReport | None:
        """The comparison to show beside the view of ``quality``. A categorical quality has no
        numeric view, so its report shows whatever is chosen; a binary one (correlated too)
        shows with its own view only."""
        report = self.report
        if report is None:
            return None
        if report.quality in numeric_qualities and report.quality != quality:
            return None
        return report

    def compute(self, run_id: int, *, decide_in_background: bool = False) -> Worker[None] | None:
        """Compare run ``run_id`` with the human labels of the open dataset, when core's
        :func:`reports_after_run` says a labels report follows it (as ``dialjudge judge`` prints one);
        None when there is nothing to compare. ``decide_in_background``: that is decided on the worker
        too (reading the run's record and the dataset's qualities took seconds on the UI thread at
        100,000 items), and the worker is always returned."""
        dataset = self.datasets.workspace.dataset
        if dataset is None:
            return None

        def follows() -> RunConfig | None:
            with self.services.open_store() as store:
                config = store.runs.get_run(run_id).run_config
            if config.dataset != dataset.name or Report.LABELS not in reports_after_run(config, dataset):
                return None
            return config

        def work(config: RunConfig | None) -> None:
            if config is None:
                return
            with self.services.open_store() as store:
                judgments = store.judgments.load_judgments(run_id)
            data = dataset_for(self.services, config, dataset)
            report = run_label_report(config, data, judgments, n_boot=self.services.n_boot)
            if not get_current_worker().is_cancelled:
                self.app.post_message(LabelReportComputed(run_id, report))

        description = f"Comparing run {run_id} with the human labels"
        if decide_in_background:
            return start_thread_work(self.app, lambda: work(follows()), group=LABELS_GROUP, description=description)
        config = follows()
        if config is None:
            return None
        return start_thread_work(self.app, lambda: work(config), group=LABELS_GROUP, description=description)

    def computed(self, message: LabelReportComputed) -> None:
        self.report = message.report
        self.run_id = message.run_id
        self.datasets.publish(Change.STATS)
