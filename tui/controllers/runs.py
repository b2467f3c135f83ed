"""The judge run the app drives (one at a time), and the templates and personas a run may use.

Templates and personas are read from disk once (:attr:`RunController.judge_choices`);
the Run and Prompt lab screens follow :attr:`RunController.judge_choices_changed`,
and a saved template or persona reloads them. Planning a run reads the
templates again and asks the run store for an unfinished run of the same
configuration, on a worker; the screen that asked receives :class:`RunPlanned`
and decides (resume, start afresh). The run's thread queues the engine's
events and wakes the app with one :class:`RunEventsQueued` per batch; the app
applies each as a :class:`RunEventReceived`, folded into :attr:`RunController.state`.
"""

from __future__ import annotations

import re
import threading
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.message import Message
from textual.message_pump import MessagePump
from textual.signal import Signal
from textual.worker import Worker, WorkerState, get_current_worker

from dialjudge.core.api import (
    EngineOptions,
    JudgeChoices,
    JudgeConfig,
    RunHandle,
    RunPlan,
    RunRecord,
    RunRequest,
    find_interrupted_run,
    find_resumable,
    judge_choices,
    plan_run,
    start_run,
)
from dialjudge.core.api.batch import awaiting_run
from dialjudge.core.api.events import (
    JudgmentScored,
    RunEvent,
    RunFinished,
    RunProgress,
)
from dialjudge.core.api.run_worker import (
    JudgeLog,
    WorkerRunHandle,
    close_judge_worker,
    judge_log,
    runs_in_worker,
    start_run_in_worker,
)
from dialjudge.core.api.types import (
    RunConfig,
    RunState,
    RunStatus,
    model_file_backend,
)
from dialjudge.core.api.view import judge_scale
from dialjudge.core.errors import ConfigError
from dialjudge.core.model import Dataset

from ..state import Change
from .base import start_following_work, start_thread_work

if TYPE_CHECKING:
    from ..services import Services
    from .datasets import DatasetController

#: RunRequest and JudgeChoices are core's (core.api); the screens import them from here too.
__all__ = ["RunRequest", "JudgeChoices", "JudgeChoicesLoaded", "RunEventReceived", "RunPlanned", "RunController",
           "gguf_judge"]

RUN_GROUP = "run"
LOG_GROUP = "judge-log"
CHOICES_GROUP = "judge-choices"
PLAN_GROUP = "run-plan"


@dataclass
class JudgeChoicesLoaded(Message):
    """Templates and personas were (re)read from disk."""

    choices: JudgeChoices


@dataclass
class RunEventReceived(Message):
    """The running engine said something (any core :data:`RunEvent`); progress reports collapse."""

    event: RunEvent

    def can_replace(self, message: Message) -> bool:
        return (isinstance(self.event, RunProgress) and isinstance(message, RunEventReceived)
                and isinstance(message.event, RunProgress))


class RunEventsQueued(Message):
    """The running engine queued events for the app (:meth:`RunController.take_events`).

    A run of 100,000 fast judgments posted one message per judgment: the UI
    thread spent its time dispatching them and the app stalled. The run's thread
    now queues its events and posts this only when the queue was empty, so one
    message stands for every event queued until the app takes them.
    """

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, RunEventsQueued)


#: Events the app applies per RunEventsQueued before it lets other work in (it posts another).
EVENTS_PER_TAKE = 2_000
#: Of those, events applied before the event loop is let in (the app's ``_run_events_queued``).
EVENTS_PER_SLICE = 250
#: Seconds after the app took every queued event before it looks again itself, while events keep coming:
#: meanwhile the run's thread queues without waking it. Woken at each first event after a take, the app was
#: woken 10,000 times in a 100,000-item run (each wake a write to the event loop's socket and a handover of
#: the interpreter between the two threads); a look every 50 ms keeps the table as live to the eye.
LOOK_AGAIN_S = 0.05


@dataclass
class JudgeLogRead(Message):
    """The end of the judge process's log was read (for the screen that asked)."""

    log: JudgeLog


@dataclass
class InterruptedRunFound(Message):
    """The newest run on the opened dataset was left unfinished (cancelled, or cut off by a quit)."""

    record: RunRecord


@dataclass
class RunPlanned(Message):
    """A run request was validated; ``resumable`` is an unfinished run of the same configuration."""

    plan: RunPlan
    resumable: RunRecord | None


_JUDGE_NAME_JUNK = re.compile(r"[^a-z0-9_-]+")


def gguf_judge(path: str, taken: set[str]) -> JudgeConfig:
    """A local judge for a .gguf file typed in, named after the file (unique among ``taken``)."""
    file = Path(path).expanduser()
    if file.suffix.lower() != ".gguf":
        raise ConfigError(f"{path}: a local judge needs a .gguf model file")
    base = _JUDGE_NAME_JUNK.sub("-", file.stem.lower()).strip("-") or "gguf"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    return JudgeConfig(name=name, backend=model_file_backend(), model=file.stem, model_path=str(file))


class RunController:
    """Starts, follows and cancels the app's judge run; keeps the judge choices."""

    def __init__(self, app: App[Any], services: Services, datasets: DatasetController) -> None:
        self.app = app
        self.services = services
        self.datasets = datasets
        #: The run the app is driving, or the last one it drove (None: none yet).
        self.state: RunState | None = None
        #: The name of the dataset that run judges (screens show a run only beside its own dataset).
        self.dataset: str | None = None
        self.judge_choices: JudgeChoices | None = None
        #: Published with the new :class:`JudgeChoices` whenever they were (re)loaded.
        self.judge_choices_changed: Signal[JudgeChoices] = Signal(app, "judge-choices-changed")
        self._handle: RunHandle | WorkerRunHandle | None = None
        self._worker: Worker[Any] | None = None
        #: A cancel that came before the run's engine existed; the engine takes it on when made.
        self._cancel_pending = False
        self._pairwise = False
        #: The running run's judges' own scale (their cells show scores on it); None: 0-1 only.
        self._judge_scale: tuple[float, float] | None = None
        self._cancel_shown = False
        #: Engine events queued by the run's thread, in order, until the app takes them.
        self._queued: deque[RunEvent] = deque()
        self._queue_lock = threading.Lock()
        #: The app looks at the queue again soon (LOOK_AGAIN_S): the run's thread need not wake it.
        self._look_due = False

    @property
    def active(self) -> bool:
        return self.state is not None and self.state.active

    def state_on(self, dataset: str | None) -> RunState | None:
        """The run's state when it judges ``dataset`` (None: no run, or a run on another dataset)."""
        return self.state if self.state is not None and self.dataset == dataset else None

    @property
    def worker(self) -> Worker[Any] | None:
        """The worker of the run the app drives (or drove last)."""
        return self._worker

    @property
    def process_id(self) -> int | None:
        """The id of the worker process judging the app's run (None: none, or the run is in this process)."""
        handle = self._handle
        return handle.pid if isinstance(handle, WorkerRunHandle) else None

    @property
    def cancellable(self) -> bool:
        """A run is active and its engine is running, so :meth:`cancel` stops it now."""
        return self.active and self._handle is not None

    def _changed(self) -> None:
        # "Cancel run" shows while one is active. Only when that flips: every refresh rebuilds
        # the footer's widgets, which stalled the UI on each progress event of a long run.
        if self.active != self._cancel_shown:
            self._cancel_shown = self.active
            self.app.refresh_bindings()
        self.datasets.publish(Change.RUN)

    # -- judge choices ---------------------------------------------------------------------

    def reload_judge_choices(self) -> Worker[None]:
        """Read templates and personas again (after one was saved, or on first use)."""

        def load() -> None:
            choices = judge_choices(self.services.config.template_dirs)
            if not get_current_worker().is_cancelled:
                self.app.post_message(JudgeChoicesLoaded(choices))

        return start_thread_work(self.app, load, group=CHOICES_GROUP, description="Reading templates and personas")

    def judge_choices_loaded(self, message: JudgeChoicesLoaded) -> None:
        self.judge_choices = message.choices
        for error in message.choices.errors:
            self.app.notify(str(error), title="A template file was skipped", severity="warning", timeout=8)
        self.judge_choices_changed.publish(message.choices)

    # -- planning ----------------------------------------------------------------------------

    def plan(self, request: RunRequest, dataset: Dataset, reply_to: MessagePump) -> Worker[None]:
        """Validate ``request`` into a plan on a worker; ``reply_to`` receives :class:`RunPlanned`."""

        def plan() -> None:
            planned = plan_run(request, dataset, self.services.config)
            # A run of these settings written to a batch file and awaiting answers is offered too: resuming
            # it judges its unanswered judgments here, live (the command line's --continue-live).
            resumable = (find_resumable(self.services.session, planned)
                         or awaiting_run(self.services.session, planned))
            if not get_current_worker().is_cancelled:
                reply_to.post_message(RunPlanned(planned, resumable))

        return start_thread_work(self.app, plan, group=PLAN_GROUP, description="Planning the run")

    def start_planned(self, plan: RunPlan, *, resume_run: int | None = None,
                      reuse_finished: bool = False) -> Worker[Any]:
        """Start ``plan``: continue run ``resume_run``, or (None) a new run even when one could resume.

        With ``reuse_finished``, a finished run of exactly these settings is shown again instead of
        storing an identical one (core decides, as for ``dialjudge judge`` without ``--fresh``; the
        run's summary then says ``shown_again``). The Scores screen switches to the quality the run
        is compared with.
        """
        if plan.quality is not None and plan.quality in self.datasets.workspace.qualities():
            self.datasets.choose_view(quality=plan.quality)
        options: dict[str, Any] = {"run_id": resume_run} if resume_run is not None else {"resume": False}
        if resume_run is None and reuse_finished:
            # Resuming is what shows a finished run again; the plan found nothing unfinished to resume.
            options = {"resume": True, "reuse_finished": True}
        return self.start(plan.config, **options)

    # -- running -----------------------------------------------------------------------------

    def start(self, config: RunConfig, dataset: Dataset | None = None, **engine_options: Any) -> Worker[Any]:
        """Run ``config`` on ``dataset`` (default: the open one); judgments stream into the workspace.

        ``engine_options`` are :class:`EngineOptions` fields (a test passes its own renderer, say).
        """
        if self.active:
            raise ConfigError("a run is already in progress; cancel it first (Esc)")
        dataset = dataset or self.datasets.workspace.dataset
        if dataset is None:
            raise ConfigError("open a dataset before starting a run")
        self.state = RunState(judges=[j.name for j in config.judges], clock=self.services.clock)
        self.dataset = dataset.name
        # A pairwise run's judgments are pair orders, not items: its candidate scores join the
        # workspace from its report when it finishes (controllers.pairwise).
        self._pairwise = config.pairs is not None
        self._judge_scale = None  # found on the run's thread below, before its first judgment
        self._cancel_pending = False
        self._changed()

        def run() -> Any:
            if not self._pairwise:
                # Here, not on the UI thread: finding the quality's scale may walk every item of the dataset (20 ms
                # at 100,000; Dataset.qualities keeps it after). Set before the run starts, so before any judgment
                # of it is applied.
                self._judge_scale = judge_scale(config, dataset)
            session = self.services.session
            options = EngineOptions(**{"clock": self.services.clock, **engine_options})
            # The display is called on this thread: the app applies each event on the UI thread. The run
            # goes to a worker process when it can (a judge that crashes or is killed ends that process,
            # not the app); this thread follows it for as long as it runs (the child dies with it).
            handle: RunHandle | WorkerRunHandle
            if runs_in_worker(session, options):
                handle = start_run_in_worker(session, config, dataset, display=self, options=options)
            else:  # judges or options that exist only in this process (a test's)
                handle = start_run(session, config, dataset, display=self, options=options)
            self._handle = handle
            try:
                if self._cancel_pending:  # the app quit while the judges were being made
                    handle.cancel()
                return handle.run_to_end()
            finally:
                self._handle = None

        self._worker = start_following_work(self.app, run, group=RUN_GROUP, description="Judge run",
                                           long_lived_result=True)
        return self._worker

    def read_judge_log(self, reply_to: MessagePump) -> Worker[None]:
        """Read the end of the judge process's log on a worker; ``reply_to`` receives :class:`JudgeLogRead`."""

        def read() -> None:
            log = judge_log(self.services.session)
            if not get_current_worker().is_cancelled:
                reply_to.post_message(JudgeLogRead(log))

        return start_thread_work(self.app, read, group=LOG_GROUP, description="Reading the judge process's log")

    def close_worker(self) -> None:
        """Let the judge process end (the app is closing): a run in it is cancelled, its judges closed."""
        close_judge_worker(self.services.session)

    def on_event(self, event: RunEvent) -> None:
        """The running engine's events (core.api.RunDisplay), on the run's thread: queued, and the app
        told (:class:`RunEventsQueued`) when the queue was empty and no look of its own is due, or at once for
        an event other than a judgment or a progress count."""
        # A judgment or a progress count waits for the app's next look; any other event (the run's start, a
        # phase, its end) wakes it at once: the end must be applied before the run's worker says it returned.
        streaming = isinstance(event, (JudgmentScored, RunProgress))
        with self._queue_lock:
            wake = not streaming or (not self._queued and not self._look_due)
            self._queued.append(event)
        if wake:
            self.app.post_message(RunEventsQueued())

    def take_events(self, limit: int = EVENTS_PER_TAKE) -> list[RunEvent]:
        """Up to ``limit`` queued events, oldest first; when more wait, the app is told again, and when it took
        the last, it looks again in :data:`LOOK_AGAIN_S` (events queued meanwhile do not wake it)."""
        with self._queue_lock:
            taken = [self._queued.popleft() for _ in range(min(limit, len(self._queued)))]
            more = bool(self._queued)
            look_later = bool(taken) and not more and not self._look_due
            if look_later:
                self._look_due = True
        if more:
            self.app.post_message(RunEventsQueued())
        elif look_later:
            self.app.set_timer(LOOK_AGAIN_S, self._look_again, name="look at the run's events again")
        return taken

    def _look_again(self) -> None:
        with self._queue_lock:
            self._look_due = False  # none waiting: the next event wakes the app; some: their take looks again
            waiting = bool(self._queued)
        if waiting:
            self.app.post_message(RunEventsQueued())

    def cancel(self) -> None:
        """Stop the run: what is stored stays, and the run can be resumed."""
        handle = self._handle
        if not self.active:
            return
        self._cancel_pending = True
        if handle is not None:
            handle.cancel()
        self.app.notify("Cancelling the run…", timeout=3)

    def find_interrupted(self, dataset: str) -> Worker[None]:
        """Ask the store on a worker whether the newest run on ``dataset`` was left unfinished;
        the app receives :class:`InterruptedRunFound` when it was."""

        def find() -> None:
            newest = find_interrupted_run(self.services.session, dataset)
            if newest is not None and not get_current_worker().is_cancelled:
                self.app.post_message(InterruptedRunFound(newest))

        return start_thread_work(self.app, find, group="interrupted-run", description="Looking for an unfinished run")

    def resume_stored(self, record: RunRecord) -> Worker[Any]:
        """Continue a stored unfinished run with its own configuration (on the open dataset)."""
        config = record.run_config
        if config.quality is not None and config.quality in self.datasets.workspace.qualities():
            self.datasets.choose_view(quality=config.quality)
        return self.start(config, run_id=record.id)

    def event_received(self, message: RunEventReceived) -> None:
        event = message.event
        state = self.state if self.state is not None else RunState(clock=self.services.clock)
        self.state = state
        state.apply(event)
        if isinstance(event, JudgmentScored):
            if not self._pairwise:
                self.datasets.add_judgment(event.judgment, state.run_id, self._judge_scale)
            return  # announced with the next live update, not one redraw per judgment
        if isinstance(event, RunFinished):
            self.datasets.flush_live_updates()
            self.datasets.refresh_stats(changed_only=True)
            summary = event.summary
            if event.status is RunStatus.INTERRUPTED:
                self.app.notify(f"{state.error or f'The judge process of run {event.run_id} ended'}. "
                                "Its log: ctrl+l on the Run screen.", severity="error",
                                title="The judge process died", timeout=20)
            elif not event.run_id:
                self.app.notify(f"The run was {event.status} before anything was asked", timeout=6)
            elif summary.shown_again:
                self.app.notify(f"Run {event.run_id} had finished with exactly these settings: shown again, "
                                "nothing asked. To judge anew, tick “New run” and start again.",
                                title="Shown, not repeated", timeout=10)
            else:
                self.app.notify(f"Run {event.run_id} {event.status}: {summary.done} of {summary.total} judgments, "
                                f"{summary.failures} failed", timeout=6)
        elif state.status is RunStatus.FAILED:
            # The worker fails too; the app's failure handler shows the error.
            self.datasets.flush_live_updates()
        self._changed()

    def worker_changed(self, state: WorkerState) -> None:
        """The run's worker changed state (the app passes it on)."""
        if state in (WorkerState.ERROR, WorkerState.CANCELLED, WorkerState.SUCCESS) and self.active:
            # The run ended before the engine could say so (a backend that failed to load).
            assert self.state is not None
            self.state.status = RunStatus.FAILED if state is WorkerState.ERROR else RunStatus.CANCELLED
            self._changed()
