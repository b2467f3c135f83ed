"""The app's tuning search (one at a time): load a search space, run it, follow it, save the winner.

Loading a space file happens on a thread worker started through the app. The search itself runs in the
session's judge process (core/api/run_worker.py), beside the app's runs and Prompt lab trials and with the
judges they opened (a local model loads once, and two computations of it never overlap); a thread worker of
the app sends it there and follows it. Where the session's judges exist only in the app's process (a test's
factory) the search runs on that thread instead. Every core search event reaches the app as one
:class:`SearchEventReceived` (progress ones collapse) and is folded into :attr:`TuneController.state`. The
Tune screen follows :attr:`TuneController.changed`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.message import Message
from textual.signal import Signal
from textual.worker import Worker

from dialjudge.core.api import (
    open_search,
    read_space,
    save_search_record,
    save_winner,
)
from dialjudge.core.api.events import (
    JudgingProgressed,
    RoundStarted,
    SearchCancelled,
    SearchEvent,
    SearchFinished,
    SearchStarted,
    VariantScored,
)
from dialjudge.core.api.run_worker import (
    JudgeProcessDied,
    WorkerSearchHandle,
    runs_in_worker,
    start_search_in_worker,
)
from dialjudge.core.errors import ConfigError

from .base import start_thread_work

if TYPE_CHECKING:
    from dialjudge.core.api import (
        SearchHandle,
        SearchSpace,
        TuningReport,
    )

    from ..services import Services
    from .datasets import DatasetController

TUNE_GROUP = "tune"
SPACE_GROUP = "tune-space"
SAVE_GROUP = "tune-save"


@dataclass
class SearchSpaceLoaded(Message):
    """A search space file was read and validated."""

    path: Path
    space: SearchSpace


@dataclass
class SearchEventReceived(Message):
    """The running search said something (any core search event); progress reports collapse."""

    event: SearchEvent

    def can_replace(self, message: Message) -> bool:
        return (isinstance(self.event, JudgingProgressed) and isinstance(message, SearchEventReceived)
                and isinstance(message.event, JudgingProgressed))


@dataclass
class SearchStopped(Message):
    """The search's worker ended without a report: cancelled (``error`` None) or failed; ``died``: the judge
    process it ran in ended (a signal, a crash), which the app says, staying up."""

    error: str | None = None
    died: bool = False


@dataclass
class WinnerSaved(Message):
    """The winning variant was saved as template ``name`` at ``path``."""

    name: str
    path: Path


@dataclass
class TuneState:
    """What the Tune screen shows."""

    #: variant -> (stage, score, items) of its latest score, in the order scores arrived.
    scores: dict[str, tuple[str, float | None, int]] = field(default_factory=dict)
    round_text: str = ""
    progress: JudgingProgressed | None = None
    spent: int = 0
    budget: int = 0
    #: The judgments the search plans (its tuning rounds and held-out part), and when it started (by the
    #: services' clock): what the ETA is computed from.
    planned: int = 0
    started_at: float | None = None
    model_calls: int = 0
    running: bool = False
    status: str = "Load a search space (o), then start the search (r)."
    report: TuningReport | None = None

    def eta_s(self, now: float) -> float | None:
        """Seconds the search still needs at the pace of its judgments so far (None: no pace yet)."""
        if not self.running or self.started_at is None or self.spent <= 0 or self.planned <= 0:
            return None
        return (now - self.started_at) / self.spent * max(0, self.planned - self.spent)

    def apply(self, event: SearchEvent) -> None:
        if isinstance(event, SearchStarted):
            self.budget = event.budget
            self.planned = event.planned
            self.status = (f"Searching {event.n_variants} variants: {event.tuning_contexts} tuning and "
                           f"{event.heldout_contexts} held-out contexts")
        elif isinstance(event, RoundStarted):
            r = event.round
            self.round_text = f"round {r.index + 1}: {len(r.variants)} variants on {r.n_contexts} contexts"
        elif isinstance(event, JudgingProgressed):
            self.progress = event
            self.spent, self.model_calls = event.spent, event.model_calls
        elif isinstance(event, VariantScored):
            self.scores[event.variant] = (event.stage, event.score, event.n_items)
            self.scores = dict(self.scores)
            self.spent, self.model_calls = event.spent, event.model_calls
            if event.stage == "held-out":
                self.round_text = "held-out"
        elif isinstance(event, SearchFinished):
            self.report = event.report
            self.running = False
            self.progress = None
            self.round_text = ""
            self.spent, self.model_calls = event.report.spent, event.report.model_calls
            self.status = f"Finished: winner {event.report.winner!r} (best on tuning)"


class TuneController:
    """Owns the search space, the running search and its result."""

    def __init__(self, app: App[Any], services: Services, datasets: DatasetController) -> None:
        self.app = app
        self.services = services
        self.datasets = datasets
        self.space: SearchSpace | None = None
        self.space_path: Path | None = None
        self.state = TuneState()
        #: Published whenever :attr:`state` or the space changed.
        self.changed: Signal[TuneState] = Signal(app, "tune-changed")
        self._search: SearchHandle | WorkerSearchHandle | None = None
        self._worker: Worker[Any] | None = None
        #: Esc before the search was made: it is cancelled as soon as it is.
        self._cancel_pending = False

    @property
    def running(self) -> bool:
        return self.state.running

    @property
    def worker(self) -> Worker[Any] | None:
        """The worker of the search running (or run last)."""
        return self._worker

    @property
    def process_id(self) -> int | None:
        """The id of the judge process running the search (None: none, or the search runs in this process)."""
        search = self._search
        return search.pid if isinstance(search, WorkerSearchHandle) else None

    def _publish(self) -> None:
        self.app.refresh_bindings()
        self.changed.publish(self.state)

    # -- the space --------------------------------------------------------------------------------

    def load_space(self, path: Path) -> Worker[None]:
        """Read and validate a search space file on a worker; the app receives :class:`SearchSpaceLoaded`."""

        def load() -> None:
            self.app.post_message(SearchSpaceLoaded(path, read_space(path)))

        return start_thread_work(self.app, load, group=SPACE_GROUP, description="Reading the search space")

    def space_loaded(self, message: SearchSpaceLoaded) -> None:
        self.space, self.space_path = message.space, message.path
        if not self.running:
            self.state = TuneState(status=f"{len(message.space.variants)} variants from {message.path.name}; "
                                          "start the search (r)")
        self._publish()

    # -- the search -------------------------------------------------------------------------------

    def start(self, **settings: Any) -> Worker[Any]:
        """Run the loaded space on the open dataset; ``settings`` override the space's [search] ones."""
        if self.running:
            raise ConfigError("a tuning search is already running; cancel it first (Esc)")
        if self.space is None:
            raise ConfigError("load a search space first")
        dataset = self.datasets.workspace.dataset
        if dataset is None:
            raise ConfigError("open a dataset before starting a tuning search")
        space = self.space.with_settings(**settings)
        self._cancel_pending = False
        self.state = TuneState(running=True, status="Starting the search…", budget=space.settings.budget,
                               started_at=self.services.clock())
        self._publish()

        def run() -> Any:
            def forward(event: SearchEvent) -> None:  # called on this thread; the app applies it
                self.app.post_message(SearchEventReceived(event))

            session = self.services.session
            try:
                search: SearchHandle | WorkerSearchHandle
                if runs_in_worker(session):
                    search = start_search_in_worker(session, space, dataset, on_event=forward)
                else:  # judges that exist only in this process (a test's)
                    search = open_search(session, space, dataset, on_event=forward)
                self._search = search
                if self._cancel_pending:  # Esc came before the search existed
                    search.cancel()
                report = search.run_to_end()
                save_search_record(report)
                return report
            except SearchCancelled:
                self.app.post_message(SearchStopped())
                return None
            except JudgeProcessDied as exc:  # the app stays up and says so; a rerun reuses what was stored
                self.app.post_message(SearchStopped(str(exc), died=True))
                return None
            except BaseException as exc:
                self.app.post_message(SearchStopped(str(exc) or type(exc).__name__))
                raise  # the app's failure handler shows it

        self._worker = start_thread_work(self.app, run, group=TUNE_GROUP, description="Tuning search")
        return self._worker

    def cancel(self) -> None:
        """Stop the search after the judgment in flight; what is stored stays for a rerun."""
        if not self.running:
            return
        self._cancel_pending = True
        search = self._search
        if search is not None:
            search.cancel()
        self.app.notify("Cancelling the tuning search…", timeout=3)

    def event_received(self, message: SearchEventReceived) -> None:
        self.state.apply(message.event)
        if isinstance(message.event, SearchFinished):
            self._search = None
        self._publish()

    def stopped(self, message: SearchStopped) -> None:
        self._search = None
        self.state.running = False
        self.state.progress = None
        self.state.status = ("Cancelled; every judgment so far is stored, and a rerun reuses it"
                             if message.error is None else f"Failed: {message.error}")
        if message.died:
            self.app.notify(f"{message.error or 'The judge process ended'}. Its log: ctrl+l on the Run screen.",
                            severity="error", title="The judge process died", timeout=20)
        self._publish()

    # -- the winner -------------------------------------------------------------------------------

    def save_winner(self, name: str, folder: Path | None = None) -> Worker[None]:
        """Save the winning variant's template as ``name`` (default folder: the user's templates)."""
        report = self.state.report
        if report is None or self.space is None:
            raise ConfigError("no finished search: run one before saving its winner")

        def save() -> None:
            path = save_winner(report, self.services.config, name, folder=folder)
            self.app.post_message(WinnerSaved(name, path))

        return start_thread_work(self.app, save, group=SAVE_GROUP, description="Saving the winner")

    def winner_saved(self, message: WinnerSaved) -> None:
        self.app.notify(f"Saved the winner as template {message.name!r} ({message.path})", timeout=6)
        self.state.status = f"Winner saved as template {message.name!r}"
        self._publish()
