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

from ..state import Change
from .base import start_thread_work

if TYPE_CHECKING:
    from dialjudge.core.compare import RunComparison
    from dialjudge.core.judges.post_run.cost import RunUsage
    from dialjudge.core.judges.post_run.rescore import RescoreResult
    from dialjudge.core.judges.run.config import RunConfig
    from dialjudge.core.judges.store.run_store import RunRecord, RunStore
    from dialjudge.core.model import Dataset

    from ..services import Services
    from .datasets import DatasetController

RUNS_GROUP = "runs-list"
COMPARE_GROUP = "runs-compare"
EXPORT_GROUP = "export"
LOAD_RUN_GROUP = "load-run"
RESCORE_GROUP = "rescore"
RETRY_GROUP = "retry-prepare"
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
class RetryPrepared(Message):
    """A run's failed judgments were marked to be asked again; the run can start (on the open dataset)."""

    run_id: int
    config: RunConfig
    failed: int


@dataclass
class RunUsageRead(Message):
    """A stored run's tokens, wall time, throughput and estimated cost, per judge."""

    usage: RunUsage


@dataclass(frozen=True)
class RescoreRequest:
    """What the rescore dialog asks for, as typed (blank: keep the run's setting)."""

    top_k: int | None = None
    mode: str | None = None
    template: str | None = None
    mapping: str | None = None
    name: str = ""

    @property
    def empty(self) -> bool:
        return self.top_k is None and not self.mode and not self.template and not self.mapping


@dataclass
class RunScoresLoaded(Message):
    """A stored run's judge columns were read, to be shown beside the open dataset's evaluators."""

    run_id: int
    dataset: str
    scores: dict[str, dict[str, float | None]]


def list_runs(store: RunStore, dataset: str | None) -> list[RunRecord]:
    """Every stored run, newest first (of ``dataset`` only, when given)."""
    runs = store.list_runs()
    if dataset is not None:
        runs = [r for r in runs if r.run_config.dataset == dataset]
    return runs


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
            with self.services.open_store() as store:
                runs = list_runs(store, dataset)
            if not get_current_worker().is_cancelled:
                reply_to.post_message(RunsListed(runs))

        return start_thread_work(self.app, read, group=group, description="Reading the runs")

    def compare(self, run_a: int, run_b: int, reply_to: MessagePump) -> Worker[None]:
        """Correlation deltas and the prompt diff of two runs; ``reply_to`` receives :class:`RunsCompared`."""
        current = self.datasets.workspace.dataset

        def compare() -> None:
            from dialjudge.core.compare import compare_runs
            from dialjudge.core.errors import ConfigError
            from dialjudge.core.evaluation import split_subsets

            with self.services.open_store() as store:
                config_a = store.get_run(run_a).run_config
                config_b = store.get_run(run_b).run_config
                if config_a.dataset != config_b.dataset:
                    raise ConfigError(f"run {run_a} judged {config_a.dataset} and run {run_b} {config_b.dataset}; "
                                      "only runs on the same dataset can be compared")
                dataset = dataset_for(self.services, config_a, current)
                comparison = compare_runs(store, run_a, run_b, dataset=dataset,
                                          subsets=split_subsets(dataset, "all"), n_boot=0, seed=self.services.seed)
            if not get_current_worker().is_cancelled:
                reply_to.post_message(RunsCompared(comparison))

        return start_thread_work(self.app, compare, group=COMPARE_GROUP, description="Comparing runs")

    def export(self, run_id: int, folder: Path, formats: Sequence[str], reply_to: MessagePump) -> Worker[None]:
        """Write a run's agreement tables and judgments; ``reply_to`` receives :class:`FilesExported`."""
        workspace = self.datasets.workspace
        current = workspace.dataset
        # The open dataset's metric scores are already computed: they join the run's judges.
        metrics = {name: dict(workspace.scores_of(name)) for name in workspace.metric_names}
        chosen = tuple(formats)

        def export() -> None:
            from dialjudge.core.run_export import export_run

            with self.services.open_store() as store:
                config = store.get_run(run_id).run_config
                dataset = dataset_for(self.services, config, current)
                extra = metrics if current is not None and dataset is current else None
                result = export_run(store, run_id, dataset, Path(folder), chosen, extra_scores=extra,
                                    n_boot=self.services.n_boot, seed=self.services.seed)
            reply_to.post_message(FilesExported(f"run {run_id}", result.paths))

        return start_thread_work(self.app, export, group=EXPORT_GROUP, description="Exporting the run")

    def rescore(self, run_id: int, request: RescoreRequest, reply_to: MessagePump) -> Worker[None]:
        """Score run ``run_id``'s stored answers again into a new run (no model); ``reply_to`` receives
        :class:`RunRescored`."""
        current = self.datasets.workspace.dataset
        template_dirs = self.services.config.template_dirs

        def rescore() -> None:
            from dialjudge.core.judges.post_run.rescore import rescore_run, settings_from_options

            settings = settings_from_options(top_k=request.top_k, mode=request.mode, template=request.template,
                                             mapping=request.mapping, name=request.name,
                                             template_dirs=template_dirs)
            with self.services.open_store() as store:
                dataset = dataset_for(self.services, store.get_run(run_id).run_config, current)
                result = rescore_run(store, run_id, dataset, settings)
            reply_to.post_message(RunRescored(result))

        return start_thread_work(self.app, rescore, group=RESCORE_GROUP, description="Rescoring the run")

    def prepare_retry(self, run_id: int, reply_to: MessagePump) -> Worker[None]:
        """Mark run ``run_id``'s failed judgments to be asked again; ``reply_to`` receives :class:`RetryPrepared`
        and starts the run through the run controller (its progress, Esc cancels)."""
        current = self.datasets.workspace.dataset

        def prepare() -> None:
            from dialjudge.core.errors import ConfigError
            from dialjudge.core.judges.post_run.retry import check_retryable

            with self.services.open_store() as store:
                record = store.get_run(run_id)
                check_retryable(store, run_id)
                config = record.run_config
                if current is None or current.name != config.dataset:
                    shown = current.name if current is not None else "no dataset"
                    raise ConfigError(f"run {run_id} judged {config.dataset}, but {shown} is open; open "
                                      f"{config.dataset} first (Datasets screen), then retry")
                failed = store.mark_failed_for_retry(run_id)
            reply_to.post_message(RetryPrepared(run_id, config, failed))

        return start_thread_work(self.app, prepare, group=RETRY_GROUP, description="Preparing the retry")

    def usage(self, run_id: int, reply_to: MessagePump, *, group: str = USAGE_GROUP) -> Worker[None]:
        """A run's cost and latency per judge; ``reply_to`` receives :class:`RunUsageRead` (each screen
        reads in its own ``group``)."""
        prices = self.services.config.prices

        def read() -> None:
            from dialjudge.core.judges.post_run.cost import run_usage

            with self.services.open_store() as store:
                usage = run_usage(store, run_id, prices)
            if not get_current_worker().is_cancelled:
                reply_to.post_message(RunUsageRead(usage))

        return start_thread_work(self.app, read, group=group, description="Reading the run's cost")

    # -- a stored run on the Scores screen -------------------------------------------------

    def show_in_scores(self, run_id: int) -> Worker[None]:
        """Add a stored run's judges to the open dataset's evaluators (the Scores screen shows them)."""

        def load() -> None:
            from dialjudge.core.judging import run_scores

            with self.services.open_store() as store:
                dataset = store.get_run(run_id).run_config.dataset
                scores, _ = run_scores(store, run_id, with_pool=False)
            if not get_current_worker().is_cancelled:
                self.app.post_message(RunScoresLoaded(run_id, dataset, scores))

        return start_thread_work(self.app, load, group=LOAD_RUN_GROUP, description="Reading the run")

    def run_scores_loaded(self, message: RunScoresLoaded) -> None:
        from dialjudge.core.workspace import judge_evaluator

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
        self.datasets.publish(Change.JUDGES)
        self.datasets.refresh_stats()
        names = ", ".join(judge_evaluator(j, message.run_id) for j in message.scores)
        self.app.notify(f"Scores now show {names}", timeout=5)
