"""The open dataset and what is computed from it: reference-based metrics, item scores, the view's statistics.

Owns the :class:`Workspace` and announces every change of it on
:attr:`DatasetController.workspace_changed`, which the screens follow. Judge
scores can arrive thousands per second; they are applied at once but
announced at most every ``redraw_interval_s`` (:meth:`flush_live_updates`,
called by an app timer), and the agreement table with its bootstrap CIs is
recomputed at most every ``stats_interval_s`` while they arrive, and once
more when a run stops.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.message import Message
from textual.signal import Signal
from textual.timer import Timer
from textual.worker import Worker, get_current_worker

from dialjudge.core.api import (
    column_choices,
    item_metric_scores,
)
from dialjudge.core.api.background import freeze_survivors
from dialjudge.core.api.compute_worker import (
    ComputeCancelled,
    close_compute_worker,
    describe_in_worker,
    score_metrics_in_worker,
)
from dialjudge.core.api.profiles import (
    DEFAULT_PROFILE,
    profile_columns,
)
from dialjudge.core.errors import ColumnMappingNeeded, DataError

from ..format import widest_cells
from ..scores_view_model import Workspace
from ..state import Change, StatsState, WorkspaceChange
from .base import start_following_work, start_thread_work

if TYPE_CHECKING:
    from dialjudge.core.api import (
        ColumnChoices,
        ColumnMap,
        DatasetSummary,
    )
    from dialjudge.core.api.types import (
        AgreementTable,
        CeilingRow,
        Judgment,
        MetricScores,
    )
    from dialjudge.core.model import Dataset, Example

    from ..scores_view_model import AgreementInputs, PreparedDataset
    from ..services import Services

#: Worker groups; each holds at most one worker (``exclusive``).
DATASET_GROUP = "dataset"
METRICS_GROUP = "metrics"
STATS_GROUP = "stats"
#: A run's periodic statistics refresh waits at least this many times as long as the last one took.
STATS_BUSY_SHARE = 4
ITEM_GROUP = "item"
#: Seconds an open waits for the UI thread to draw the new dataset before it sends it to the compute process
#: anyway (an app that is busy elsewhere, or not drawing: the summary must still come).
DRAWN_WAIT_S = 2.0


@dataclass(frozen=True)
class TextWidths:
    """The widest item id and system name of ``dataset``, in terminal cells: measured on the open's
    worker, since reading 100,000 of each took the UI thread 17 ms when the table was first drawn."""

    dataset: Dataset
    item_id: int
    system: int

    @classmethod
    def measure(cls, dataset: Dataset) -> TextWidths:
        return cls(dataset, widest_cells(list(dataset.ids())),
                   widest_cells([ex.system or "" for ex in dataset.examples]))


@dataclass
class RunningCorrelationsComputed(Message):
    """The running keeper's thread computed newer running correlations of the judge columns."""


@dataclass
class DatasetLoaded(Message):
    """A dataset was read, and prepared for the workspace (on the worker: the UI thread only swaps it in)."""

    name: str
    dataset: Dataset
    prepared: PreparedDataset
    widths: TextWidths | None = None
    #: Set once the UI thread has drawn the dataset: the worker waits for it before sending the dataset to the
    #: compute process (see :meth:`DatasetController.open`).
    drawn: threading.Event = field(default_factory=threading.Event)


@dataclass
class DatasetDescribed(Message):
    """The summary and the human ceilings of ``dataset``, computed after it is shown (at 100,000
    items they take seconds, which the table need not wait for)."""

    dataset: Dataset
    summary: DatasetSummary
    ceilings: list[CeilingRow]


@dataclass
class UnmappedTableOpened(Message):
    """A table whose columns do not say which field each holds was opened: the user is asked."""

    name_or_path: str
    #: Why it did not open (the columns lack the standard names, or no column is the candidate).
    reason: str
    choices: ColumnChoices


@dataclass
class MetricsProgressed(Message):
    """Reference-based metrics scored ``done`` of ``total`` pairs."""

    dataset: Dataset
    done: int
    total: int

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, MetricsProgressed)


@dataclass
class MetricsScored(Message):
    """Every reference-based metric was computed for ``dataset``."""

    dataset: Dataset
    scores: MetricScores


@dataclass
class StatsRefreshed(Message):
    """An agreement table (with bootstrap CIs) was computed from ``inputs``."""

    inputs: AgreementInputs
    table: AgreementTable


@dataclass
class ItemScored(Message):
    """The reference-based metrics of one item (for the item view)."""

    example_id: str
    scores: dict[str, float] = field(default_factory=dict)


class DatasetController:
    """The workspace: the open dataset, its metric scores, the chosen view and its statistics."""

    def __init__(self, app: App[Any], services: Services) -> None:
        self.app = app
        self.services = services
        self.workspace = Workspace(seed=services.seed)
        # Called on the keeper's thread: post_message is safe there.
        self.workspace.running_keeper.computed = self._running_correlations_computed
        self.workspace_changed: Signal[WorkspaceChange] = Signal(app, "workspace-changed")
        self.dataset_summary: DatasetSummary | None = None
        self.dataset_ceilings: list[CeilingRow] = []
        #: The open dataset's widest id and system name (None: measured when the table needs them).
        self.text_widths: TextWidths | None = None
        #: (done, total) while the metrics are being scored.
        self.metrics_progress: tuple[int, int] | None = None
        self.stats: StatsState | None = None
        #: Each item's reference-based metric scores, by label, for the item view (cached).
        self.item_metrics: dict[str, dict[str, float]] = {}
        #: Which code computes the reference-based metrics (core.api.profiles); the Scores screen picks it.
        self.metric_profile = DEFAULT_PROFILE
        #: Why the last open failed while no dataset is open (None: none failed, or one opened since).
        self.open_error: str | None = None
        self._dirty_items: set[str] = set()
        self._stats_timer: Timer | None = None
        #: The statistics computing now (one at a time, see :meth:`refresh_stats`).
        self._stats_worker: Worker[None] | None = None
        #: A refresh asked for meanwhile: None (none), True (changed evaluators only), False (all).
        self._stats_again: bool | None = None
        #: Whether every refresh asked for meanwhile was a streaming run's (see :meth:`refresh_stats`).
        self._stats_again_streaming = True
        #: When the computing statistics started, and how long the last computation took (seconds).
        self._stats_started = 0.0
        self._stats_seconds = 0.0

    def _running_correlations_computed(self) -> None:
        self.app.post_message(RunningCorrelationsComputed())

    def running_correlations_computed(self, message: RunningCorrelationsComputed) -> None:
        self.publish(Change.LIVE)

    def publish(self, kind: Change, item_ids: frozenset[str] = frozenset()) -> None:
        """Tell the screens what changed."""
        self.workspace_changed.publish(WorkspaceChange(kind, item_ids))

    # -- datasets ------------------------------------------------------------------------

    def open(self, name_or_path: str, column_map: ColumnMap | None = None) -> Worker[None]:
        """Load a dataset by name or path in the background; it replaces the current one. A table whose
        columns need a mapping is not an error: the app asks for one (:class:`UnmappedTableOpened`).
        Everything proportional to its size is done here, on the worker: the UI thread swaps the
        prepared dataset in (:meth:`dataset_loaded`), and the summary follows (:meth:`dataset_described`)."""

        def load() -> None:
            worker = get_current_worker()
            try:
                dataset = (self.services.open_dataset(name_or_path) if column_map is None
                           else self.services.open_dataset(name_or_path, column_map=column_map))
            except ColumnMappingNeeded as exc:
                self._ask_for_mapping(name_or_path, exc)
                return
            prepared = self.workspace.prepare(dataset)
            widths = TextWidths.measure(dataset)
            if worker.is_cancelled:
                return
            # Now, not when the summary below is done: until then the UI thread's young collections
            # would walk the dataset's millions of new objects (78 ms each at 100,000 items).
            freeze_survivors()
            loaded = DatasetLoaded(name_or_path, dataset, prepared, widths)
            self.app.post_message(loaded)
            # The dataset crosses to the compute process in pieces, each pickled by one C call that holds the
            # interpreter (about 10 ms); sent while the UI thread builds the new table and lays the screen out,
            # they doubled that frame (the longest stall of an open). So they go once it is drawn.
            loaded.drawn.wait(DRAWN_WAIT_S)
            if worker.is_cancelled:
                return
            # In the compute process (core/api/compute_worker.py), which this thread sends the dataset to.
            # The Datasets summary shows the ceiling without its CI: no bootstrap for it on every open.
            try:
                summary, ceilings = describe_in_worker(self.services.session, dataset, ceiling_boot=0,
                                                       is_cancelled=lambda: worker.is_cancelled)
            except ComputeCancelled:
                return
            if not worker.is_cancelled:
                self.app.post_message(DatasetDescribed(dataset, summary, ceilings))

        return start_thread_work(self.app, load, group=DATASET_GROUP, description="Opening dataset",
                                        long_lived_result=True)

    def close_worker(self) -> None:
        """End the session's compute process (the app, when it ends)."""
        close_compute_worker(self.services.session)

    def open_failed(self, error: str) -> None:
        """The open failed (the app's failure handler passes its text on): with no dataset open the
        screens say why instead of waiting for one."""
        self.open_error = error
        if self.workspace.dataset is None:
            self.publish(Change.DATASET)

    def _ask_for_mapping(self, name_or_path: str, needed: ColumnMappingNeeded) -> None:
        try:
            choices = column_choices(name_or_path)
        except DataError:
            raise needed from None  # the file cannot be read as a table: the first error says why
        if not get_current_worker().is_cancelled:
            self.app.post_message(UnmappedTableOpened(name_or_path, needed.problem, choices))

    def dataset_loaded(self, message: DatasetLoaded) -> None:
        self.workspace.set_dataset(message.prepared)
        self.open_error = None
        self.text_widths = message.widths
        self.dataset_summary = None
        self.dataset_ceilings = []
        self.stats = None
        self.item_metrics = {}
        self.metrics_progress = None
        self._dirty_items.clear()
        self.app.sub_title = message.dataset.name
        self.publish(Change.DATASET)

        def after_drawn() -> None:
            message.drawn.set()
            if message.dataset is self.workspace.dataset:  # not replaced meanwhile
                self._score_metrics(message.dataset)
                self.refresh_stats()

        # The metrics and statistics send the dataset to the compute process too: once it is drawn (see open).
        self.app.call_after_refresh(after_drawn)

    def dataset_described(self, message: DatasetDescribed) -> None:
        if message.dataset is not self.workspace.dataset:
            return  # the summary of a dataset that was replaced meanwhile
        self.dataset_summary = message.summary
        self.dataset_ceilings = message.ceilings
        self.publish(Change.SUMMARY)

    # -- reference-based metrics -----------------------------------------------------------

    def set_metric_profile(self, profile: str) -> None:
        """Score the metrics again with another profile's code; its columns replace the current ones."""
        if profile == self.metric_profile:
            return
        self.metric_profile = profile
        self.item_metrics = {}
        dataset = self.workspace.dataset
        if dataset is not None:
            self._score_metrics(dataset)

    def _score_metrics(self, dataset: Dataset) -> Worker[None]:
        profile = self.metric_profile

        def score() -> None:
            worker = get_current_worker()

            def progress(done: int, total: int) -> None:
                if not worker.is_cancelled:
                    self.app.post_message(MetricsProgressed(dataset, done, total))

            try:
                scores = score_metrics_in_worker(
                    self.services.session, dataset, profile_columns(profile, self.services.metric_ids),
                    workers=self.services.metric_workers, progress=progress, is_cancelled=lambda: worker.is_cancelled)
            except ComputeCancelled:
                return
            if not worker.is_cancelled:
                self.app.post_message(MetricsScored(dataset, scores))

        return start_thread_work(self.app, score, group=METRICS_GROUP, description="Scoring metrics",
                                        long_lived_result=True)

    def metrics_progressed(self, message: MetricsProgressed) -> None:
        if message.dataset is self.workspace.dataset:
            self.metrics_progress = (message.done, message.total)
            self.publish(Change.METRICS)

    def metrics_scored(self, message: MetricsScored) -> None:
        if message.dataset is not self.workspace.dataset:
            return  # scores of a dataset that was replaced meanwhile
        if message.scores.metric_ids and not all(
                m in profile_columns(self.metric_profile, self.services.metric_ids) for m in message.scores.metric_ids):
            return  # scores of the profile that was replaced meanwhile
        self.workspace.set_metric_scores(message.scores)
        self.metrics_progress = None
        self.publish(Change.METRICS)
        self.refresh_stats(changed_only=True)

    def score_item(self, example: Example) -> None:
        """The reference-based metrics of one item, for the item view (cached)."""
        if example.id in self.item_metrics:
            self.publish(Change.ITEM, frozenset({example.id}))
            return

        profile = self.metric_profile

        def score() -> None:
            scores = item_metric_scores(example, profile_columns(profile, self.services.metric_ids))
            if not get_current_worker().is_cancelled:
                self.app.post_message(ItemScored(example.id, scores))

        start_thread_work(self.app, score, group=ITEM_GROUP, description="Scoring item")

    def item_scored(self, message: ItemScored) -> None:
        self.item_metrics[message.example_id] = message.scores
        self.publish(Change.ITEM, frozenset({message.example_id}))

    # -- the view --------------------------------------------------------------------------

    def choose_view(self, *, quality: str | None = None, subset: str | None = None) -> None:
        """Show another quality and/or subset; statistics are recomputed in the background."""
        before = (self.workspace.quality, self.workspace.subset)
        if quality is not None:
            self.workspace.set_quality(quality)
        if subset is not None:
            self.workspace.set_subset(subset)
        if (self.workspace.quality, self.workspace.subset) != before:
            self.stats = None
            self.publish(Change.SELECTION)
            self.refresh_stats()

    def cycle_subset(self, step: int) -> None:
        """Show the next (or previous) subset."""
        specs = [s.spec for s in self.workspace.subsets()]
        if len(specs) > 1:
            here = specs.index(self.workspace.subset.spec) if self.workspace.subset.spec in specs else 0
            self.choose_view(subset=specs[(here + step) % len(specs)])

    def cycle_quality(self, step: int) -> None:
        """Show the next (or previous) quality."""
        qualities = self.workspace.qualities()
        quality = self.workspace.quality
        if len(qualities) > 1 and quality is not None and quality in qualities:
            here = qualities.index(quality)
            self.choose_view(quality=qualities[(here + step) % len(qualities)])

    # -- statistics ------------------------------------------------------------------------

    def refresh_stats(self, *, changed_only: bool = False, streaming: bool = False) -> None:
        """Recompute the agreement statistics (with CIs) of the current view in the background;
        ``changed_only``: only of the evaluators whose scores changed since they were computed; ``streaming``:
        the refresh a run's streaming scores asked for."""
        if self._stats_timer is not None:
            self._stats_timer.stop()
            self._stats_timer = None
        ws = self.workspace
        if ws.dataset is None or ws.quality is None:
            return
        if self._stats_worker is not None and not self._stats_worker.is_finished:
            # One computation at a time: a cancelled thread worker computes on regardless, and two
            # or three bootstraps at once (a subset, then another, then a run's refresh) took the
            # cores and the GIL from the UI thread. The request waits for the one computing now.
            self._stats_again_streaming = streaming and (self._stats_again is None or self._stats_again_streaming)
            self._stats_again = changed_only and self._stats_again is not False
            return
        evaluators = None
        stats = self.stats
        if changed_only and stats is not None and stats.selection_version == ws.selection_version:
            evaluators = [name for name in ws.evaluators if not stats.is_current(name, ws.version(name))]
            if not evaluators:
                return
        inputs = ws.agreement_inputs(evaluators)
        dataset, session = ws.dataset, self.services.session

        def compute() -> None:
            worker = get_current_worker()
            try:  # in the compute process, on the dataset it holds
                table = inputs.table_in_worker(session, dataset, n_boot=self.services.n_boot, seed=self.services.seed,
                                               is_cancelled=lambda: worker.is_cancelled)
            except ComputeCancelled:
                return
            if not worker.is_cancelled:
                self.app.post_message(StatsRefreshed(inputs, table))

        self._stats_started = time.monotonic()
        # This thread follows the compute process: it sends the inputs and reads the table back, holding the
        # interpreter lock for moments. While a run streams, the UI thread's own work comes in short moments
        # and what it waits for is a lowered thread preempted inside one: the refresh runs at the UI's priority
        # (a 100,000-item run's longest stall beside a busy process, runs taken in turns: 59, 71, 72 ms lowered;
        # 43, 39, 58 ms not). After a filter or a sort the UI's own work is long, and a thread at its priority
        # took turns inside it (the filter's stall beside a busy process: 49-61 ms lowered, 56-107 ms not).
        start = start_following_work if streaming else start_thread_work
        self._stats_worker = start(self.app, compute, group=STATS_GROUP, description="Computing statistics")

    def stats_work_finished(self) -> None:
        """The statistics worker ended (the app passes it on): start the refresh asked for meanwhile."""
        self._stats_seconds = time.monotonic() - self._stats_started
        again, self._stats_again = self._stats_again, None
        if again is not None:
            self.refresh_stats(changed_only=again, streaming=self._stats_again_streaming)

    def stats_refreshed(self, message: StatsRefreshed) -> None:
        inputs = message.inputs
        if inputs.selection_version != self.workspace.selection_version:
            return  # computed for a view that is no longer shown
        if self.stats is None or self.stats.selection_version != inputs.selection_version:
            self.stats = StatsState(inputs.selection_version, inputs.quality)
        self.stats.merge(message.table, dict(inputs.versions))
        self.publish(Change.STATS)

    # -- judge scores arriving ---------------------------------------------------------------

    def add_judgment(self, judgment: Judgment, run_id: int | None,
                     scale: tuple[float, float] | None = None) -> None:
        """A run's judgment joins the workspace now; it is announced by the next :meth:`flush_live_updates`.
        ``scale``: the judge's own scale (core.api.view.judge_scale), its cells show the score on it."""
        evaluator = self.workspace.add_judgment(judgment, run_id)
        if scale is not None:
            self.workspace.set_judge_scale(evaluator, scale)
        self._dirty_items.add(judgment.item_id)
        if self._stats_timer is None:
            # While scores stream in, the full statistics (bootstrap CIs) are recomputed now and then;
            # never so often that they keep a core busy more than 1/STATS_BUSY_SHARE of the time.
            delay = max(self.services.stats_interval_s, STATS_BUSY_SHARE * self._stats_seconds)
            self._stats_timer = self.app.set_timer(delay, self._stats_due, name="stats refresh")

    def _stats_due(self) -> None:
        self._stats_timer = None
        self.refresh_stats(changed_only=True, streaming=True)

    def flush_live_updates(self) -> None:
        """Announce the judge scores that arrived since the last call."""
        if self._dirty_items:
            items = frozenset(self._dirty_items)
            self._dirty_items.clear()
            self.publish(Change.JUDGES, items)
