"""The dialjudge terminal app: screens as modes, global keys, and the one place worker failures surface.

The app holds its controllers (composed, not inherited): each owns a part
of the state, starts its work on workers through the app, and defines the
messages its workers post. Those messages arrive here and go straight to
their owner; :meth:`DialjudgeApp.on_worker_state_changed` is the one place
a failed worker becomes something the user sees.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.worker import Worker, WorkerState

from dialjudge.core.errors import DialjudgeError
from dialjudge.core.judges.run.events import RunFinished
from dialjudge.core.workspace import Workspace

from .commands import DialjudgeCommands
from .controllers.adversarial import AdversarialController, AdversarialSetBuilt
from .controllers.datasets import (
    DatasetController,
    DatasetLoaded,
    ItemScored,
    MetricsProgressed,
    MetricsScored,
    StatsRefreshed,
)
from .controllers.decisions import DecisionController, DiagnosticsComputed, EvaluatorsCompared
from .controllers.history import RunScoresLoaded, StoredRunsController
from .controllers.lab import LabController
from .controllers.labels import LabelReportComputed, LabelReportController
from .controllers.pairwise import PairwiseReportComputed, PairwiseReportController
from .controllers.review import ReviewController
from .controllers.runs import RUN_GROUP, JudgeChoicesLoaded, RunController, RunEventReceived
from .controllers.tune import SearchEventReceived, SearchSpaceLoaded, SearchStopped, TuneController, WinnerSaved
from .navigation import DESTINATIONS, HOME
from .services import Services
from .widgets.selection_bar import SelectionBar


class DialjudgeApp(App[int]):
    TITLE = "dialjudge"
    CSS_PATH = [
        "app.tcss",
        "widgets/virtual_table.tcss",
        "widgets/correlation_panel.tcss",
        "widgets/discernment_panel.tcss",
        "widgets/item_view.tcss",
        "widgets/selection_bar.tcss",
        "widgets/run_progress_bar.tcss",
        "widgets/judge_widgets.tcss",
        "widgets/label_agreement_panel.tcss",
    ]
    BINDINGS: ClassVar[list[BindingType]] = [
        *(d.binding() for d in DESTINATIONS),
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("f1", "help", "Help", show=False),
        Binding("escape", "cancel_run", "Cancel run"),
        Binding("q", "quit", "Quit"),
    ]
    COMMANDS = App.COMMANDS | {DialjudgeCommands}

    def __init__(self, services: Services, dataset: str, *, datasets: DatasetController | None = None,
                 runs: RunController | None = None, lab: LabController | None = None,
                 review: ReviewController | None = None, stored_runs: StoredRunsController | None = None,
                 adversarial: AdversarialController | None = None,
                 labels: LabelReportController | None = None, tune: TuneController | None = None) -> None:
        """Controllers not passed in are made here, on ``services``."""
        super().__init__()
        self.services = services
        self.initial_dataset = dataset
        self.datasets = datasets or DatasetController(self, services)
        self.runs = runs or RunController(self, services, self.datasets)
        self.lab = lab or LabController(self, services)
        self.review = review or ReviewController(self, services, self.datasets)
        self.stored_runs = stored_runs or StoredRunsController(self, services, self.datasets)
        self.adversarial = adversarial or AdversarialController(self, services, self.datasets)
        self.labels = labels or LabelReportController(self, services, self.datasets)
        self.decisions = DecisionController(self, services, self.datasets, run_active=lambda: self.runs.active)
        self.pairwise = PairwiseReportController(self, services, self.datasets)
        self.tune = tune or TuneController(self, services, self.datasets)
        for d in DESTINATIONS:
            self.add_mode(d.mode, d.make_screen)

    @property
    def workspace(self) -> Workspace:
        """The open dataset with every evaluator's scores (the dataset controller's)."""
        return self.datasets.workspace

    def on_mount(self) -> None:
        self.switch_mode(HOME)
        self.set_interval(self.services.redraw_interval_s, self.datasets.flush_live_updates, name="live redraw")
        self.datasets.open(self.initial_dataset)

    # -- keys ------------------------------------------------------------------------------

    def action_go(self, mode: str) -> None:
        """Show one of the app's screens."""
        self.switch_mode(mode)

    def action_help(self) -> None:
        """List every key."""
        from .screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_cancel_run(self) -> None:
        """Stop the run: what is stored stays, and the run can be resumed."""
        self.runs.cancel()

    def action_cycle_subset(self, step: int) -> None:
        """Show the next (or previous) subset."""
        self.datasets.cycle_subset(step)

    def action_cycle_quality(self, step: int) -> None:
        """Show the next (or previous) quality."""
        self.datasets.cycle_quality(step)

    def action_refresh_stats(self) -> None:
        """Recompute the statistics now."""
        self.datasets.refresh_stats()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_run":
            return self.runs.active
        return True

    # -- messages from the controllers' workers, each handed to its owner ----------------

    def on_dataset_loaded(self, message: DatasetLoaded) -> None:
        self.datasets.dataset_loaded(message)

    def on_metrics_progressed(self, message: MetricsProgressed) -> None:
        self.datasets.metrics_progressed(message)

    def on_metrics_scored(self, message: MetricsScored) -> None:
        self.datasets.metrics_scored(message)

    def on_item_scored(self, message: ItemScored) -> None:
        self.datasets.item_scored(message)

    def on_stats_refreshed(self, message: StatsRefreshed) -> None:
        self.datasets.stats_refreshed(message)
        self.decisions.view_refreshed()

    def on_evaluators_compared(self, message: EvaluatorsCompared) -> None:
        self.decisions.compared(message)

    def on_diagnostics_computed(self, message: DiagnosticsComputed) -> None:
        self.decisions.diagnostics_computed(message)

    def on_selection_bar_chosen(self, message: SelectionBar.Chosen) -> None:
        self.datasets.choose_view(quality=message.quality, subset=message.subset)

    def on_judge_choices_loaded(self, message: JudgeChoicesLoaded) -> None:
        self.runs.judge_choices_loaded(message)

    def on_run_event_received(self, message: RunEventReceived) -> None:
        self.runs.event_received(message)
        if isinstance(message.event, RunFinished):
            self.labels.compute(message.event.run_id)
            self.pairwise.compute(message.event.run_id)

    def on_run_scores_loaded(self, message: RunScoresLoaded) -> None:
        # A pairwise run's judgments are pair orders: its candidate columns come from its report instead.
        if self.pairwise.compute(message.run_id) is None:
            self.stored_runs.run_scores_loaded(message)
        self.labels.compute(message.run_id)

    def on_label_report_computed(self, message: LabelReportComputed) -> None:
        self.labels.computed(message)

    def on_pairwise_report_computed(self, message: PairwiseReportComputed) -> None:
        self.pairwise.computed(message)

    def on_adversarial_set_built(self, message: AdversarialSetBuilt) -> None:
        self.adversarial.set_built(message)

    def on_search_space_loaded(self, message: SearchSpaceLoaded) -> None:
        self.tune.space_loaded(message)

    def on_search_event_received(self, message: SearchEventReceived) -> None:
        self.tune.event_received(message)

    def on_search_stopped(self, message: SearchStopped) -> None:
        self.tune.stopped(message)

    def on_winner_saved(self, message: WinnerSaved) -> None:
        self.tune.winner_saved(message)

    # -- failures --------------------------------------------------------------------------

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The one place a failed background task becomes something the user sees."""
        worker = event.worker
        if event.state is WorkerState.ERROR:
            error = worker.error
            text = str(error) if isinstance(error, DialjudgeError) else f"{type(error).__name__}: {error}"
            self.log.error(f"worker {worker.name!r} failed", error)
            self.notify(text, title=f"{worker.description or worker.name} failed", severity="error", timeout=10)
        if worker.group == RUN_GROUP and worker.is_finished:
            self.runs.worker_changed(event.state)


def make_app(dataset: str | None = None, *, services: Services | None = None) -> DialjudgeApp:
    """The app on ``dataset`` (name or path; default: the bundled sample)."""
    from dialjudge.core.registry import DEFAULT_DATASET

    return DialjudgeApp(services if services is not None else Services.default(), dataset or DEFAULT_DATASET)
