"""The app's background work and the workspace it changes (a mixin of the App).

Every worker belongs to the app, so that one handler (the app's
``on_worker_state_changed``) turns any failure into a notification. Thread
workers never touch widgets: they post a message from :mod:`.messages`; the
handlers here change the :class:`Workspace` on the UI thread and publish a
:class:`WorkspaceChange` on ``workspace_changed``, which the screens follow.

Judge scores can arrive thousands per second; they are applied at once but
announced at most every ``redraw_interval_s`` (:meth:`flush_live_updates`),
and the agreement table with its bootstrap CIs is recomputed at most every
``stats_interval_s`` while they arrive, and once more when the run stops.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from textual import work
from textual.signal import Signal
from textual.timer import Timer
from textual.worker import Worker, get_current_worker

from dialjudge.core.workspace import Workspace

from . import messages as msg
from .adversarial_control import AdversarialControl
from .judge_tools import JudgeToolsControl
from .state import Change, RunState, StatsState, WorkspaceChange

if TYPE_CHECKING:
    from dialjudge.core.describe import DatasetSummary
    from dialjudge.core.judges.engine import RunEngine
    from dialjudge.core.judges.events import RunEvent
    from dialjudge.core.judges.runs import RunConfig
    from dialjudge.core.model import Dataset, Example
    from dialjudge.core.stats import CeilingRow
    from dialjudge.core.workspace import AgreementInputs

    from .services import Services
    from .widgets.selection_bar import SelectionBar

#: Worker groups; each holds at most one worker (``exclusive``).
DATASET_GROUP = "dataset"
METRICS_GROUP = "metrics"
STATS_GROUP = "stats"
ITEM_GROUP = "item"
RUN_GROUP = "run"


class WorkspaceController(JudgeToolsControl, AdversarialControl):
    """Mixed into the App: owns the workspace, starts the workers, answers their messages."""

    services: "Services"

    def _init_controller(self) -> None:
        self.workspace = Workspace(seed=self.services.seed)
        self.workspace_changed: Signal[WorkspaceChange] = Signal(self, "workspace-changed")  # type: ignore[arg-type]
        self.dataset_name: str | None = None
        self.dataset_summary: DatasetSummary | None = None
        self.dataset_ceilings: list[CeilingRow] = []
        self.metrics_progress: tuple[int, int] | None = None
        self.stats: StatsState | None = None
        self.item_metrics: dict[str, dict[str, float]] = {}
        self.run_state: RunState | None = None
        self._engine: RunEngine | None = None
        self._dirty_items: set[str] = set()
        self._stats_timer: Timer | None = None

    def _publish(self, kind: Change, item_ids: frozenset[str] = frozenset()) -> None:
        if kind is Change.RUN:
            self.refresh_bindings()  # type: ignore[attr-defined]  # "Cancel run" shows while one is active
        self.workspace_changed.publish(WorkspaceChange(kind, item_ids))

    # -- datasets ------------------------------------------------------------------------

    def open_dataset(self, name_or_path: str) -> Worker:
        """Load a dataset by name or path in the background; it replaces the current one."""
        return self._load_dataset(name_or_path)

    @work(thread=True, exclusive=True, group=DATASET_GROUP, exit_on_error=False, description="Opening dataset")
    def _load_dataset(self, name_or_path: str) -> None:
        from dialjudge.core.describe import describe
        from dialjudge.core.stats import ceiling_table

        dataset = self.services.open_dataset(name_or_path)
        summary = describe(dataset)
        ceilings = ceiling_table(dataset.examples)
        if not get_current_worker().is_cancelled:
            self.post_message(msg.DatasetLoaded(name_or_path, dataset, summary, ceilings))  # type: ignore[attr-defined]

    def on_dataset_loaded(self, message: msg.DatasetLoaded) -> None:
        self.workspace.set_dataset(message.dataset)
        self.dataset_name = message.dataset.name
        self.dataset_summary = message.summary
        self.dataset_ceilings = message.ceilings
        self.stats = None
        self.item_metrics = {}
        self.metrics_progress = None
        self._dirty_items.clear()
        self.sub_title = message.dataset.name  # type: ignore[attr-defined]
        self._publish(Change.DATASET)
        self._score_metrics(message.dataset)
        self.refresh_stats()

    # -- reference-based metrics -----------------------------------------------------------

    @work(thread=True, exclusive=True, group=METRICS_GROUP, exit_on_error=False, description="Scoring metrics")
    def _score_metrics(self, dataset: "Dataset") -> None:
        from dialjudge.core.metrics import score_examples

        worker = get_current_worker()

        def progress(done: int, total: int) -> None:
            if not worker.is_cancelled:
                self.post_message(msg.MetricsProgressed(dataset, done, total))  # type: ignore[attr-defined]

        scores = score_examples(dataset.examples, self.services.metric_ids,
                                workers=self.services.metric_workers, progress=progress)
        if not worker.is_cancelled:
            self.post_message(msg.MetricsScored(dataset, scores))  # type: ignore[attr-defined]

    def on_metrics_progressed(self, message: msg.MetricsProgressed) -> None:
        if message.dataset is self.workspace.dataset:
            self.metrics_progress = (message.done, message.total)
            self._publish(Change.METRICS)

    def on_metrics_scored(self, message: msg.MetricsScored) -> None:
        if message.dataset is not self.workspace.dataset:
            return  # scores of a dataset that was replaced meanwhile
        self.workspace.set_metric_scores(message.scores)
        self.metrics_progress = None
        self._publish(Change.METRICS)
        self.refresh_stats(changed_only=True)

    def score_item(self, example: "Example") -> None:
        """The reference-based metrics of one item, for the item view (cached)."""
        if example.id in self.item_metrics:
            self._publish(Change.ITEM, frozenset({example.id}))
        else:
            self._score_item(example)

    @work(thread=True, exclusive=True, group=ITEM_GROUP, exit_on_error=False, description="Scoring item")
    def _score_item(self, example: "Example") -> None:
        from dialjudge.core.metrics import metric_info, resolve_metric_ids, score_pair

        ids = resolve_metric_ids(self.services.metric_ids)
        raw = score_pair(example.candidate or "", example.references, example.language, ids)
        scores = {metric_info(m).label: raw[m] for m in ids if m in raw}
        if not get_current_worker().is_cancelled:
            self.post_message(msg.ItemScored(example.id, scores))  # type: ignore[attr-defined]

    def on_item_scored(self, message: msg.ItemScored) -> None:
        self.item_metrics[message.example_id] = message.scores
        self._publish(Change.ITEM, frozenset({message.example_id}))

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
            self._publish(Change.SELECTION)
            self.refresh_stats()

    def on_selection_bar_chosen(self, message: "SelectionBar.Chosen") -> None:
        self.choose_view(quality=message.quality, subset=message.subset)

    def action_cycle_subset(self, step: int) -> None:
        """Show the next (or previous) subset."""
        specs = [s.spec for s in self.workspace.subsets()]
        if len(specs) > 1:
            here = specs.index(self.workspace.subset.spec) if self.workspace.subset.spec in specs else 0
            self.choose_view(subset=specs[(here + step) % len(specs)])

    def action_cycle_quality(self, step: int) -> None:
        """Show the next (or previous) quality."""
        qualities = self.workspace.qualities()
        if len(qualities) > 1 and self.workspace.quality in qualities:
            here = qualities.index(self.workspace.quality)  # type: ignore[arg-type]
            self.choose_view(quality=qualities[(here + step) % len(qualities)])

    # -- statistics ------------------------------------------------------------------------

    def refresh_stats(self, *, changed_only: bool = False) -> None:
        """Recompute the agreement statistics (with CIs) of the current view in the background;
        ``changed_only``: only of the evaluators whose scores changed since they were computed."""
        if self._stats_timer is not None:
            self._stats_timer.stop()
            self._stats_timer = None
        ws = self.workspace
        if ws.dataset is None or ws.quality is None:
            return
        evaluators = None
        stats = self.stats
        if changed_only and stats is not None and stats.selection_version == ws.selection_version:
            evaluators = [name for name in ws.evaluators if not stats.is_current(name, ws.version(name))]
            if not evaluators:
                return
        self._compute_stats(ws.agreement_inputs(evaluators))

    @work(thread=True, exclusive=True, group=STATS_GROUP, exit_on_error=False, description="Computing statistics")
    def _compute_stats(self, inputs: "AgreementInputs") -> None:
        table = inputs.table(n_boot=self.services.n_boot, seed=self.services.seed)
        if not get_current_worker().is_cancelled:
            self.post_message(msg.StatsRefreshed(inputs, table))  # type: ignore[attr-defined]

    def on_stats_refreshed(self, message: msg.StatsRefreshed) -> None:
        inputs = message.inputs
        if inputs.selection_version != self.workspace.selection_version:
            return  # computed for a view that is no longer shown
        if self.stats is None or self.stats.selection_version != inputs.selection_version:
            self.stats = StatsState(inputs.selection_version, inputs.quality)
        self.stats.merge(message.table, dict(inputs.versions))
        self._publish(Change.STATS)

    def action_refresh_stats(self) -> None:
        """Recompute the statistics now."""
        self.refresh_stats()

    def _schedule_stats(self) -> None:
        if self._stats_timer is None:
            self._stats_timer = self.set_timer(  # type: ignore[attr-defined]
                self.services.stats_interval_s, self._stats_due, name="stats refresh")

    def _stats_due(self) -> None:
        self._stats_timer = None
        self.refresh_stats(changed_only=True)

    def flush_live_updates(self) -> None:
        """Announce the judge scores that arrived since the last call (a timer calls it ~4/s)."""
        if self._dirty_items:
            items = frozenset(self._dirty_items)
            self._dirty_items.clear()
            self._publish(Change.JUDGES, items)

    # -- judge runs ------------------------------------------------------------------------

    @property
    def run_active(self) -> bool:
        return self.run_state is not None and self.run_state.active

    def start_run(self, config: "RunConfig", dataset: "Dataset | None" = None, **engine_options: Any) -> Worker:
        """Run ``config`` on ``dataset`` (default: the open one); judgments stream into the workspace.

        ``engine_options`` go to :class:`RunEngine` (a test passes its own renderer, say).
        """
        from dialjudge.core.errors import ConfigError

        if self.run_active:
            raise ConfigError("a run is already in progress; cancel it first (Esc)")
        dataset = dataset or self.workspace.dataset
        if dataset is None:
            raise ConfigError("open a dataset before starting a run")
        self.run_state = RunState(judges=[j.name for j in config.judges])
        self._publish(Change.RUN)
        return self._run_judges(config, dataset, engine_options)

    @work(thread=True, exclusive=True, group=RUN_GROUP, exit_on_error=False, description="Judge run")
    def _run_judges(self, config: "RunConfig", dataset: "Dataset", engine_options: dict[str, Any]) -> Any:
        from dialjudge.core.judges.engine import RunEngine

        backends = {spec.name: self.services.make_backend(spec.config) for spec in config.judges}
        store = self.services.open_store()
        try:
            options = {"clock": self.services.clock, "close_backends": True, **engine_options}
            engine = RunEngine(config, dataset, backends, store, **options)
            engine.subscribe(lambda event: self._forward_run_event(engine, event))
            self._engine = engine
            return asyncio.run(engine.run())
        finally:
            self._engine = None
            store.close()

    def _forward_run_event(self, engine: "RunEngine", event: "RunEvent") -> None:
        """Called on the run's thread: turn an engine event into a message for the app."""
        from dialjudge.core.judges import events

        post = self.post_message  # type: ignore[attr-defined]
        if isinstance(event, events.JudgmentScored):
            post(msg.JudgmentScored(engine.run_id, event.judgment, event.done, event.total))
        elif isinstance(event, events.RunProgress):
            post(msg.RunProgressed(engine.run_id, event))
        elif isinstance(event, events.RunStarted):
            post(msg.RunStarted(event.run_id, event.total, event.done, event.resumed))
        elif isinstance(event, events.RunFinished):
            post(msg.RunFinished(event.run_id, event.status, event.summary))
        elif isinstance(event, events.RunFailed):
            post(msg.RunFailed(event.error, event.run_id))

    def action_cancel_run(self) -> None:
        """Stop the run: what is stored stays, and the run can be resumed."""
        engine = self._engine
        if engine is not None and self.run_active:
            engine.cancel()
            self.notify("Cancelling the run…", timeout=3)  # type: ignore[attr-defined]

    def on_run_started(self, message: msg.RunStarted) -> None:
        state = self.run_state if self.run_state is not None else RunState()
        state.run_id, state.total, state.done, state.status = message.run_id, message.total, message.done, "running"
        self.run_state = state
        self._publish(Change.RUN)

    def on_judgment_scored(self, message: msg.JudgmentScored) -> None:
        self.workspace.add_judgment(message.judgment, message.run_id)
        self._dirty_items.add(message.judgment.item_id)
        if self.run_state is not None:
            self.run_state.done = message.done
            self.run_state.total = message.total
            if message.judgment.failed:
                self.run_state.failures += 1
        self._schedule_stats()

    def on_run_progressed(self, message: msg.RunProgressed) -> None:
        if self.run_state is not None:
            self.run_state.progress = message.progress
            self.run_state.failures = message.progress.failures
            self._publish(Change.RUN)

    def on_run_finished(self, message: msg.RunFinished) -> None:
        state = self.run_state if self.run_state is not None else RunState()
        state.run_id, state.status, state.summary = message.run_id, message.status, message.summary
        state.done, state.failures = message.summary.done, message.summary.failures
        self.run_state = state
        self.flush_live_updates()
        self.refresh_stats(changed_only=True)
        self._publish(Change.RUN)
        summary = message.summary
        self.notify(  # type: ignore[attr-defined]
            f"Run {message.run_id} {message.status}: {summary.done} of {summary.total} judgments, "
            f"{summary.failures} failed", timeout=6)

    def on_run_failed(self, message: msg.RunFailed) -> None:
        # The worker fails too; on_worker_state_changed shows the error.
        state = self.run_state if self.run_state is not None else RunState()
        state.status, state.error = "failed", message.error
        self.run_state = state
        self.flush_live_updates()
        self._publish(Change.RUN)
