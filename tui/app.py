"""The dialjudge terminal app: screens as modes, global keys, and the one place worker failures surface.

The app holds its controllers (composed, not inherited): each owns a part
of the state, starts its work on workers through the app, and defines the
messages its workers post. Those messages arrive here: one table routes each
to its owner, and the few whose news concerns other controllers to the
app's coordination methods, which say what follows what.
:meth:`DialjudgeApp.on_worker_state_changed` is the one place a failed worker
becomes something the user sees.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any, ClassVar

from textual import on
from textual.app import App
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Input, TextArea
from textual.worker import Worker, WorkerState

from dialjudge.core.api import ColumnMap
from dialjudge.core.api.background import collect_young
from dialjudge.core.api.datasets import DEFAULT_DATASET
from dialjudge.core.api.events import RunFinished
from dialjudge.core.errors import DialjudgeError

from .commands import DialjudgeCommands
from .controllers.adversarial import AdversarialController, AdversarialSetBuilt
from .controllers.background import YOUNG_COLLECTION_INTERVAL_S
from .controllers.datasets import (
    DATASET_GROUP,
    STATS_GROUP,
    DatasetController,
    DatasetDescribed,
    DatasetLoaded,
    ItemScored,
    MetricsProgressed,
    MetricsScored,
    RunningCorrelationsComputed,
    StatsRefreshed,
    UnmappedTableOpened,
)
from .controllers.decisions import DecisionController, DiagnosticsComputed, EvaluatorsCompared
from .controllers.history import RunScoresLoaded, StoredRunsController
from .controllers.lab import LabController
from .controllers.label_estimates import LabelEstimatesController
from .controllers.labels import LabelReportComputed, LabelReportController
from .controllers.pairwise import PairwiseReportComputed, PairwiseReportController, PreferenceReportComputed
from .controllers.review import ReviewController
from .controllers.runs import (
    EVENTS_PER_SLICE,
    RUN_GROUP,
    InterruptedRunFound,
    JudgeChoicesLoaded,
    RunController,
    RunEventReceived,
    RunEventsQueued,
)
from .controllers.shutdown import ShutdownController, end_process_promptly
from .controllers.tune import SearchEventReceived, SearchSpaceLoaded, SearchStopped, TuneController, WinnerSaved
from .navigation import DESTINATIONS, HOME
from .routes import Route, message_routes
from .scores_view_model import Workspace
from .screens.column_map_dialog import ColumnMapDialog
from .screens.help import HelpScreen
from .screens.quit_dialog import InterruptedRunDialog, QuitDialog
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
        # Esc in a text field leaves the field (then screen keys work again); only outside one does it
        # cancel a run. Priority, so that no screen's own Esc acts first; off outside text fields.
        Binding("escape", "leave_field", "Leave the field", show=False, priority=True),
        Binding("escape", "cancel_run", "Cancel run"),
        Binding("q", "quit", "Quit"),
        # Textual's Ctrl+C only says "press ctrl+q"; here it quits, cancelling a run without asking.
        Binding("ctrl+c", "quit_now", "Quit now (a run is cancelled)", show=False),
    ]
    COMMANDS = App.COMMANDS | {DialjudgeCommands}
    # Screens reflow below these sizes (their .tcss files style `.-narrow` and `.-short`): 80×24 stays usable.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]

    def __init__(self, services: Services, dataset: str, column_map: ColumnMap | None = None) -> None:
        """The app on ``services``, opening ``dataset`` (a name or a path; a table read with
        ``column_map`` where given) when it starts."""
        super().__init__()
        self.services = services
        self.initial_dataset = dataset
        self.initial_column_map = column_map
        self.datasets = DatasetController(self, services)
        self.runs = RunController(self, services, self.datasets)
        self.lab = LabController(self, services)
        self.review = ReviewController(self, services, self.datasets)
        self.stored_runs = StoredRunsController(self, services, self.datasets)
        self.adversarial = AdversarialController(self, services, self.datasets)
        self.labels = LabelReportController(self, services, self.datasets)
        self.label_estimates = LabelEstimatesController(self, services, self.datasets)
        self.decisions = DecisionController(self, services, self.datasets, run_active=lambda: self.runs.active)
        self.pairwise = PairwiseReportController(self, services, self.datasets)
        self.tune = TuneController(self, services, self.datasets)
        self.shutdown = ShutdownController(self, self.runs, self.tune, ask=self._ask_before_quitting,
                                           unsaved=self.lab.unsaved_text)
        #: The launch's offer to resume an unfinished run is made once, for the first dataset opened.
        self._interrupted_checked = False
        self._routes = message_routes(type(self), self._routes_to_owners(), self._routes_across_controllers())
        for d in DESTINATIONS:
            self.add_mode(d.mode, d.make_screen)

    @property
    def workspace(self) -> Workspace:
        """The open dataset with every evaluator's scores (the dataset controller's)."""
        return self.datasets.workspace

    def on_mount(self) -> None:
        self.switch_mode(HOME)
        self.set_interval(self.services.redraw_interval_s, self.datasets.flush_live_updates, name="live redraw")
        self.set_interval(YOUNG_COLLECTION_INTERVAL_S, collect_young, name="young garbage collection")
        self.datasets.open(self.initial_dataset, self.initial_column_map)
        if not self.is_headless:  # a test's app leaves its process's signals alone
            self.shutdown.install_signal_handlers()

    def on_unmount(self) -> None:
        # However the app ends (a crash included): a run still going is cancelled, so it stores its
        # end instead of judging on behind a closed screen.
        self.shutdown.cancel_all()
        self.runs.close_worker()
        self.datasets.close_worker()
        self.shutdown.remove_signal_handlers()

    # -- keys ------------------------------------------------------------------------------

    def action_go(self, mode: str) -> None:
        """Show one of the app's screens."""
        self.switch_mode(mode)

    def action_help(self) -> None:
        """List every key."""
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    async def action_quit(self) -> None:
        """Quit; a run in progress is cancelled first (asks, as it does before unsaved edits are lost)."""
        self.shutdown.request_quit(ask=True)

    def _ask_before_quitting(self, running: str | None, unsaved: str | None,
                             answered: Callable[[bool | None], None]) -> None:
        self.push_screen(QuitDialog(running, unsaved=unsaved), answered)

    def action_quit_now(self) -> None:
        """Quit at once; a run in progress is cancelled first, without asking."""
        self.shutdown.request_quit(ask=False)

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

    def action_leave_field(self) -> None:
        """Leave the text field: keys act on the screen again."""
        self.screen.set_focus(None)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "leave_field":
            # In a dialog Esc keeps closing the dialog, as its footer says.
            return isinstance(self.focused, (Input, TextArea)) and not isinstance(self.screen, ModalScreen)
        if action == "cancel_run":
            return self.runs.active
        return True

    # -- messages from the controllers' workers ------------------------------------------

    def _routes_to_owners(self) -> list[Route[Any]]:
        """Messages that concern only the controller whose worker posted them."""
        datasets, runs, tune = self.datasets, self.runs, self.tune
        return [
            Route(DatasetDescribed, datasets.dataset_described),
            Route(RunningCorrelationsComputed, datasets.running_correlations_computed),
            Route(MetricsProgressed, datasets.metrics_progressed),
            Route(MetricsScored, datasets.metrics_scored),
            Route(ItemScored, datasets.item_scored),
            Route(SelectionBar.Chosen, lambda m: datasets.choose_view(quality=m.quality, subset=m.subset)),
            Route(EvaluatorsCompared, self.decisions.compared),
            Route(DiagnosticsComputed, self.decisions.diagnostics_computed),
            Route(JudgeChoicesLoaded, runs.judge_choices_loaded),
            Route(LabelReportComputed, self.labels.computed),
            Route(PairwiseReportComputed, self.pairwise.computed),
            Route(PreferenceReportComputed, self.pairwise.preference_computed),
            Route(AdversarialSetBuilt, self.adversarial.set_built),
            Route(SearchSpaceLoaded, tune.space_loaded),
            Route(SearchEventReceived, tune.event_received),
            Route(SearchStopped, tune.stopped),
            Route(WinnerSaved, tune.winner_saved),
        ]

    def _routes_across_controllers(self) -> list[Route[Any]]:
        """Messages whose news concerns more than their owner: the app's coordination, in one place."""
        return [
            Route(DatasetLoaded, self._dataset_loaded),
            Route(InterruptedRunFound, self._interrupted_run_found),
            Route(UnmappedTableOpened, self._unmapped_table_opened),
            Route(StatsRefreshed, self._stats_refreshed),
            Route(RunEventReceived, self._run_event_received),
            Route(RunEventsQueued, self._run_events_queued),
            Route(RunScoresLoaded, self._stored_run_scores_loaded),
        ]

    @on(Message)
    async def _route(self, message: Message) -> None:
        route = self._routes.get(type(message))
        if route is not None:
            handled = route.handler(message)
            if inspect.isawaitable(handled):
                await handled

    def _dataset_loaded(self, message: DatasetLoaded) -> None:
        """The dataset opened; the first time, the store is asked whether its newest run was left unfinished."""
        self.datasets.dataset_loaded(message)
        if not self._interrupted_checked:
            self._interrupted_checked = True
            self.runs.find_interrupted(message.dataset.name)

    def _interrupted_run_found(self, message: InterruptedRunFound) -> None:
        """Offer to resume the run a quit, a crash or a closed terminal cut off."""
        record = message.record

        def answered(resume: bool | None) -> None:
            if resume and not self.runs.active:
                self.switch_mode("run")
                self.runs.resume_stored(record)

        self.push_screen(InterruptedRunDialog(record), answered)

    def _unmapped_table_opened(self, message: UnmappedTableOpened) -> None:
        """Ask which field each column holds, then open the file with that mapping."""

        def answered(column_map: ColumnMap | None) -> None:
            if column_map is not None:
                self.datasets.open(message.name_or_path, column_map)
            else:
                self.notify(f"{message.choices.path.name} was not opened: its columns were not mapped",
                            severity="warning", timeout=5)

        self.push_screen(ColumnMapDialog(message.choices, message.reason), answered)

    def _stats_refreshed(self, message: StatsRefreshed) -> None:
        """New statistics of the view: the paired comparison and the judge diagnostics follow them."""
        self.datasets.stats_refreshed(message)
        self.decisions.view_refreshed()

    def _run_event_received(self, message: RunEventReceived) -> None:
        """A run's progress; when it finishes, its labels and pairwise reports are computed where
        core's ``reports_after_run`` says they follow the run (the same reports ``dialjudge judge`` prints)."""
        self.runs.event_received(message)
        if isinstance(message.event, RunFinished) and message.event.run_id:  # 0: stopped before it was recorded
            if message.event.summary.shown_again:
                # Nothing streamed in: it joins the view as a stored run does (its reports follow).
                self.stored_runs.show_in_scores(message.event.run_id)
            else:
                self._report_on_run(message.event.run_id)

    async def _run_events_queued(self, _: RunEventsQueued) -> None:
        """A run's queued events, applied in order as if each had come alone, :data:`EVENTS_PER_SLICE` at a time
        with the event loop let in between: a fast run queues thousands between two looks, and applying them
        in one go (about 17 µs each at 100,000 items) held the UI thread for 30-40 ms, which a redraw then
        followed without a break. Textual's message loop does not yield between queued messages itself."""
        events = self.runs.take_events()
        for start in range(0, len(events), EVENTS_PER_SLICE):
            if start:
                await asyncio.sleep(0)  # the redraw, the input and the timers due run here
            for event in events[start:start + EVENTS_PER_SLICE]:
                self._run_event_received(RunEventReceived(event))

    def _stored_run_scores_loaded(self, message: RunScoresLoaded) -> None:
        """A stored run opened from the history: its judge columns join the view, or, for a pairwise
        run (whose judgments are pair orders, not scores), its pairwise report stands in for them."""
        if self.pairwise.compute(message.run_id) is None:
            self.stored_runs.run_scores_loaded(message)
        self.labels.compute(message.run_id)

    def _report_on_run(self, run_id: int) -> None:
        # Decided on the workers: reading the run's record and the dataset's qualities stalled the UI.
        self.labels.compute(run_id, decide_in_background=True)
        self.pairwise.compute(run_id, decide_in_background=True)

    # -- failures --------------------------------------------------------------------------

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The one place a failed background task becomes something the user sees."""
        worker = event.worker
        if event.state is WorkerState.ERROR:
            error = worker.error
            text = str(error) if isinstance(error, DialjudgeError) else f"{type(error).__name__}: {error}"
            self.log.error(f"worker {worker.name!r} failed", error)
            # Plain text: an error quotes paths, data and config keys ("[data] dirs"), never markup.
            self.notify(text, title=f"{worker.description or worker.name} failed", severity="error", timeout=10,
                        markup=False)
            if worker.group == DATASET_GROUP:  # the toast goes; the screens keep saying why
                self.datasets.open_failed(text)
        if worker.group == RUN_GROUP and worker.is_finished:
            self.runs.worker_changed(event.state)
        if worker.group == STATS_GROUP and worker.is_finished:
            self.datasets.stats_work_finished()


__all__ = ["DialjudgeApp", "end_process_promptly", "make_app"]


def make_app(dataset: str | None = None, *, services: Services | None = None,
             column_map: ColumnMap | None = None) -> DialjudgeApp:
    """The app on ``dataset`` (name or path; default: the bundled sample), a table read with
    ``column_map`` where given (``dialjudge --dataset FILE --map COLUMN=FIELD``)."""
    return DialjudgeApp(services if services is not None else Services.default(), dataset or DEFAULT_DATASET,
                        column_map)
