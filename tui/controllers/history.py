"""The run store's runs, for the Runs screen: listing, comparing, exporting, rescoring, retrying, cost and
latency, and showing one on the Scores screen.

Everything here reads or writes the run store, or opens a dataset, so each
step is a worker; results go as messages to the screen that asked. Showing a
stored run's judges changes the workspace, so that answer comes back to the
app (:class:`RunScoresLoaded`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.message import Message
from textual.message_pump import MessagePump
from textual.worker import Worker, get_current_worker

from dialjudge.core.api import (
    CompareRequest,
    ExportRequest,
    ImportRequest,
    ImportResult,
    RescoreRequest,
    RescoreResult,
    RunComparison,
    RunRecord,
    compare,
    export,
    import_scores,
    judge_columns,
    list_runs,
    prepare_retry,
    rescore,
    run_config_of,
    usage_of_run,
)
from dialjudge.core.api.types import (
    RunConfig,
    RunUsage,
)
from dialjudge.core.api.view import judge_evaluator, judge_scale
from dialjudge.core.errors import ConfigError
from dialjudge.core.model import Dataset

from ..state import Change
from .base import start_thread_work

if TYPE_CHECKING:
    from ..services import Services
    from .datasets import DatasetController

#: RescoreRequest is core's (core.api); the rescore dialog imports it from here too.
__all__ = ["RescoreRequest", "RunsListed", "FilesExported", "RunsCompared", "RunRescored", "RetryPrepared",
           "RunUsageRead", "RunScoresLoaded", "StoredRunsController", "dataset_for", "ScoresImported"]

RUNS_GROUP = "runs-list"
COMPARE_GROUP = "runs-compare"
EXPORT_GROUP = "export"
LOAD_RUN_GROUP = "load-run"
RESCORE_GROUP = "rescore"
RETRY_GROUP = "retry-prepare"
IMPORT_GROUP = "import-scores"
USAGE_GROUP = "run-usage"


@dataclass
class RunsListed(Message):
    """The run store's runs, newest first."""

    runs: list[RunRecord]


@dataclass
class FilesExported(Message):
    """Files were written for an export."""

    what: str
    paths: tuple[Path, ...]


@dataclass
class RunsCompared(Message):
    """Two runs' correlation deltas and prompt diff."""

    comparison: RunComparison


@dataclass
class RunRescored(Message):
    """A stored run was scored again, without the model, into a new run."""

    result: RescoreResult


@dataclass
class ScoresImported(Message):
    """A file of judge scores made elsewhere was stored as a run of kind "imported"."""

    result: ImportResult


@dataclass
class RetryPrepared(Message):
    """A run's failed judgments were marked to be asked again; the run can start (on the open dataset)."""

    run_id: int
    config: RunConfig
    failed: int


@dataclass
class RunUsageRead(Message):
    """A stored run's tokens, wall time, throughput and estimated cost, per judge."""

    usage: RunUsage


@dataclass
class RunScoresLoaded(Message):
    """A stored run's judge columns were read, to be shown beside the open dataset's evaluators."""

    run_id: int
    dataset: str
    scores: dict[str, dict[str, float | None]]
    #: The judges' own scale (core.api.view.judge_scale); None: 0-1 only.
    scale: tuple[float, float] | None = None


def dataset_for(services: Services, config: RunConfig, current: Dataset | None) -> Dataset:
    """The run's dataset: the open one when it is the same, else read again (call it on a worker)."""
    if current is not None and current.name == config.dataset:
        return current
    return services.open_dataset(config.dataset_path or config.dataset)


class StoredRunsController:
    """The Runs screen's workers, and stored runs shown on the Scores screen."""

    def __init__(self, app: App[Any], services: Services, datasets: DatasetController) -> None:
        self.app = app
        self.services = services
        self.datasets = datasets

    def list(self, reply_to: MessagePump, *, dataset: str | None = None,
             group: str = RUNS_GROUP) -> Worker[None]:
        """Every stored run (of ``dataset`` only, when given); ``reply_to`` receives :class:`RunsListed`.

        Each screen lists in its own ``group``, so one screen's listing never cancels another's.
        """

        def read() -> None:
            runs = list_runs(self.services.session, dataset=dataset)
            if not get_current_worker().is_cancelled:
                reply_to.post_message(RunsListed(runs))

        return start_thread_work(self.app, read, group=group, description="Reading the runs")

    def compare(self, run_a: int, run_b: int, reply_to: MessagePump) -> Worker[None]:
        """Correlation deltas and the prompt diff of two runs; ``reply_to`` receives :class:`RunsCompared`."""
        current = self.datasets.workspace.dataset

        def compare_runs() -> None:
            dataset = dataset_for(self.services, run_config_of(self.services.session, run_a), current)
            comparison = compare(self.services.session, CompareRequest(run_a, run_b, seed=self.services.seed),
                                 self.services.config, current=dataset)
            if not get_current_worker().is_cancelled:
                reply_to.post_message(RunsCompared(comparison))

        return start_thread_work(self.app, compare_runs, group=COMPARE_GROUP, description="Comparing runs")

    def export(self, run_id: int, folder: Path, formats: Sequence[str], reply_to: MessagePump) -> Worker[None]:
        """Write a run's agreement tables and judgments; ``reply_to`` receives :class:`FilesExported`."""
        workspace = self.datasets.workspace
        current = workspace.dataset
        # The open dataset's metric scores are already computed: they join the run's judges.
        metrics: dict[str, dict[str, float | None]] = {
            name: dict(workspace.scores_of(name)) for name in workspace.metric_names}
        chosen = tuple(formats)

        def export_files() -> None:
            dataset = dataset_for(self.services, run_config_of(self.services.session, run_id), current)
            extra = metrics if current is not None and dataset is current else None
            request = ExportRequest(run_id, Path(folder), chosen, n_boot=self.services.n_boot,
                                    seed=self.services.seed, metric_scores=extra)
            result = export(self.services.session, request, self.services.config, current=dataset)
            reply_to.post_message(FilesExported(f"run {run_id}", result.paths))

        return start_thread_work(self.app, export_files, group=EXPORT_GROUP, description="Exporting the run")

    def rescore(self, run_id: int, request: RescoreRequest, reply_to: MessagePump) -> Worker[None]:
        """Score run ``run_id``'s stored answers again into a new run (no model); ``reply_to`` receives
        :class:`RunRescored`."""
        current = self.datasets.workspace.dataset

        def rescore_run() -> None:
            dataset = dataset_for(self.services, run_config_of(self.services.session, run_id), current)
            result, _settings = rescore(self.services.session, run_id, request, self.services.config, current=dataset)
            reply_to.post_message(RunRescored(result))

        return start_thread_work(self.app, rescore_run, group=RESCORE_GROUP, description="Rescoring the run")

    def import_scores(self, request: ImportRequest, reply_to: MessagePump) -> Worker[None]:
        """Store a file of judge scores as a run, matched to the open dataset; ``reply_to`` receives
        :class:`ScoresImported` (a refused import fails the worker: its message names the problems)."""
        current = self.datasets.workspace.dataset

        def read_and_store() -> None:
            result = import_scores(self.services.session, request, self.services.config, current=current)
            reply_to.post_message(ScoresImported(result))

        return start_thread_work(self.app, read_and_store, group=IMPORT_GROUP, description="Importing scores")

    def prepare_retry(self, run_id: int, reply_to: MessagePump) -> Worker[None]:
        """Mark run ``run_id``'s failed judgments to be asked again; ``reply_to`` receives :class:`RetryPrepared`
        and starts the run through the run controller (its progress, Esc cancels)."""
        current = self.datasets.workspace.dataset

        def prepare() -> None:
            if current is None:
                raise ConfigError(f"open the dataset of run {run_id} first (Datasets screen), then retry")
            retry = prepare_retry(self.services.session, run_id, current)
            reply_to.post_message(RetryPrepared(retry.run_id, retry.config, retry.failed))

        return start_thread_work(self.app, prepare, group=RETRY_GROUP, description="Preparing the retry")

    def usage(self, run_id: int, reply_to: MessagePump, *, group: str = USAGE_GROUP) -> Worker[None]:
        """A run's cost and latency per judge; ``reply_to`` receives :class:`RunUsageRead` (each screen
        reads in its own ``group``)."""
        config = self.services.config

        def read() -> None:
            usage = usage_of_run(self.services.session, run_id, config)
            if not get_current_worker().is_cancelled:
                reply_to.post_message(RunUsageRead(usage))

        return start_thread_work(self.app, read, group=group, description="Reading the run's cost")

    # -- a stored run on the Scores screen -------------------------------------------------

    def show_in_scores(self, run_id: int) -> Worker[None]:
        """Add a stored run's judges to the open dataset's evaluators (the Scores screen shows them)."""

        current = self.datasets.workspace.dataset

        def load() -> None:
            dataset, scores = judge_columns(self.services.session, run_id)
            config = run_config_of(self.services.session, run_id)
            scale = None if config.pairs is not None else judge_scale(
                config, current if current is not None and current.name == dataset else None)
            if not get_current_worker().is_cancelled:
                self.app.post_message(RunScoresLoaded(run_id, dataset, scores, scale))

        return start_thread_work(self.app, load, group=LOAD_RUN_GROUP, description="Reading the run")

    def run_scores_loaded(self, message: RunScoresLoaded) -> None:
        workspace = self.datasets.workspace
        if workspace.dataset is None or workspace.dataset.name != message.dataset:
            shown = workspace.dataset.name if workspace.dataset is not None else "no dataset"
            self.app.notify(f"run {message.run_id} judged {message.dataset}, but {shown} is open; "
                            f"open {message.dataset} first (Datasets screen)", severity="warning", timeout=8)
            return
        if not message.scores:
            self.app.notify(f"run {message.run_id} has no judgments yet", severity="warning")
            return
        for judge, scores in message.scores.items():
            workspace.add_judge_scores(judge_evaluator(judge, message.run_id), scores)
            workspace.set_judge_scale(judge_evaluator(judge, message.run_id), message.scale)
        self.datasets.publish(Change.JUDGES)
        self.datasets.refresh_stats()
        names = ", ".join(judge_evaluator(j, message.run_id) for j in message.scores)
        self.app.notify(f"Scores now show {names}", timeout=5)
