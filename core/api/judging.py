"""Judging as one use case: run the planned judges, then the reports that follow the run.

:func:`judge` is what ``dialjudge judge`` does and what the app's Run screen starts:
each plan (one per few-shot draw) is run to its end with the session's store and
backends, stopping at the first that does not finish; :meth:`JudgeOutcome.reports`
then computes the reports core decides follow such a run (:func:`reports_after_run`).
:func:`start_run` is its first half for a front end that drives the run itself on
a thread of its own (the app: a run it can cancel while it draws); the handle it
returns owns the run's store connection and backends and closes them when the run
ends. :func:`open_search` does the same for a tuning search.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from ..errors import ConfigError
from ..judges.run.config import RunConfig
from ..judges.run.events import RunSummary
from ..judges.run.options import EngineOptions
from ..judges.run.stopping import StopRule
from ..judges.store.run_store import RunStore
from ..judges.store.status import RunStatus
from ..model import Dataset
from ..tuning.search import SearchEvent, TuningReport
from . import reports as _reports
from . import runs as _runs
from . import tune as _tune
from .display import RunDisplay
from .reports import RunReports
from .requests import AgreementRequest
from .runs import RunPlan
from .session import Session
from .tune import SearchSpace

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class _Job(Protocol[T_co]):
    """What the engine and the tuning search both are: work that runs to a result and can be cancelled."""

    async def run(self) -> T_co: ...

    def cancel(self) -> None: ...


class _Handle(Generic[T]):
    """Work ready to run to its end on the calling thread and cancellable from another.

    It owns the store connection the work writes to (and the work its backends): closed when
    :meth:`run` returns or raises.
    """

    def __init__(self, job: _Job[T], store: RunStore) -> None:
        self._job = job
        self._store = store

    async def run(self) -> T:
        """Run to the end (or until cancelled, or, for a run, until its stop rule decides)."""
        try:
            return await self._job.run()
        finally:
            self._store.close()

    def run_to_end(self) -> T:
        """:meth:`run` on an event loop of its own (the command line, a worker thread)."""
        return asyncio.run(self.run())

    def cancel(self) -> None:
        """Stop after what is in flight: what is stored stays, and a rerun or resume picks it up."""
        self._job.cancel()


class RunHandle(_Handle[RunSummary]):
    """One judge run (:func:`start_run`)."""


class SearchHandle(_Handle[TuningReport]):
    """A tuning search (:func:`open_search`)."""


def start_run(session: Session, config: RunConfig, dataset: Dataset, *, display: RunDisplay | None = None,
              options: EngineOptions | None = None, retry: bool = False) -> RunHandle:
    """Run ``config`` on ``dataset`` with the session's judges and store (not started yet).

    ``options`` are the run's (resume, run id, stop rule, order seed, ...); the backends the session
    makes for it are closed with the run. ``retry``: ask run ``options.run_id``'s failed judgments again.
    """
    options = dataclasses.replace(options or EngineOptions(), close_backends=True)
    backends = session.backends_for(config)
    store = session.open_store()
    try:
        engine = _runs.open_run(config, dataset, store, backends, display=display, options=options, retry=retry)
    except BaseException:
        store.close()
        raise
    return RunHandle(engine, store)


@dataclass(frozen=True)
class JudgeOutcome:
    """What a :func:`judge` call ran: one summary per plan that was started (few-shot draws), in order."""

    session: Session
    plans: tuple[RunPlan, ...]
    dataset: Dataset
    summaries: tuple[RunSummary, ...]
    stop_rule: StopRule | None

    @property
    def run_ids(self) -> list[int]:
        return [s.run_id for s in self.summaries]

    @property
    def finished(self) -> bool:
        """Every plan ran to its end (or its stop rule decided)."""
        return _reports.run_finished(list(self.summaries), stopped=self.stopped)

    @property
    def stopped(self) -> bool:
        """The stop rule decided before the run finished."""
        rule = self.stop_rule
        return rule is not None and rule.last is not None and rule.last.decided

    def reports(self, request: AgreementRequest, *, for_file: bool = False) -> RunReports:
        """The reports that follow the run, as core decides them (:func:`reports_after_run`)."""
        with self.session.store() as store:
            return _reports.run_reports(store, self.plans[0], self.dataset, self.run_ids, request,
                                        for_file=for_file)


def _no_display(_plan: RunPlan) -> AbstractContextManager[RunDisplay | None]:
    @contextmanager
    def nothing() -> Iterator[None]:
        yield None
    return nothing()


def judge(session: Session, plans: Sequence[RunPlan], dataset: Dataset, *,
          display: Callable[[RunPlan], AbstractContextManager[RunDisplay | None]] = _no_display,
          stop_rule: StopRule | None = None, fresh: bool = False, reuse_finished: bool | None = None,
          options: EngineOptions | None = None) -> JudgeOutcome:
    """Run every plan to its end, stopping at the first that does not finish.

    ``display(plan)`` is entered around each plan's run and gives the display its events go to.
    Unless ``fresh``, an unfinished run of the same settings is resumed and (``reuse_finished``,
    default: unless the run is named) a finished one is shown again instead of judged anew;
    ``options`` holds the rest of the engine's settings (its order seed, say).
    """
    if stop_rule is not None and len(plans) > 1:
        raise ConfigError("a stop rule watches one run; it cannot be combined with --fewshot-draws")
    summaries: list[RunSummary] = []
    for plan in plans:
        reuse = (not fresh and not plan.config.name) if reuse_finished is None else reuse_finished
        run_options = dataclasses.replace(options or EngineOptions(), resume=not fresh, reuse_finished=reuse,
                                          stop_rule=stop_rule)
        with display(plan) as shown:
            handle = start_run(session, plan.config, dataset, display=shown, options=run_options)
            summaries.append(handle.run_to_end())
        if summaries[-1].status != RunStatus.FINISHED:
            break
    return JudgeOutcome(session, tuple(plans), dataset, tuple(summaries), stop_rule)


def open_search(session: Session, space: SearchSpace, dataset: Dataset, *,
                on_event: Callable[[SearchEvent], None] | None = None, close_backends: bool = True) -> SearchHandle:
    """The search over ``space``'s variants with the session's judges and store, checked against the
    dataset before anything is judged. ``close_backends``: False where the session's judges stay open after
    the search (the judge process's: ``core/api/run_worker.py``)."""
    store = session.open_store()
    try:
        search = _tune.open_search(space, dataset, session.config, store, on_event=on_event,
                                   make_backend=session.make_backend, close_backends=close_backends)
    except BaseException:
        store.close()
        raise
    return SearchHandle(search, store)


__all__ = ["JudgeOutcome", "RunHandle", "SearchHandle", "judge", "open_search", "start_run"]
