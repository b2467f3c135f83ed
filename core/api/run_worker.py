"""A judge run in a worker process: the same run as :func:`~.judging.start_run`, in a child of its own.

The app runs its judges here, so that a judge that crashes (native code in llama.cpp), or is killed (out of
memory, ``kill -9``), ends its process and never the app's. What crosses between the two processes:

* the child's arguments, once (pickled by ``spawn``): the session's configuration and store path, the run's
  configuration, the dataset and the engine options;
* the child writes every judgment to the run store itself; the parent follows the store (the judgments
  written after the last it read, :meth:`Judgments.judgments_after`) and hands each to the display as
  the :class:`JudgmentScored` the engine would have, so that a judgment is never pickled across;
* every other event of the engine (phases, progress, the stop rule's looks, a failure, the end) comes over
  the one pipe between them, in order; an error that ends the run comes as :class:`_ChildError`;
* cancelling is SIGTERM, which the child handles as Esc does an in-process run: it stops after what is in
  flight, and what is stored stays.

A child that ends without saying the run finished (a signal, a crash) leaves the run ``interrupted`` in the
store, and the display receives a :class:`RunFailed` saying how the process ended and after how many
judgments, then the :class:`RunFinished` of an interrupted run; the run resumes like a cancelled one.
"""

from __future__ import annotations

import asyncio
import pickle
import signal
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from ..config import Config
from ..errors import DialjudgeError
from ..judges.backends import make_backend
from ..judges.run.config import RunConfig
from ..judges.run.events import (
    JudgmentScored,
    RunEvent,
    RunFailed,
    RunFinished,
    RunStarted,
    RunStatus,
    RunSummary,
)
from ..judges.run.options import EngineOptions
from ..judges.store.run_store import RunStore, default_store_path
from ..model import Dataset
from ..worker_process import ChildProcess, exit_text, start_child
from .display import RunDisplay
from .judging import RunHandle, start_run
from .session import Session

#: Seconds between two looks at the store for new judgments while no event arrives.
POLL_S = 0.1
#: Seconds a child that said its run finished may take to exit before it is killed.
EXIT_S = 10.0


class JudgeProcessError(DialjudgeError):
    """The run could not go on in its process (the error the child raised, as text where it does not pickle)."""


def runs_in_worker(session: Session, options: EngineOptions | None = None) -> bool:
    """Whether a run with ``options`` can go to a worker process: the session makes its judges'
    backends from their configuration (the backend registry, which the child has too), and the options
    pickle (no renderer, scorer or clock that lives only in this process: a test's)."""
    if not session.backends_from_registry:
        return False
    try:
        pickle.dumps(options)
    except Exception:  # any object may refuse to pickle, with any error
        return False
    return True


def judge_log_dir(session: Session) -> Path:
    """Where the worker processes' logs go: ``logs/`` beside the session's run store (the user's data dir)."""
    return (session.store_path or default_store_path()).parent / "logs"


@dataclass(frozen=True)
class _RunJob:
    """What the child is given (pickled once, by spawn)."""

    app_config: Config
    store_path: Path | None
    run_config: RunConfig
    dataset: Dataset
    options: EngineOptions
    retry: bool


@dataclass(frozen=True)
class _ChildError:
    """The child's run raised: the error itself when it pickles, else its text."""

    error: BaseException


class WorkerRunHandle:
    """One judge run in a worker process (:func:`start_run_in_worker`): :meth:`run_to_end` on a thread of
    the parent that outlives the run (the child dies with it), :meth:`cancel` from any thread."""

    def __init__(self, session: Session, job: _RunJob, display: RunDisplay | None) -> None:
        self._session = session
        self._job = job
        self._display = display
        self._lock = threading.Lock()
        self._child: ChildProcess | None = None
        self._cancel_requested = False
        stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S-%f")
        #: The child's stdout and stderr (a traceback, a crash's stack, the model library's messages).
        self.log_path = judge_log_dir(session) / f"judge-{stamp}.log"

    @property
    def pid(self) -> int | None:
        """The child's process id (None until it started)."""
        child = self._child
        return child.pid if child is not None else None

    def cancel(self) -> None:
        """Stop after what is in flight: what is stored stays, and the run resumes."""
        with self._lock:
            self._cancel_requested = True
            child = self._child
        if child is not None:
            child.signal(signal.SIGTERM)

    def run_to_end(self) -> RunSummary:
        """Start the child and follow it until the run ends; returns the run's summary (an interrupted
        run's when the child ended without finishing). Raises what the run raised in the child."""
        with self._session.store() as store:
            follower = _StoreFollower(store, store.judgments.last_judgment_id(), self._emit)
            child = start_child(_run_in_child, (self._job,), log_path=self.log_path, name="dialjudge judge")
            with self._lock:
                self._child = child
                cancel = self._cancel_requested
            if cancel:
                child.signal(signal.SIGTERM)
            finished, error = self._follow(child.connection, follower)
            exitcode = child.reap(EXIT_S)
            follower.read_new()
            if finished is not None:
                return finished.summary
            if error is not None:
                raise error
            return self._ended_early(store, follower, exitcode)

    def _follow(self, connection: Connection, follower: _StoreFollower) -> tuple[RunFinished | None,
                                                                                   BaseException | None]:
        """Pass the child's events on, with the judgments it stored before each, until it ends."""
        while True:
            if not connection.poll(POLL_S):
                follower.read_new()
                continue
            try:
                message = connection.recv()
            except (EOFError, OSError):  # the child ended without a word
                return None, None
            follower.read_new()  # the judgments the engine reported before this event
            if isinstance(message, _ChildError):
                return None, message.error
            if isinstance(message, RunStarted):
                follower.started(message)
            self._emit(message)
            if isinstance(message, RunFinished):
                return message, None

    def _ended_early(self, store: RunStore, follower: _StoreFollower, exitcode: int) -> RunSummary:
        """The child ended without finishing the run: the store marks the run interrupted (or cancelled,
        when a cancel's SIGTERM ended it before its handler was in place) and the display is told how."""
        run_id = follower.run_id
        cancelled = self._cancel_requested and exitcode == -signal.SIGTERM
        status = RunStatus.CANCELLED if cancelled else RunStatus.INTERRUPTED
        if run_id is not None:
            store.runs.set_status(run_id, status)
        store.locks.mark_dead_runs_interrupted()  # a run the child made before it said so
        if not cancelled:
            what = f"run {run_id}" if run_id is not None else "the run"
            self._emit(RunFailed(
                f"the judge process ended with {exit_text(exitcode)} after {follower.count} judgments; "
                f"{what} is interrupted: what it stored is kept, and it resumes (the process's log: "
                f"{self.log_path})", run_id))
        summary = follower.summary(status)
        self._emit(RunFinished(summary.run_id, status, summary))
        return summary

    def _emit(self, event: RunEvent) -> None:
        if self._display is not None:
            self._display.on_event(event)


class _StoreFollower:
    """The judgments a child stores, read as they come and reported as the engine's JudgmentScored."""

    def __init__(self, store: RunStore, after_id: int, emit: Any) -> None:
        self._store = store
        self._after_id = after_id
        self._emit = emit
        self._started: RunStarted | None = None
        self._started_at = time.monotonic()
        self._done = 0
        #: Judgments read in this session of the run.
        self.count = 0

    @property
    def run_id(self) -> int | None:
        return self._started.run_id if self._started is not None else None

    def started(self, event: RunStarted) -> None:
        self._started = event
        self._done = event.done

    def read_new(self) -> None:
        started = self._started
        if started is None:
            return
        while True:
            judgments, self._after_id = self._store.judgments.judgments_after(started.run_id, self._after_id)
            if not judgments:
                return
            for judgment in judgments:
                self._done += 1
                self.count += 1
                self._emit(JudgmentScored(judgment, self._done, started.total))

    def summary(self, status: RunStatus) -> RunSummary:
        """Where the run stands by the store, for a child that could not say so itself."""
        started = self._started
        if started is None:
            return RunSummary(run_id=0, status=status, total=0, done=0, failures=0, cached=0, backend_calls=0,
                              resumed=False, elapsed_s=time.monotonic() - self._started_at)
        judgments = self._store.judgments
        run_id = started.run_id
        return RunSummary(
            run_id=run_id, status=status, total=started.total,
            done=judgments.count_judgments(run_id, include_request_failures=False),
            failures=judgments.count_judgments(run_id, failed_only=True), cached=0, backend_calls=0,
            resumed=started.resumed, elapsed_s=time.monotonic() - self._started_at,
            per_judge=judgments.judge_counts(run_id), failure_reasons=judgments.failure_reasons(run_id))


def start_run_in_worker(session: Session, config: RunConfig, dataset: Dataset, *,
                        display: RunDisplay | None = None, options: EngineOptions | None = None,
                        retry: bool = False) -> WorkerRunHandle:
    """:func:`~.judging.start_run` in a worker process (not started yet: :meth:`WorkerRunHandle.run_to_end`
    starts it). Only for a run :func:`runs_in_worker` accepts."""
    options = options or EngineOptions()
    if not runs_in_worker(session, options):
        raise JudgeProcessError("this run's judges or options exist only in this process; run it with start_run")
    job = _RunJob(session.config, session.store_path, config, dataset, options, retry)
    return WorkerRunHandle(session, job, display)


# -- the child's side -------------------------------------------------------------------------------------


class _PipeDisplay:
    """The child's display: every event but the judgments (which the parent reads from the store) to the pipe."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    def on_event(self, event: RunEvent) -> None:
        if not isinstance(event, JudgmentScored):
            self._connection.send(event)


def _run_in_child(connection: Connection, job: _RunJob) -> None:
    """The child's work: the run, with SIGTERM and SIGINT cancelling it as Esc does in the app."""
    handle: RunHandle | None = None
    cancelled = False

    def cancel(_signum: int, _frame: Any) -> None:
        nonlocal cancelled
        cancelled = True
        if handle is not None:
            handle.cancel()

    signal.signal(signal.SIGTERM, cancel)
    signal.signal(signal.SIGINT, cancel)
    session = Session(job.app_config, store_path=job.store_path, backend_factory=make_backend)
    try:
        handle = start_run(session, job.run_config, job.dataset, display=_PipeDisplay(connection),
                           options=job.options, retry=job.retry)
        if cancelled:
            handle.cancel()
        asyncio.run(handle.run())
    except BaseException as exc:  # every error reaches the parent, which raises it as the run's
        connection.send(_ChildError(_picklable(exc)))
        if not isinstance(exc, Exception):
            raise


def _picklable(exc: BaseException) -> BaseException:
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:  # an error whose constructor takes other arguments than its text, say
        return JudgeProcessError(f"{type(exc).__name__}: {exc}")
    return exc


__all__ = ["JudgeProcessError", "WorkerRunHandle", "judge_log_dir", "runs_in_worker", "start_run_in_worker"]
