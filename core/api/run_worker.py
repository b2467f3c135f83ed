"""Judging in a worker process: the app's runs, tuning searches, alignments and Prompt lab trials, in one
child that holds the judges.

The app runs its judges here, so that a judge that crashes (native code in llama.cpp), or is killed (out of
memory, ``kill -9``), ends that process and never the app's. One :class:`JudgeWorker` per session, started
when first needed and kept until the session closes it: runs, searches, alignments and trials go to the same
process and use the same open backends, so a local model loads once for all of them, and since a local model
computes on one thread of its own (``LlamaBackend``'s executor), a trial asked during a run waits between two
of the run's requests: two computations of one model never overlap. What crosses between the two processes:

* once, when the worker starts (its arguments): the session's configuration and store path;
* per run: the run's configuration, the dataset and the engine options (pickled; the dataset's examples in
  pieces of a few hundred, each its own message ahead of the job, pickled once per dataset:
  :mod:`.pickled_examples`); the child writes every judgment to the run store itself; the parent follows the
  store (the judgments written after the last it read, :meth:`Judgments.judgments_after`) and hands each to
  the display as the :class:`JudgmentScored` the engine would have, so that a judgment is never pickled
  across; every other event of the engine (phases, progress, the stop rule's looks, a failure, the end)
  comes over the one pipe, in order;
* per tuning search: the search space and the dataset; the child runs the same search (:func:`.judging.open_search`)
  with its open judges, writes every run of it to the store, and sends each :data:`SearchEvent` back in
  order, then the report;
* per alignment (Review's align key): the :class:`~.align.AlignRequest` and the open dataset; the child makes the
  same alignment (:func:`.align.open_align`: it reads the run and the corrections from the store itself),
  runs its search with its open judges as above, and sends the events, then the :class:`AlignReport`;
* per trial: the judge's configuration and the request; back, the backend's answer;
* while the session's compute process computes, the cores it takes (:class:`_CoresTaken`): the child's local
  judges compute with the rest from their next evaluation (:meth:`JudgeWorker.share_cores`);
* cancelling a run, a search or an alignment is a message naming its job (:class:`_Cancel`), which the child
  handles as Esc does in-process work: it stops after what is in flight, and what is stored stays. Another
  job in the process goes on. SIGTERM (the parent ended, the app quit) cancels every job.

A worker that ends while a run is in progress (a signal, a crash) leaves the run ``interrupted`` in the
store, and the display receives a :class:`RunFailed` saying how the process ended and after how many
judgments, then the :class:`RunFinished` of an interrupted run; the run resumes like a cancelled one, and
the next run or trial starts a new worker. A search (or an alignment) in a worker that ends raises
:class:`JudgeProcessDied`; its runs are marked interrupted, and the search run again resumes them (its stored
judgments are reused).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import pickle
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Generic, TypeVar, cast

from ..config import Config, JudgeConfig
from ..errors import DialjudgeError
from ..judges.backends import make_backend
from ..judges.run.config import RunConfig
from ..judges.run.engine import RunEngine
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
from ..judges.types import BackendResult, CoreSharingBackend, JudgeBackend, JudgeRequest
from ..model import Dataset
from ..tuning.search import SearchEvent, TuningReport
from ..tuning.space import SearchSpace
from ..worker_process import ChildProcess, WorkersByOwner, end_soon, exit_text, start_child
from .align import AlignHandle, AlignReport, AlignRequest, open_align
from .display import RunDisplay
from .judging import SearchHandle, open_search
from .pickled_examples import pickled_examples, unpickled_examples
from .prompt_lab import ask_judge, judge_key
from .runs import open_run
from .session import Session

#: Seconds between two looks at the store for new judgments while no event arrives.
POLL_S = 0.1
#: Seconds a worker told to close may take to end (its runs cancelled, its judges closed) before it is killed.
EXIT_S = 10.0


class JudgeProcessError(DialjudgeError):
    """The work could not go on in the judge process (the error the child raised, as text where it does not
    pickle, or the process's end)."""


class JudgeProcessDied(JudgeProcessError):
    """The judge process ended (a signal, a crash) while it held the work: what it stored is kept."""


def runs_in_worker(session: Session, options: EngineOptions | None = None) -> bool:
    """Whether a run with ``options`` (or a trial) can go to the worker process: the session makes its judges'
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


#: Bytes read from a log's end for :func:`judge_log` (a few hundred lines; a model's load alone writes ~100).
LOG_TAIL_BYTES = 64 * 1024


@dataclass(frozen=True)
class JudgeLog:
    """The end of a judge process's log: what a front end shows (its stdout and stderr: a model library's
    messages, a traceback, a crash's stack)."""

    #: The log file (None: no judge process has written one beside this session's store).
    path: Path | None
    lines: tuple[str, ...]
    #: Earlier lines were left out (only the log's last :data:`LOG_TAIL_BYTES` are read).
    cut: bool = False


def judge_log(session: Session, *, tail_bytes: int = LOG_TAIL_BYTES) -> JudgeLog:
    """The last lines of the log of the session's judge process: the one running, or the last one it ran;
    else the newest log in :func:`judge_log_dir` (a process of an earlier session)."""
    path = judge_worker(session).log_path
    if path is None or not path.exists():
        logs = sorted(judge_log_dir(session).glob("judge-*.log"), key=lambda p: p.stat().st_mtime)
        path = logs[-1] if logs else None
    if path is None:
        return JudgeLog(None, ())
    with open(path, "rb") as log:
        size = log.seek(0, 2)
        start = max(0, size - tail_bytes)
        log.seek(start)
        data = log.read()
    lines = data.decode("utf-8", errors="replace").splitlines()
    if start > 0 and lines:
        lines = lines[1:]  # the first was cut mid-line
    return JudgeLog(path, tuple(lines), cut=start > 0)


# -- what crosses the pipe ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _PickledDataset:
    """A dataset as it crosses to the worker: its examples pickled a few hundred at a time on the caller's
    thread, and only once per dataset (:mod:`.pickled_examples`: the compute process was sent the same bytes)."""

    shell: Dataset  # the dataset without its examples
    pieces: tuple[bytes, ...]

    @classmethod
    def of(cls, dataset: Dataset) -> _PickledDataset:
        return cls(dataclasses.replace(dataset, examples=[]), pickled_examples(dataset))

    def dataset(self) -> Dataset:
        return dataclasses.replace(self.shell, examples=unpickled_examples(self.pieces))


@dataclass(frozen=True)
class _RunJob:
    run_config: RunConfig
    dataset: _PickledDataset
    options: EngineOptions
    retry: bool


@dataclass(frozen=True)
class _TrialJob:
    judge: JudgeConfig
    request: JudgeRequest


@dataclass(frozen=True)
class _SearchJob:
    space: SearchSpace
    dataset: _PickledDataset

    def open(self, session: Session, on_event: Callable[[SearchEvent], None]) -> SearchHandle:
        """The search in the child (``session`` makes the child's open judges; they stay open)."""
        return open_search(session, self.space, self.dataset.dataset(), on_event=on_event, close_backends=False)


@dataclass(frozen=True)
class _AlignJob:
    request: AlignRequest
    #: The app's open dataset (None: the child opens the run's from its file).
    dataset: _PickledDataset | None

    def open(self, session: Session, on_event: Callable[[SearchEvent], None]) -> AlignHandle:
        """The alignment in the child, checked there (a refusal is :func:`~.align.open_align`'s ConfigError)."""
        dataset = self.dataset.dataset() if self.dataset is not None else None
        return open_align(session, self.request, dataset=dataset, on_event=on_event, close_backends=False)


#: A job that runs a search in the child, sends its events and ends with a report.
_ReportJob = _SearchJob | _AlignJob


@dataclass(frozen=True)
class _ExamplesPiece:
    """A piece of the dataset of the job that follows with the same id (:func:`_pieces_ahead`)."""

    piece: bytes


#: A job's work, as the parent sends it.
_Work = _RunJob | _ReportJob | _TrialJob


def _pieces_ahead(work: _Work) -> tuple[_Work, tuple[bytes, ...]]:
    """``work`` without its dataset's pieces, and the pieces, which cross ahead of it one message each: the job
    pickled whole copied 19 MB (100,000 items) in one call holding the interpreter, and the app's UI thread
    waited 30-47 ms for it as a run began."""
    if isinstance(work, _TrialJob) or work.dataset is None or not work.dataset.pieces:
        return work, ()
    return dataclasses.replace(work, dataset=dataclasses.replace(work.dataset, pieces=())), work.dataset.pieces


def _with_pieces(work: object, pieces: list[bytes]) -> object:
    """What the parent sent (a job, or another message), a job's pieces put back as :func:`_pieces_ahead` took
    them out."""
    if not pieces or not isinstance(work, (_RunJob, _SearchJob, _AlignJob)) or work.dataset is None:
        return work
    return dataclasses.replace(work, dataset=dataclasses.replace(work.dataset, pieces=tuple(pieces)))


@dataclass(frozen=True)
class _Cancel:
    """Stop job ``job_id`` (a run or a search) after what is in flight; other jobs go on."""

    job_id: int


@dataclass(frozen=True)
class _Close:
    """The parent is done with the worker: cancel what runs, close the judges, exit."""


@dataclass(frozen=True)
class _CoresTaken:
    """Other work of the session takes ``cores`` cores from now on (0: none): local judges use the rest."""

    cores: int


@dataclass(frozen=True)
class _Done:
    """A job ended; a trial's answer or a search's (an alignment's) report, and whether a judge had to be
    opened (a model loaded) for it."""

    result: BackendResult | None = None
    opened: bool = False
    report: TuningReport | AlignReport | None = None


@dataclass(frozen=True)
class _ChildError:
    """A job raised: the error itself when it pickles, else its text."""

    error: BaseException


@dataclass(frozen=True)
class _Died:
    """The worker ended (the parent's own note to the jobs it had): its exit code."""

    exitcode: int


# -- the parent's side ----------------------------------------------------------------------------------------


class _Job:
    """One job sent to the worker: the replies to it, in order, until its last."""

    def __init__(self, worker: JudgeWorker, job_id: int, child: ChildProcess) -> None:
        self.worker = worker
        self.job_id = job_id
        self.child = child
        self.replies: queue.SimpleQueue[Any] = queue.SimpleQueue()

    def next(self, timeout_s: float | None) -> Any:
        """The next reply (None: none within ``timeout_s``)."""
        try:
            return self.replies.get(timeout=timeout_s)
        except queue.Empty:
            return None

    def close(self) -> None:
        self.worker._forget(self.job_id)


class JudgeWorker:
    """The session's judge process (:func:`judge_worker`): started by the first job, again after it died.

    A thread of the parent starts it and lives as long as it (the kernel's parent-death signal is tied to
    that thread), reading its replies and handing each to its job, and reaping it when it ends.
    """

    def __init__(self, session: Session) -> None:
        self._config = session.config
        self._store_path = session.store_path
        self._log_dir = judge_log_dir(session)
        self._lock = threading.Lock()
        #: One writer on the pipe at a time (a run's job, a trial's, the close).
        self._send_lock = threading.Lock()
        self._child: ChildProcess | None = None
        self._jobs: dict[int, _Job] = {}
        self._next_id = 0
        #: Cores the session's other work takes now (:meth:`share_cores`); a process started later is told.
        self._cores_taken = 0
        #: The current process's log (None until one was started).
        self.log_path: Path | None = None

    @property
    def pid(self) -> int | None:
        child = self._child
        return child.pid if child is not None else None

    def submit(self, work: _Work) -> _Job:
        """Send ``work`` to the worker (starting it first when none runs); its replies come to the job."""
        with self._lock:
            child = self._child if self._child is not None else self._start()
            self._next_id += 1
            job = self._jobs[self._next_id] = _Job(self, self._next_id, child)
        # Not under _lock: a large job waits here until the worker has read it (a worker that has just
        # started reads once its imports are done), and the replies to other jobs must not wait for it.
        work, pieces = _pieces_ahead(work)
        with self._send_lock, contextlib.suppress(OSError):  # it ended meanwhile: its thread tells the job
            for piece in pieces:
                child.connection.send((job.job_id, _ExamplesPiece(piece)))
            child.connection.send((job.job_id, work))
        return job

    def cancel(self, job: _Job) -> None:
        """Ask the worker to stop ``job`` (a run, a search, an alignment) after what is in flight; on a thread of
        its own, so that the caller (the app's UI thread) never waits behind a large job being sent."""

        def send() -> None:
            with self._send_lock, contextlib.suppress(OSError):  # it has ended: its thread tells the job
                job.child.connection.send((0, _Cancel(job.job_id)))

        threading.Thread(target=send, name="cancel a judge job", daemon=True).start()

    def share_cores(self, taken: int) -> None:
        """Other work of the session takes ``taken`` cores from now on (0: none): the worker's local judges
        compute with the rest from their next evaluation (two computations spinning on the same cores slow each
        other many times over). Starts no process; one started later is told first."""
        with self._lock:
            self._cores_taken = taken
            child = self._child
        if child is not None:
            with self._send_lock, contextlib.suppress(OSError):  # it has ended: the next one is told on start
                child.connection.send((0, _CoresTaken(taken)))

    def close(self) -> None:
        """Let the worker end: its runs are cancelled (what is stored stays), its judges closed."""
        with self._lock:
            child, self._child = self._child, None
        if child is not None:
            with self._send_lock, contextlib.suppress(OSError):  # it has ended already
                child.connection.send((0, _Close()))

    def _forget(self, job_id: int) -> None:
        with self._lock:
            self._jobs.pop(job_id, None)

    def _start(self) -> ChildProcess:
        """Start the process from a thread of its own that outlives it (under ``_lock``)."""
        stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S-%f")
        self.log_path = self._log_dir / f"judge-{stamp}.log"
        started: queue.SimpleQueue[ChildProcess | BaseException] = queue.SimpleQueue()
        threading.Thread(target=self._keep, args=(self.log_path, started), name="judge worker", daemon=True).start()
        outcome = started.get()
        if isinstance(outcome, BaseException):
            raise outcome
        self._child = outcome
        return outcome

    def _keep(self, log_path: Path, started: queue.SimpleQueue[ChildProcess | BaseException]) -> None:
        try:
            child = start_child(_serve, (self._config, self._store_path, self._cores_taken), log_path=log_path,
                                name="dialjudge judge worker", watch_pipe=False)
        except BaseException as exc:  # the caller raises it
            started.put(exc)
            return
        started.put(child)
        while True:
            try:
                job_id, reply = child.connection.recv()
            except (EOFError, OSError):  # the worker ended
                break
            with self._lock:
                job = self._jobs.get(job_id)
            if job is not None:
                job.replies.put(reply)
        exitcode = child.reap(EXIT_S)
        with self._lock:
            if self._child is child:
                self._child = None
            orphans = [job for job in self._jobs.values() if job.child is child]
        for job in orphans:
            job.replies.put(_Died(exitcode))


_WORKERS: WorkersByOwner[Session, JudgeWorker] = WorkersByOwner(JudgeWorker)


def judge_worker(session: Session) -> JudgeWorker:
    """The session's judge worker (one per session; its process starts with the first job)."""
    return _WORKERS.of(session)


def share_cores_with_judges(session: Session, taken: int) -> None:
    """Tell the session's judge process (if it has one) that other work takes ``taken`` cores from now on."""
    worker = _WORKERS.get(session)
    if worker is not None:
        worker.share_cores(taken)


def close_judge_worker(session: Session) -> None:
    """End the session's judge worker, if it has one (the app, when it closes)."""
    worker = _WORKERS.pop(session)
    if worker is not None:
        worker.close()


class _WorkerJobHandle:
    """What the handles of a run, a search and an alignment share: the job in the session's judge process, its
    pid and log, a cancel that may come before the job is sent (it is passed on when the job is)."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self._lock = threading.Lock()
        self._job: _Job | None = None
        self._cancel_requested = False
        self._worker = judge_worker(session)
        self._log_path: Path | None = None
        #: Whether the worker had to open a judge for this job (a model loaded), once it ended (None before).
        self.opened_judge: bool | None = None

    @property
    def pid(self) -> int | None:
        """The worker process's id while the job is in it (None before it was sent, and after)."""
        job = self._job
        return job.child.pid if job is not None else None

    @property
    def log_path(self) -> Path | None:
        """The log of the worker the job went to (its stdout and stderr: a traceback, a crash's stack, the
        model library's messages); None before it was sent."""
        return self._log_path

    def cancel(self) -> None:
        """Stop after what is in flight: what is stored stays, and a rerun picks it up."""
        with self._lock:
            self._cancel_requested = True
            job = self._job
        if job is not None:
            self._worker.cancel(job)

    def _send(self, work: _RunJob | _ReportJob) -> _Job:
        """Send ``work`` to the worker; a cancel asked for before is passed on at once."""
        job = self._worker.submit(work)
        with self._lock:
            self._job = job
            self._log_path = job.child.log_path
            cancel = self._cancel_requested
        if cancel:
            self._worker.cancel(job)
        return job


class WorkerRunHandle(_WorkerJobHandle):
    """One judge run in the session's worker process (:func:`start_run_in_worker`): :meth:`run_to_end` on a
    thread of the caller, :meth:`cancel` from any thread."""

    def __init__(self, session: Session, job: _RunJob, display: RunDisplay | None) -> None:
        super().__init__(session)
        self._work = job
        self._display = display

    def run_to_end(self) -> RunSummary:
        """Send the run to the worker and follow it until it ends; returns the run's summary (an interrupted
        run's when the worker ended without finishing it). Raises what the run raised in the worker."""
        with self._session.store() as store:
            follower = _StoreFollower(store, store.judgments.last_judgment_id(), self._emit)
            job = self._send(self._work)
            try:
                finished, ending = self._follow(job, follower)
            finally:
                job.close()
                with self._lock:
                    self._job = None
            follower.read_new()
            if isinstance(ending, _ChildError):
                raise ending.error
            if isinstance(ending, _Died):
                return self._ended_early(store, follower, ending.exitcode)
            if finished is None:
                raise JudgeProcessError("the judge process ended the run without saying how it ended")
            self.opened_judge = ending.opened
            return finished.summary

    def _follow(self, job: _Job, follower: _StoreFollower) -> tuple[RunFinished | None, Any]:
        """Pass the worker's events on, with the judgments it stored before each, until the run ends."""
        finished: RunFinished | None = None
        while True:
            reply = job.next(POLL_S)
            follower.read_new()  # the judgments the engine reported before this event
            if reply is None:
                continue
            if isinstance(reply, (_Done, _ChildError, _Died)):
                return finished, reply
            if isinstance(reply, RunStarted):
                follower.started(reply)
            if isinstance(reply, RunFinished):
                finished = reply
            self._emit(reply)

    def _ended_early(self, store: RunStore, follower: _StoreFollower, exitcode: int) -> RunSummary:
        """The worker ended without finishing the run: the store marks the run interrupted (or cancelled,
        when a cancel's SIGTERM ended it before its handler was in place) and the display is told how."""
        run_id = follower.run_id
        cancelled = self._cancel_requested and exitcode == -signal.SIGTERM
        status = RunStatus.CANCELLED if cancelled else RunStatus.INTERRUPTED
        if run_id is not None:
            store.runs.set_status(run_id, status)
            store.runs.add_wall_time(run_id, follower.elapsed_s())  # the engine could not add this session's
        store.locks.mark_dead_runs_interrupted()  # a run the worker made before it said so
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
        self._started_at = time.monotonic()
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

    def elapsed_s(self) -> float:
        """Seconds since the run started (or since following began, before it said so)."""
        return time.monotonic() - self._started_at

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
    """:func:`~.judging.start_run` in the session's worker process (not sent yet:
    :meth:`WorkerRunHandle.run_to_end` sends it). Only for a run :func:`runs_in_worker` accepts."""
    options = options or EngineOptions()
    if not runs_in_worker(session, options):
        raise JudgeProcessError("this run's judges or options exist only in this process; run it with start_run")
    return WorkerRunHandle(session, _RunJob(config, _PickledDataset.of(dataset), options, retry), display)


#: What a handle's job reports at its end: a search's TuningReport, an alignment's AlignReport.
_Report = TypeVar("_Report", TuningReport, AlignReport)


class _WorkerReportHandle(_WorkerJobHandle, Generic[_Report]):
    """A search in the session's worker process that sends its events and ends with a report (a tuning search,
    an alignment): :meth:`run_to_end` on a thread of the caller, :meth:`cancel` from any thread (what the
    in-process handle offers)."""

    #: The job, as the message of a process that died names it, and what reuses what it stored.
    what: str = "the tuning search"
    again: str = "running the search again"

    def __init__(self, session: Session, job: _ReportJob, on_event: Callable[[SearchEvent], None] | None) -> None:
        super().__init__(session)
        self._work = job
        self._on_event = on_event

    def run_to_end(self) -> _Report:
        """Send the job to the worker and pass its events on, in order, until it ends; its report.
        Raises what it raised there (``SearchCancelled`` when cancelled, an alignment's refusal), or
        :class:`JudgeProcessDied`."""
        job = self._send(self._work)
        try:
            while True:
                reply = job.next(None)
                if isinstance(reply, (_Done, _ChildError, _Died)):
                    break
                if self._on_event is not None:
                    self._on_event(reply)
        finally:
            job.close()
            with self._lock:
                self._job = None
        if isinstance(reply, _ChildError):
            raise reply.error
        if isinstance(reply, _Died):
            with self._session.store() as store:
                store.locks.mark_dead_runs_interrupted()  # the run the search was judging: a rerun resumes it
            raise JudgeProcessDied(
                f"the judge process ended with {exit_text(reply.exitcode)} during {self.what}; what it "
                f"stored is kept, and {self.again} reuses it (the process's log: {self._log_path})")
        if reply.report is None:
            raise JudgeProcessError(f"the judge process ended {self.what} without its report")
        self.opened_judge = reply.opened
        return cast(_Report, reply.report)


class WorkerSearchHandle(_WorkerReportHandle[TuningReport]):
    """A tuning search in the session's worker process (:func:`start_search_in_worker`)."""


class WorkerAlignHandle(_WorkerReportHandle[AlignReport]):
    """An alignment in the session's worker process (:func:`start_align_in_worker`)."""

    what = "the alignment"
    again = "aligning again"


def start_search_in_worker(session: Session, space: SearchSpace, dataset: Dataset, *,
                           on_event: Callable[[SearchEvent], None] | None = None) -> WorkerSearchHandle:
    """:func:`~.judging.open_search` in the session's worker process, with the judges it has open (not sent
    yet: :meth:`WorkerSearchHandle.run_to_end` sends it). Only where :func:`runs_in_worker` accepts the
    session; ``on_event`` is called on the thread that runs it, in the order the search reported."""
    if not runs_in_worker(session):
        raise JudgeProcessError("this session's judges exist only in this process; run the search with open_search")
    return WorkerSearchHandle(session, _SearchJob(space, _PickledDataset.of(dataset)), on_event)


def start_align_in_worker(session: Session, request: AlignRequest, *, dataset: Dataset | None = None,
                          on_event: Callable[[SearchEvent], None] | None = None) -> WorkerAlignHandle:
    """:func:`~.align.open_align` in the session's worker process, with the judges it has open, kept open
    after it (not sent yet: :meth:`WorkerAlignHandle.run_to_end` sends it, and raises the alignment's
    refusals, checked there). Only where :func:`runs_in_worker` accepts the session; ``on_event`` is called
    on the thread that runs it, in the order the search reported."""
    if not runs_in_worker(session):
        raise JudgeProcessError("this session's judges exist only in this process; align with open_align")
    shipped = _PickledDataset.of(dataset) if dataset is not None else None
    return WorkerAlignHandle(session, _AlignJob(request, shipped), on_event)


@dataclass(frozen=True)
class TrialAnswer:
    """A trial's answer from the worker, and whether its judge was opened for it (a model loaded)."""

    result: BackendResult
    opened: bool


def ask_in_worker(session: Session, judge: JudgeConfig, request: JudgeRequest) -> TrialAnswer:
    """Ask ``judge`` one request in the session's worker, with the judge a run there has open (or opens it,
    kept open for what follows). Raises what the judge raised; :class:`JudgeProcessError` when the worker
    ended."""
    job = judge_worker(session).submit(_TrialJob(judge, request))
    try:
        reply = job.next(None)
    finally:
        job.close()
    if isinstance(reply, _ChildError):
        raise reply.error
    if isinstance(reply, _Died):
        raise JudgeProcessError(f"the judge process ended with {exit_text(reply.exitcode)} before it answered")
    assert isinstance(reply, _Done) and reply.result is not None
    return TrialAnswer(reply.result, reply.opened)


# -- the child's side -------------------------------------------------------------------------------------


def _serve(connection: Connection, app_config: Config, store_path: Path | None, cores_taken: int = 0) -> None:
    """The worker: jobs from the pipe, each a task on one event loop, until the parent closes it or ends."""
    asyncio.run(_Server(connection, app_config, store_path, cores_taken).serve())


class _Server:
    def __init__(self, connection: Connection, app_config: Config, store_path: Path | None,
                 cores_taken: int = 0) -> None:
        self._connection = connection
        #: Cores the parent's other work takes now (:class:`_CoresTaken`); every local judge is told.
        self._cores_taken = cores_taken
        self._session = Session(app_config, store_path=store_path, backend_factory=make_backend)
        #: Open judges by their configuration: a run's stay open for the next run, search or trial.
        self._backends: dict[str, JudgeBackend] = {}
        #: The runs, searches and alignments in progress by job id (None until the engine or search is made),
        #: and those a cancel (a message, or a signal for all) reached.
        self._work: dict[int, RunEngine | SearchHandle | AlignHandle | None] = {}
        self._cancelled: set[int] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed: asyncio.Event | None = None

    async def serve(self) -> None:
        loop = self._loop = asyncio.get_running_loop()
        self._closed = asyncio.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):  # cancel everything, as quitting the app does
            loop.add_signal_handler(signum, self._cancel_all)
        threading.Thread(target=self._receive, name="jobs", daemon=True).start()
        await self._closed.wait()
        self._cancel_all()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        for backend in self._backends.values():
            await backend.close()

    def _receive(self) -> None:
        """On a thread: every job the parent sends, to the loop; the parent's end closing ends the worker."""
        assert self._loop is not None
        pieces: dict[int, list[bytes]] = {}  # of the jobs whose pieces came ahead of them
        try:
            while True:
                job_id, work = self._connection.recv()
                if isinstance(work, _ExamplesPiece):
                    pieces.setdefault(job_id, []).append(work.piece)
                    continue
                work = _with_pieces(work, pieces.pop(job_id, []))
                self._loop.call_soon_threadsafe(self._start, job_id, work)
        except (EOFError, OSError):  # the parent ended: cancel, store, and go, within worker_process.GRACE_S
            end_soon()
        self._loop.call_soon_threadsafe(self._close)

    def _close(self) -> None:
        assert self._closed is not None
        self._closed.set()

    def _start(self, job_id: int, work: Any) -> None:
        if isinstance(work, _Close):
            self._close()
            return
        if isinstance(work, _Cancel):
            self._cancel(work.job_id)
            return
        if isinstance(work, _CoresTaken):
            self._share_cores(work.cores)
            return
        if isinstance(work, _RunJob):
            self._work[job_id] = None
            task = asyncio.ensure_future(self._run(job_id, work))
        elif isinstance(work, (_SearchJob, _AlignJob)):
            self._work[job_id] = None
            task = asyncio.ensure_future(self._report_job(job_id, work))
        else:
            task = asyncio.ensure_future(self._trial(job_id, work))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _share_cores(self, taken: int) -> None:
        self._cores_taken = taken
        sharing = [backend for backend in self._backends.values() if isinstance(backend, CoreSharingBackend)]
        for backend in sharing:
            backend.share_cores(taken)
        if sharing:  # in the log the app shows (ctrl+l), beside the judges' own messages
            print(f"other work takes {taken} core{'s' if taken != 1 else ''}: "
                  f"{', '.join(backend.name for backend in sharing)} compute{'s' if len(sharing) == 1 else ''} "
                  "with the rest from the next evaluation", file=sys.stderr, flush=True)

    def _cancel(self, job_id: int) -> None:
        """Stop one run, search or alignment after what is in flight (one that ended already: nothing to do)."""
        if job_id in self._work:
            self._cancelled.add(job_id)
            work = self._work[job_id]
            if work is not None:
                work.cancel()

    def _cancel_all(self) -> None:
        for job_id in list(self._work):
            self._cancel(job_id)

    def _backend(self, judge: JudgeConfig) -> tuple[JudgeBackend, bool]:
        """The open judge of this configuration, or a new one (opened by whoever asks first)."""
        key = judge_key(judge)
        backend = self._backends.get(key)
        if backend is not None:
            return backend, False
        backend = self._backends[key] = self._session.make_backend(judge)
        if isinstance(backend, CoreSharingBackend):
            backend.share_cores(self._cores_taken)
        return backend, True

    def _send(self, job_id: int, reply: Any) -> None:
        # From the loop's thread only: one writer. A parent that has ended hears nothing more, and the run
        # it started goes on to store its end (cancelled) rather than failing on the closed pipe.
        with contextlib.suppress(OSError):
            self._connection.send((job_id, reply))

    async def _run(self, job_id: int, job: _RunJob) -> None:
        try:
            with self._session.store() as store:
                made = {spec.name: self._backend(spec.config) for spec in job.run_config.judges}
                backends = {name: backend for name, (backend, _new) in made.items()}
                # The worker keeps its judges open for the next run or trial; it closes them when it ends.
                options = dataclasses.replace(job.options, close_backends=False)
                engine = open_run(job.run_config, job.dataset.dataset(), store, backends,
                                  display=_JobDisplay(self, job_id),
                                  options=options, retry=job.retry)
                self._work[job_id] = engine
                if job_id in self._cancelled:
                    engine.cancel()
                await engine.run()
            self._send(job_id, _Done(opened=any(new for _backend, new in made.values())))
        except BaseException as exc:  # every error reaches the parent, which raises it as the run's
            self._send(job_id, _ChildError(_picklable(exc)))
            if not isinstance(exc, Exception):
                raise
        finally:
            self._work.pop(job_id, None)
            self._cancelled.discard(job_id)

    async def _report_job(self, job_id: int, job: _ReportJob) -> None:
        """The same search or alignment as in-process (:func:`~.judging.open_search`, :func:`~.align.open_align`),
        with this process's open judges: they stay open for the next job. Its events go to the parent as they
        come, then its report."""
        opened: list[bool] = []

        def open_judge(judge: JudgeConfig) -> JudgeBackend:
            backend, new = self._backend(judge)
            opened.append(new)
            return backend

        try:
            search = job.open(self._session.with_backend_factory(open_judge), lambda event: self._send(job_id, event))
            self._work[job_id] = search
            if job_id in self._cancelled:
                search.cancel()
            report = await search.run()
            self._send(job_id, _Done(opened=any(opened), report=report))
        except BaseException as exc:  # SearchCancelled and a refusal included: the parent raises them as the job's
            self._send(job_id, _ChildError(_picklable(exc)))
            if not isinstance(exc, Exception):
                raise
        finally:
            self._work.pop(job_id, None)
            self._cancelled.discard(job_id)

    async def _trial(self, job_id: int, job: _TrialJob) -> None:
        try:
            backend, new = self._backend(job.judge)
            result = await ask_judge(backend, job.request)
            self._send(job_id, _Done(result, opened=new))
        except BaseException as exc:
            self._send(job_id, _ChildError(_picklable(exc)))
            if not isinstance(exc, Exception):
                raise


class _JobDisplay:
    """A run's display in the worker: every event but the judgments (which the parent reads from the store)
    to the pipe, under the run's job id."""

    def __init__(self, server: _Server, job_id: int) -> None:
        self._server = server
        self._job_id = job_id

    def on_event(self, event: RunEvent) -> None:
        if not isinstance(event, JudgmentScored):
            self._server._send(self._job_id, event)


def _picklable(exc: BaseException) -> BaseException:
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:  # an error whose constructor takes other arguments than its text, say
        return JudgeProcessError(f"{type(exc).__name__}: {exc}")
    return exc


__all__ = ["JudgeLog", "JudgeProcessDied", "JudgeProcessError", "JudgeWorker", "TrialAnswer", "WorkerAlignHandle",
           "WorkerRunHandle", "WorkerSearchHandle", "ask_in_worker", "close_judge_worker", "judge_log",
           "judge_log_dir", "judge_worker", "runs_in_worker", "share_cores_with_judges", "start_align_in_worker",
           "start_run_in_worker", "start_search_in_worker"]
