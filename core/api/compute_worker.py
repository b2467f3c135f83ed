"""Heavy computation for a front end with a UI thread, in a child process: the app's metric scoring, the
statistics its Scores screen shows (agreement tables with bootstrap CIs, the human ceiling), the dataset's
description and the judge diagnostics (and, from :mod:`.decisions_in_worker`, the Scores screen's paired
comparison, the discernment table and a stored run's label estimates).

Computed in threads of the app's own process, these took the interpreter from its UI thread (CPython runs
one thread's Python at a time): the app needed a cooperative scheduler in core (yielding between steps,
turns among background threads), a patched event-loop selector, nice-d threads and paused collections to
keep drawing. In a process of their own they take none of the app's interpreter; the app's threads only
send inputs and receive results, a piece at a time. The command line computes in its own process as before
(it has no UI thread to keep fed).

One :class:`ComputeWorker` per session, started by the first computation and again by the first one after
it died (a signal, out of memory): a computation in flight when it dies raises :class:`ComputeProcessDied`;
the app stays up. What crosses between the two processes:

* the open dataset, once per process: its shell, then its examples a few hundred at a time (each piece
  1.4 ms of the app's interpreter to pickle; all 100,000 at once held it for 0.5 s), pickled once per
  dataset (:mod:`.pickled_examples`: a run sends the judge process the same bytes). The child keeps the last
  :data:`DATASETS_KEPT` it was sent;
* per computation: a module-level function (of this module, or of :mod:`.decisions_in_worker` for the
  paired comparison, discernment and a stored run's label estimates) and its arguments; a column of scores (item ->
  score) goes in pieces of :data:`ITEMS_PER_PIECE` entries, since a 100,000-entry mapping pickled or
  unpickled at once holds the interpreter for tens of milliseconds;
* back: progress (metrics), and the result; metric scores come back a column piece at a time, each
  unpickled by the app's thread that reads the pipe (the rest of a result is a small table).

While it computes, the process takes a core: the session's judge process is told
(:func:`~.run_worker.share_cores_with_judges`), so that a local judge computing at the same time uses the
other cores rather than spinning against this process on all of them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import pickle
import queue
import threading
import weakref
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, TypeVar

from ..describe import DatasetSummary, describe
from ..errors import DialjudgeError
from ..evaluation import compared_items
from ..judge_diagnostics import JudgeDiagnostics
from ..judges.run.config import RunConfig
from ..metrics.batch import MetricScores, score_examples
from ..metrics.registry import DEFAULT_PROFILE
from ..model import Aggregation, Dataset, Scale
from ..stats import agreement_table
from ..stats.ceiling import CeilingRow
from ..stats.table import AgreementTable
from ..subsets import ALL, Subset
from ..worker_process import ChildProcess, WorkersByOwner, exit_text, start_child
from .formatting import ceiling_table
from .pickled_examples import pickled_examples, unpickled_examples
from .run_worker import judge_log_dir, share_cores_with_judges
from .session import Session
from .view import judges_as_labels

#: Entries of a score column (item -> score) pickled together, either way.
ITEMS_PER_PIECE = 10_000
#: Datasets the process keeps (the one open, and the one before it while its last computations end).
DATASETS_KEPT = 2
#: Seconds a computation's caller waits between two looks at whether it was cancelled.
POLL_S = 0.1
#: Seconds the process may take to end when told to close before it is killed.
EXIT_S = 5.0
#: Cores a computation takes while it runs (one thread of the process computes it; the pipe's reader waits).
CORES_PER_COMPUTATION = 1

Result = TypeVar("Result")


class ComputeProcessError(DialjudgeError):
    """A computation could not be done in the compute process (what it raised, as text where that does not
    pickle)."""


class ComputeProcessDied(ComputeProcessError):
    """The compute process ended (a signal, a crash) while it computed; the next computation starts another."""


class ComputeCancelled(ComputeProcessError):
    """The caller stopped waiting for the computation (its ``is_cancelled`` said so)."""


# -- what crosses the pipe ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _DatasetShell:
    """A dataset without its examples; :class:`_DatasetPiece` messages with the same key follow."""

    key: int
    shell: Dataset


@dataclass(frozen=True)
class _DatasetPiece:
    key: int
    #: Examples pickled together (:func:`~.pickled_examples.pickled_examples`).
    examples: bytes


@dataclass(frozen=True)
class _ColumnPiece:
    """Part of an argument of job ``job_id``: entries of the score column ``name``."""

    job_id: int
    name: str
    items: list[tuple[str, Any]]


@dataclass(frozen=True)
class _Task:
    """Compute ``function(dataset, columns, *args)`` on the dataset with ``key``; ``columns`` holds the score
    columns sent before it as :class:`_ColumnPiece` (and the empty ones named here)."""

    job_id: int
    #: None: the computation needs no dataset of the parent's.
    key: int | None
    function: Callable[..., Any]
    column_names: tuple[str, ...]
    args: tuple[Any, ...]


@dataclass(frozen=True)
class _Progress:
    done: int
    total: int


@dataclass(frozen=True)
class _ResultPiece:
    """Part of a result: entries of the score column ``name`` (metric scores)."""

    name: str
    items: list[tuple[str, float]]


@dataclass(frozen=True)
class _Result:
    value: Any


@dataclass(frozen=True)
class _Failed:
    error: BaseException


@dataclass(frozen=True)
class _Died:
    exitcode: int


@dataclass(frozen=True)
class _Close:
    """The parent is done with the process."""


def _pieces(items: Iterator[tuple[str, Any]]) -> Iterator[list[tuple[str, Any]]]:
    while piece := list(itertools.islice(items, ITEMS_PER_PIECE)):
        yield piece


# -- the parent's side ----------------------------------------------------------------------------------------


class _Job:
    def __init__(self, child: ChildProcess) -> None:
        self.child = child
        self.replies: queue.SimpleQueue[Any] = queue.SimpleQueue()
        #: Result columns received so far (metric scores, a piece at a time).
        self.columns: dict[str, dict[str, float]] = {}


class ComputeWorker:
    """The session's compute process (:func:`compute_worker`): started by the first computation, again after
    it died. A thread of the parent starts it and lives as long as it (the kernel's parent-death signal is
    tied to that thread), reading its replies and handing each to its computation."""

    def __init__(self, session: Session) -> None:
        self._log_dir = judge_log_dir(session)
        #: Weakly: the registry forgets this worker with its session.
        self._session = weakref.ref(session)
        #: Computations between their task's sending and their answer (the cores they take: :meth:`_busy`).
        self._computing = 0
        self._busy_lock = threading.Lock()
        self._lock = threading.Lock()
        self._send_lock = threading.Lock()
        #: One dataset sent at a time: a second computation on it waits until the first has sent it.
        self._dataset_lock = threading.Lock()
        self._child: ChildProcess | None = None
        self._jobs: dict[int, _Job] = {}
        self._ids = itertools.count(1)
        #: The datasets the current process holds: (the dataset, weakly) -> its key there.
        self._sent: list[tuple[weakref.ref[Dataset], int]] = []
        #: Processes whose replies have all been read (they ended).
        self._ended: weakref.WeakSet[ChildProcess] = weakref.WeakSet()
        self.log_path: Path | None = None

    @property
    def pid(self) -> int | None:
        """The process's id (None: none runs now)."""
        child = self._child
        return child.pid if child is not None else None

    def compute(self, function: Callable[..., Result], dataset: Dataset | None, *args: Any,
                columns: Mapping[str, Mapping[str, Any]] | None = None,
                progress: Callable[[int, int], None] | None = None,
                is_cancelled: Callable[[], bool] | None = None) -> Result:
        """``function(dataset, columns, *args)`` in the process (``function``: a module-level function of
        core.api, pickled by its name; ``dataset`` None: the function gets None); blocks the calling thread
        (never the UI thread) until it answers. Raises what it raised, :class:`ComputeProcessDied`, or
        :class:`ComputeCancelled` once ``is_cancelled()`` is true."""
        child, key = self._dataset_key(dataset)
        job_id = next(self._ids)
        job = _Job(child)
        with self._lock:
            self._jobs[job_id] = job
        counted = False
        try:
            names = tuple(columns or {})
            for name, column in (columns or {}).items():
                for piece in _pieces(iter(column.items())):
                    self._send(child, _ColumnPiece(job_id, name, piece))
            self._busy(+1)
            counted = True
            self._send(child, _Task(job_id, key, function, names, args))
            while True:
                if is_cancelled is not None and is_cancelled():
                    raise ComputeCancelled("the computation was cancelled")
                try:
                    reply = job.replies.get(timeout=POLL_S)
                except queue.Empty:
                    if child in self._ended:  # it ended before this job was known to its reader
                        reply = _Died(child.exitcode if child.exitcode is not None else -1)
                    else:
                        continue
                if isinstance(reply, _Progress):
                    if progress is not None:
                        progress(reply.done, reply.total)
                elif isinstance(reply, _ResultPiece):
                    job.columns.setdefault(reply.name, {}).update(reply.items)
                elif isinstance(reply, _Result):
                    value = reply.value
                    if isinstance(value, MetricScores):  # its columns came before it
                        value = dataclasses.replace(value, values={m: job.columns.get(m, {}) for m in value.values})
                    return value
                elif isinstance(reply, _Failed):
                    raise reply.error
                elif isinstance(reply, _Died):
                    raise ComputeProcessDied(
                        f"the compute process ended with {exit_text(reply.exitcode)} while it computed; the next "
                        f"computation starts another (its log: {job.child.log_path})")
        finally:
            with self._lock:
                self._jobs.pop(job_id, None)
            if counted:
                self._busy(-1)

    def _busy(self, change: int) -> None:
        """One computation more (+1) or fewer (-1) in the process: the judges are told the cores taken when
        that goes from none to some or back."""
        with self._busy_lock:  # held while telling, so that two changes reach the judges in their order
            before = self._computing
            self._computing = after = max(0, before + change)
            session = self._session()
            if session is not None and (before == 0) != (after == 0):
                share_cores_with_judges(session, CORES_PER_COMPUTATION if after else 0)

    def close(self) -> None:
        """Let the process end (what it computes is dropped)."""
        with self._lock:
            child, self._child = self._child, None
        if child is not None:
            with self._send_lock, contextlib.suppress(OSError):
                child.connection.send((0, _Close()))

    def _send(self, child: ChildProcess, message: Any) -> None:
        with self._send_lock, contextlib.suppress(OSError):  # it ended: its thread tells the job
            child.connection.send((0, message))

    def _dataset_key(self, dataset: Dataset | None) -> tuple[ChildProcess, int | None]:
        """The running process (started now if none runs) and its key for ``dataset`` (sent now if it lacks it;
        None for no dataset)."""
        with self._dataset_lock:
            with self._lock:
                child = self._child if self._child is not None else self._start()
                if dataset is None:
                    return child, None
                for ref, key in self._sent:
                    if ref() is dataset:
                        return child, key
                key = next(self._ids)
            self._send(child, _DatasetShell(key, dataclasses.replace(dataset, examples=[])))
            for piece in pickled_examples(dataset):
                self._send(child, _DatasetPiece(key, piece))
            with self._lock:
                if self._child is child:
                    self._sent = [*self._sent, (weakref.ref(dataset), key)][-DATASETS_KEPT:]
            return child, key

    def _start(self) -> ChildProcess:
        """Start the process from a thread of its own that outlives it (under ``_lock``)."""
        stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S-%f")
        self.log_path = self._log_dir / f"compute-{stamp}.log"
        started: queue.SimpleQueue[ChildProcess | BaseException] = queue.SimpleQueue()
        threading.Thread(target=self._keep, args=(self.log_path, started), name="compute worker",
                         daemon=True).start()
        outcome = started.get()
        if isinstance(outcome, BaseException):
            raise outcome
        self._child = outcome
        self._sent = []
        return outcome

    def _keep(self, log_path: Path, started: queue.SimpleQueue[ChildProcess | BaseException]) -> None:
        try:
            child = start_child(_serve, (), log_path=log_path, name="dialjudge compute worker", watch_pipe=False)
        except BaseException as exc:  # the caller raises it
            started.put(exc)
            return
        started.put(child)
        while True:
            try:
                job_id, reply = child.connection.recv()
            except (EOFError, OSError):  # the process ended
                break
            with self._lock:
                job = self._jobs.get(job_id)
            if job is not None:
                job.replies.put(reply)
        exitcode = child.reap(EXIT_S)
        with self._lock:
            self._ended.add(child)
            if self._child is child:
                self._child = None
                self._sent = []
            orphans = [job for job in self._jobs.values() if job.child is child]
        for job in orphans:
            job.replies.put(_Died(exitcode))


_WORKERS: WorkersByOwner[Session, ComputeWorker] = WorkersByOwner(ComputeWorker)


def compute_worker(session: Session) -> ComputeWorker:
    """The session's compute worker (one per session; its process starts with the first computation)."""
    return _WORKERS.of(session)


def close_compute_worker(session: Session) -> None:
    """End the session's compute process, if it has one (the app, when it closes)."""
    worker = _WORKERS.pop(session)
    if worker is not None:
        worker.close()


# -- the use cases ------------------------------------------------------------------------------------------


def score_metrics_in_worker(session: Session, dataset: Dataset, metric_ids: Sequence[str] | None = None, *,
                            workers: int | None = 1, profile: str = DEFAULT_PROFILE,
                            progress: Callable[[int, int], None] | None = None,
                            is_cancelled: Callable[[], bool] | None = None) -> MetricScores:
    """:func:`~dialjudge.core.metrics.score_examples` of every example of ``dataset``, in the compute process."""
    ids = None if metric_ids is None else tuple(metric_ids)
    return compute_worker(session).compute(_score_metrics, dataset, ids, workers, profile,
                                           progress=progress, is_cancelled=is_cancelled)


def agreement_table_in_worker(session: Session, dataset: Dataset,
                              evaluator_scores: Mapping[str, Mapping[str, float | None]], qualities: Sequence[str], *,
                              subset: Subset = ALL, levels: Sequence[str] | None = None,
                              aggregation: Aggregation = Aggregation.MEAN, n_boot: int = 1000, seed: int = 0,
                              confidence: float = 0.95, ceiling_items: Collection[str] | None = None,
                              ceiling_judges: Mapping[str, Mapping[str, object]] | None = None,
                              is_cancelled: Callable[[], bool] | None = None) -> AgreementTable:
    """:func:`~dialjudge.core.stats.agreement_table` over every example of ``dataset``, in the compute process.
    ``ceiling_judges``: the judge columns whose items the ceiling is computed on
    (:func:`~dialjudge.core.evaluation.compared_items` of the subset's examples, found in the process), in
    place of ``ceiling_items``."""
    options: dict[str, Any] = {"subset": subset, "aggregation": aggregation, "n_boot": n_boot, "seed": seed,
                               "confidence": confidence,
                               "ceiling_items": None if ceiling_items is None else frozenset(ceiling_items)}
    if levels is not None:
        options["levels"] = tuple(levels)
    columns: dict[str, Mapping[str, Any]] = dict(evaluator_scores)
    ceiling_keys: tuple[str, ...] | None = None
    if ceiling_judges is not None:
        keys = []
        for name, column in ceiling_judges.items():
            if evaluator_scores.get(name) is column:
                keys.append(name)  # the same copy: sent once
            else:
                keys.append(f"{_CEILING_ONLY}{name}")
                columns[keys[-1]] = column
        ceiling_keys = tuple(keys)
    return compute_worker(session).compute(_agreement_table, dataset, tuple(qualities), tuple(evaluator_scores),
                                           ceiling_keys, options, columns=columns, is_cancelled=is_cancelled)


#: What a column sent only for the ceiling's items is named by (never an evaluator's name: it starts with NUL).
_CEILING_ONLY = "\0ceiling:"


def describe_in_worker(session: Session, dataset: Dataset, *, ceiling_boot: int = 0,
                       is_cancelled: Callable[[], bool] | None = None) -> tuple[DatasetSummary, list[CeilingRow]]:
    """``dataset``'s description (:func:`~dialjudge.core.describe.describe`) and its human ceilings
    (:func:`~.formatting.ceiling_table` with ``ceiling_boot`` resamples), in the compute process."""
    return compute_worker(session).compute(_describe, dataset, ceiling_boot, is_cancelled=is_cancelled)


def judges_as_labels_in_worker(session: Session, dataset: Dataset, item_ids: Sequence[str], quality: str,
                               scale: Scale, columns: Mapping[str, Mapping[str, float | None]],
                               run_configs: Mapping[str, RunConfig | None], *,
                               aggregation: Aggregation = Aggregation.MEAN,
                               is_cancelled: Callable[[], bool] | None = None) -> JudgeDiagnostics | None:
    """:func:`~.view.judges_as_labels` over the examples ``item_ids`` of ``dataset``, in the compute process;
    ``run_configs``: each column's stored run's configuration (None: of no stored run)."""
    return compute_worker(session).compute(_judges_as_labels, dataset, tuple(item_ids), quality, scale,
                                           dict(run_configs), aggregation, columns=columns,
                                           is_cancelled=is_cancelled)


# -- the child's side ---------------------------------------------------------------------------------------


def _score_metrics(dataset: Dataset, columns: Mapping[str, Any], metric_ids: tuple[str, ...] | None,
                   workers: int | None, profile: str, *, progress: Callable[[int, int], None]) -> MetricScores:
    return score_examples(dataset.examples, metric_ids, workers=workers, progress=progress, profile=profile)


def _agreement_table(dataset: Dataset, columns: Mapping[str, Mapping[str, float | None]],
                     qualities: tuple[str, ...], evaluators: tuple[str, ...], ceiling_keys: tuple[str, ...] | None,
                     options: dict[str, Any], *, progress: Callable[[int, int], None]) -> AgreementTable:
    if ceiling_keys is not None:
        options = {**options, "ceiling_items": compared_items(options["subset"].select(dataset.examples),
                                                              {key: columns[key] for key in ceiling_keys})}
    return agreement_table(dataset.examples, {name: columns[name] for name in evaluators}, qualities, **options)


def _describe(dataset: Dataset, columns: Mapping[str, Any], ceiling_boot: int, *,
              progress: Callable[[int, int], None]) -> tuple[DatasetSummary, list[CeilingRow]]:
    return describe(dataset), ceiling_table(dataset.examples, n_boot=ceiling_boot)


def _judges_as_labels(dataset: Dataset, columns: Mapping[str, Mapping[str, float | None]], item_ids: tuple[str, ...],
                      quality: str, scale: Scale, run_configs: dict[str, RunConfig | None],
                      aggregation: Aggregation, *, progress: Callable[[int, int], None]) -> JudgeDiagnostics | None:
    by_id = {ex.id: ex for ex in dataset.examples}
    examples = [by_id[item] for item in item_ids]
    return judges_as_labels(dataset, examples, quality, scale, columns, run_configs.get, aggregation=aggregation)


class _Server:
    """The child: datasets by key, score columns by job as their pieces come, one thread per computation."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._send_lock = threading.Lock()
        self._datasets: dict[int, Dataset] = {}
        #: Keys of datasets whose pieces are still coming (their id index is built when the first task comes).
        self._unindexed: set[int] = set()
        self._columns: dict[int, dict[str, dict[str, Any]]] = {}

    def serve(self) -> None:
        while True:
            try:
                _, message = self._connection.recv()
            except (EOFError, OSError):
                return
            if isinstance(message, _Close):
                return
            if isinstance(message, _DatasetShell):
                self._datasets[message.key] = message.shell
                self._unindexed.add(message.key)
                for old in sorted(self._datasets)[:-DATASETS_KEPT]:
                    del self._datasets[old]
                    self._unindexed.discard(old)
            elif isinstance(message, _DatasetPiece):
                dataset = self._datasets.get(message.key)
                if dataset is not None:
                    dataset.examples.extend(unpickled_examples((message.examples,)))
            elif isinstance(message, _ColumnPiece):
                self._columns.setdefault(message.job_id, {}).setdefault(message.name, {}).update(message.items)
            elif isinstance(message, _Task):
                if message.key in self._unindexed:  # every piece came before the first task on it
                    self._unindexed.discard(message.key)
                    # Built again from the full examples: the shell's id index (``Dataset.get``) was of none.
                    self._datasets[message.key] = dataclasses.replace(self._datasets[message.key])
                columns = self._columns.pop(message.job_id, {})
                for name in message.column_names:
                    columns.setdefault(name, {})
                threading.Thread(target=self._run, args=(message, columns), name=f"compute {message.job_id}",
                                 daemon=True).start()

    def _reply(self, job_id: int, reply: Any) -> None:
        with self._send_lock, contextlib.suppress(OSError):
            self._connection.send((job_id, reply))

    def _run(self, task: _Task, columns: dict[str, dict[str, Any]]) -> None:
        try:
            dataset = None if task.key is None else self._datasets.get(task.key)
            if dataset is None and task.key is not None:
                raise ComputeProcessError("the dataset of this computation is no longer open")
            value = task.function(dataset, columns, *task.args,
                                  progress=lambda done, total: self._reply(task.job_id, _Progress(done, total)))
            if isinstance(value, MetricScores):
                for metric_id, column in value.values.items():
                    for piece in _pieces(iter(column.items())):
                        self._reply(task.job_id, _ResultPiece(metric_id, piece))
                value = dataclasses.replace(value, values=dict.fromkeys(value.values, {}))
            self._reply(task.job_id, _Result(value))
        except BaseException as exc:  # it goes to the caller, which raises it
            self._reply(task.job_id, _Failed(_picklable(exc)))


def _picklable(exc: BaseException) -> BaseException:
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:  # any error may refuse to pickle, in any way
        return ComputeProcessError(f"{type(exc).__name__}: {exc}")
    return exc


def _serve(connection: Connection) -> None:
    """The child's work (:func:`~dialjudge.core.worker_process.start_child`'s target). Nothing in it needs
    storing, so SIGTERM (the parent's death) ends it at once (its default), and so does the pipe's end."""
    _Server(connection).serve()


__all__ = ["ComputeCancelled", "ComputeProcessDied", "ComputeProcessError", "ComputeWorker",
           "agreement_table_in_worker", "close_compute_worker", "compute_worker", "describe_in_worker",
           "judges_as_labels_in_worker", "score_metrics_in_worker"]
