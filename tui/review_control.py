"""Background work behind the Review and Runs screens (a mixin of the App).

Everything here reads or writes the run store, or opens a dataset, so each
step is a worker; results go to the screen that asked as messages. The one
exception that changes the workspace, showing a stored run's judges on the
Scores screen, is answered by the app itself (:meth:`on_run_scores_loaded`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from textual import work
from textual.message import Message
from textual.message_pump import MessagePump
from textual.worker import Worker, get_current_worker

if TYPE_CHECKING:
    from dialjudge.core.compare import RunComparison
    from dialjudge.core.judges.runs import RunConfig
    from dialjudge.core.judges.store import Review, RunRecord, RunStore
    from dialjudge.core.judges.types import Judgment
    from dialjudge.core.model import Dataset
    from dialjudge.core.workspace import Workspace

    from .review_queue import ReviewCase
    from .run_export import ExportResult
    from .services import Services

REVIEW_GROUP = "review-queue"
REVIEW_SAVE_GROUP = "review-save"
REVIEW_RUNS_GROUP = "review-runs"
RUNS_GROUP = "runs-list"
COMPARE_GROUP = "runs-compare"
EXPORT_GROUP = "export"
LOAD_RUN_GROUP = "load-run"

#: Review export formats and their file endings.
REVIEW_FORMATS: dict[str, str] = {"reviews-csv": "csv", "reviews-jsonl": "jsonl"}
REVIEW_FORMAT_LABELS: dict[str, str] = {"reviews-csv": "Reviewed labels, CSV", "reviews-jsonl": "Reviewed labels, JSONL"}


class RunsListed(Message):
    """The run store's runs, newest first."""

    def __init__(self, runs: "list[RunRecord]") -> None:
        super().__init__()
        self.runs = runs


@dataclass(frozen=True)
class ReviewData:
    run: "RunRecord"
    config: "RunConfig"
    dataset: "Dataset"
    judgments: "dict[str, dict[str, Judgment]]"
    queue: "list[ReviewCase]"
    reviews: "dict[str, Review]"


class ReviewQueueBuilt(Message):
    """A run's judgments were read and its items worth a review were found."""

    def __init__(self, data: ReviewData) -> None:
        super().__init__()
        self.data = data


class ReviewSaved(Message):
    def __init__(self, review: "Review") -> None:
        super().__init__()
        self.review = review


class FilesExported(Message):
    """Files were written for an export."""

    def __init__(self, what: str, paths: Sequence[Path]) -> None:
        super().__init__()
        self.what = what
        self.paths = tuple(paths)


class RunsCompared(Message):
    def __init__(self, comparison: "RunComparison") -> None:
        super().__init__()
        self.comparison = comparison


class RunScoresLoaded(Message):
    """A stored run's judge columns were read, to be shown beside the open dataset's evaluators."""

    def __init__(self, run_id: int, dataset: str, scores: "dict[str, dict[str, float | None]]") -> None:
        super().__init__()
        self.run_id = run_id
        self.dataset = dataset
        self.scores = scores


class ReviewControl:
    """Mixed into the App: the workers of the Review and Runs screens."""

    services: "Services"
    workspace: "Workspace"

    def _dataset_for(self, config: "RunConfig", current: "Dataset | None") -> "Dataset":
        """The run's dataset: the open one when it is the same, else read again (on a worker)."""
        if current is not None and current.name == config.dataset:
            return current
        return self.services.open_dataset(config.dataset_path or config.dataset)

    def _list_runs(self, store: "RunStore", dataset: str | None) -> "list[RunRecord]":
        runs = store.list_runs()
        if dataset is not None:
            runs = [r for r in runs if r.config.get("dataset", {}).get("name") == dataset]
        return runs

    # -- listing runs ----------------------------------------------------------------------

    def list_stored_runs(self, reply_to: MessagePump, *, dataset: str | None = None) -> Worker:
        """Every stored run (of ``dataset`` only, when given); ``reply_to`` receives :class:`RunsListed`."""
        return self._list_stored_runs(reply_to, dataset)

    @work(thread=True, exclusive=True, group=RUNS_GROUP, exit_on_error=False, description="Reading the runs")
    def _list_stored_runs(self, reply_to: MessagePump, dataset: str | None) -> None:
        with self.services.open_store() as store:
            runs = self._list_runs(store, dataset)
        if not get_current_worker().is_cancelled:
            reply_to.post_message(RunsListed(runs))

    def list_review_runs(self, reply_to: MessagePump, *, dataset: str | None = None) -> Worker:
        """Like :meth:`list_stored_runs`, for the Review screen's run picker (its own worker group)."""
        return self._list_review_runs(reply_to, dataset)

    @work(thread=True, exclusive=True, group=REVIEW_RUNS_GROUP, exit_on_error=False, description="Reading the runs")
    def _list_review_runs(self, reply_to: MessagePump, dataset: str | None) -> None:
        with self.services.open_store() as store:
            runs = self._list_runs(store, dataset)
        if not get_current_worker().is_cancelled:
            reply_to.post_message(RunsListed(runs))

    # -- reviewing -------------------------------------------------------------------------

    def load_review_queue(self, run_id: int, current: "Dataset | None", reply_to: MessagePump) -> Worker:
        """Read run ``run_id`` and flag its items; ``reply_to`` receives :class:`ReviewQueueBuilt`."""
        return self._load_review_queue(run_id, current, reply_to)

    @work(thread=True, exclusive=True, group=REVIEW_GROUP, exit_on_error=False, description="Finding items to review")
    def _load_review_queue(self, run_id: int, current: "Dataset | None", reply_to: MessagePump) -> None:
        data = self._review_data(run_id, current)
        if not get_current_worker().is_cancelled:
            reply_to.post_message(ReviewQueueBuilt(data))

    def _review_data(self, run_id: int, current: "Dataset | None") -> ReviewData:
        from dialjudge.core.judges.runs import RunConfig

        from .review_queue import build_queue

        with self.services.open_store() as store:
            record = store.get_run(run_id)
            config = RunConfig.from_dict(record.config)
            judgments = store.load_judgments(run_id)
            reviews = store.reviews(run_id)
        dataset = self._dataset_for(config, current)
        queue = build_queue(dataset, judgments, config.quality)
        return ReviewData(record, config, dataset, judgments, queue, reviews)

    def save_review(self, run_id: int, item_id: str, verdict: str, reply_to: MessagePump, *, note: str = "",
                    own_rating: float | None = None) -> Worker:
        """Store a reviewer's verdict on one item; ``reply_to`` receives :class:`ReviewSaved`."""
        return self._save_review(run_id, item_id, verdict, note, own_rating, reply_to)

    @work(thread=True, exclusive=False, group=REVIEW_SAVE_GROUP, exit_on_error=False, description="Saving the review")
    def _save_review(self, run_id: int, item_id: str, verdict: str, note: str, own_rating: float | None,
                     reply_to: MessagePump) -> None:
        # Not exclusive: two quick verdicts on two items must both be stored.
        with self.services.open_store() as store:
            review = store.set_review(run_id, item_id, verdict, note=note, own_rating=own_rating)
        reply_to.post_message(ReviewSaved(review))

    def export_reviews(self, run_id: int, folder: Path, formats: Sequence[str], current: "Dataset | None",
                       reply_to: MessagePump) -> Worker:
        """Write every judged item's label (manual ones marked) with its review; ``reply_to`` receives
        :class:`FilesExported`."""
        return self._export_reviews(run_id, folder, tuple(formats), current, reply_to)

    @work(thread=True, exclusive=True, group=EXPORT_GROUP, exit_on_error=False, description="Exporting the reviews")
    def _export_reviews(self, run_id: int, folder: Path, formats: tuple[str, ...], current: "Dataset | None",
                        reply_to: MessagePump) -> None:
        from dialjudge.core.report import to_csv, to_jsonl

        from .review_queue import review_rows
        from .run_export import ExportError, write_text_file

        if not formats:
            raise ExportError("choose at least one format to export")
        data = self._review_data(run_id, current)
        rows = review_rows(data.dataset, run_id, data.config.quality, data.judgments, data.reviews, data.queue)
        paths = []
        for fmt in formats:
            if fmt not in REVIEW_FORMATS:
                raise ExportError(f"unknown review export format {fmt!r} (one of {', '.join(REVIEW_FORMATS)})")
            text = to_csv(rows) if fmt == "reviews-csv" else to_jsonl(rows)
            paths.append(write_text_file(Path(folder).expanduser() / f"run-{run_id}-reviews.{REVIEW_FORMATS[fmt]}",
                                         text))
        reply_to.post_message(FilesExported(f"run {run_id}'s reviewed labels", paths))

    # -- comparing and exporting runs ------------------------------------------------------

    def compare_stored_runs(self, run_a: int, run_b: int, current: "Dataset | None",
                            reply_to: MessagePump) -> Worker:
        """Correlation deltas and the prompt diff of two runs; ``reply_to`` receives :class:`RunsCompared`."""
        return self._compare_stored_runs(run_a, run_b, current, reply_to)

    @work(thread=True, exclusive=True, group=COMPARE_GROUP, exit_on_error=False, description="Comparing runs")
    def _compare_stored_runs(self, run_a: int, run_b: int, current: "Dataset | None",
                             reply_to: MessagePump) -> None:
        from dialjudge.core.compare import compare_runs
        from dialjudge.core.errors import ConfigError
        from dialjudge.core.evaluation import split_subsets
        from dialjudge.core.judges.runs import RunConfig

        with self.services.open_store() as store:
            config_a = RunConfig.from_dict(store.get_run(run_a).config)
            config_b = RunConfig.from_dict(store.get_run(run_b).config)
            if config_a.dataset != config_b.dataset:
                raise ConfigError(f"run {run_a} judged {config_a.dataset} and run {run_b} {config_b.dataset}; "
                                  "only runs on the same dataset can be compared")
            dataset = self._dataset_for(config_a, current)
            comparison = compare_runs(store, run_a, run_b, dataset=dataset, subsets=split_subsets(dataset, "all"),
                                      n_boot=0, seed=self.services.seed)
        if not get_current_worker().is_cancelled:
            reply_to.post_message(RunsCompared(comparison))

    def export_stored_run(self, run_id: int, folder: Path, formats: Sequence[str], current: "Dataset | None",
                          reply_to: MessagePump) -> Worker:
        """Write a run's agreement tables and judgments; ``reply_to`` receives :class:`FilesExported`."""
        metrics: dict[str, Any] = {}
        workspace = self.workspace
        if current is not None and workspace.dataset is current:
            # The open dataset's metric scores are already computed: they join the run's judges.
            metrics = {name: dict(workspace.scores_of(name)) for name in workspace.metric_names}
        return self._export_stored_run(run_id, Path(folder), tuple(formats), current, metrics, reply_to)

    @work(thread=True, exclusive=True, group=EXPORT_GROUP, exit_on_error=False, description="Exporting the run")
    def _export_stored_run(self, run_id: int, folder: Path, formats: tuple[str, ...], current: "Dataset | None",
                           metrics: dict[str, Any], reply_to: MessagePump) -> None:
        from dialjudge.core.judges.runs import RunConfig

        from .run_export import export_run

        with self.services.open_store() as store:
            config = RunConfig.from_dict(store.get_run(run_id).config)
            dataset = self._dataset_for(config, current)
            extra = metrics if dataset is current else None
            result: ExportResult = export_run(store, run_id, dataset, folder, formats, extra_scores=extra,
                                              n_boot=self.services.n_boot, seed=self.services.seed)
        reply_to.post_message(FilesExported(f"run {run_id}", result.paths))

    # -- a stored run on the Scores screen -------------------------------------------------

    def show_stored_run(self, run_id: int) -> Worker:
        """Add a stored run's judges to the open dataset's evaluators (the Scores screen shows them)."""
        return self._load_stored_run(run_id)

    @work(thread=True, exclusive=True, group=LOAD_RUN_GROUP, exit_on_error=False, description="Reading the run")
    def _load_stored_run(self, run_id: int) -> None:
        from dialjudge.core.judging import run_scores

        with self.services.open_store() as store:
            dataset = str(store.get_run(run_id).config.get("dataset", {}).get("name", ""))
            scores, _ = run_scores(store, run_id, with_pool=False)
        if not get_current_worker().is_cancelled:
            self.post_message(RunScoresLoaded(run_id, dataset, scores))  # type: ignore[attr-defined]

    def on_run_scores_loaded(self, message: RunScoresLoaded) -> None:
        from dialjudge.core.workspace import judge_evaluator

        from .state import Change

        workspace = self.workspace
        if workspace.dataset is None or workspace.dataset.name != message.dataset:
            shown = workspace.dataset.name if workspace.dataset is not None else "no dataset"
            self.notify(f"run {message.run_id} judged {message.dataset}, but {shown} is open; "  # type: ignore[attr-defined]
                        f"open {message.dataset} first (Datasets screen)", severity="warning", timeout=8)
            return
        if not message.scores:
            self.notify(f"run {message.run_id} has no judgments yet", severity="warning")  # type: ignore[attr-defined]
            return
        for judge, scores in message.scores.items():
            workspace.add_judge_scores(judge_evaluator(judge, message.run_id), scores)
        self._publish(Change.JUDGES)  # type: ignore[attr-defined]
        self.refresh_stats()  # type: ignore[attr-defined]
        names = ", ".join(judge_evaluator(j, message.run_id) for j in message.scores)
        self.notify(f"Scores now show {names}", timeout=5)  # type: ignore[attr-defined]
