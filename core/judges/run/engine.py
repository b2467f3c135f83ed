"""The async run engine: render, look up, ask, score, store, report.

For each judge variant x item x repeat of a :class:`RunConfig` the engine
renders the prompt, skips what the store already holds (resume), answers
identical requests from the response cache, sends the rest to the judge's
backend (at most ``backend.max_concurrency`` at once), scores the answer and
commits it at once. Items are ordered so consecutive prompts share the longest
prefix — every candidate of one context together, repeats back to back — which
lets a local backend reuse its KV cache; the contexts themselves come in a
seeded random order, so a partial run is a random sample of contexts, and an
optional stop rule ends the run once it has enough evidence (see .stopping). A request that finally fails becomes
a failed judgment (error text, no score) and the run carries on.

What to do and in which order is the work plan (.work_plan), the batched store writes the
writer (.writer), the counts and rates the counters (.counters), the options
:class:`~.options.EngineOptions`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ...errors import ConfigError, DataError, DialjudgeError, RequestInterrupted
from ...model import Dataset, Example
from ..backends import backend_kind
from ..prompts.constraint import AnswerConstraint
from ..prompts.fewshot import FewShotSelector
from ..prompts.personas import Persona
from ..prompts.render import ItemMismatch, render_prompt
from ..prompts.templates import parse_template
from ..prompts.truncation import WindowBudget, fit_to_window
from ..store.provenance import run_environment
from ..store.run_store import JudgmentWrite, RunStore
from ..types import (
    BackendResult,
    InterruptibleBackend,
    JudgeBackend,
    JudgeRequest,
    Judgment,
    RenderedPrompt,
    ScoringMode,
)
from .config import JudgeVariant, RunConfig
from .counters import RunCounters
from .events import (
    JudgmentScored,
    RunEvent,
    RunFailed,
    RunFinished,
    RunPhase,
    RunStarted,
    RunStatus,
    RunSummary,
    StopRuleChecked,
    Subscriber,
)
from .failures import BreakerSettings, CircuitBreaker, failure_kind
from .options import EngineOptions, Scorer
from .scoring import score_result
from .stopping import StopState
from .work_plan import Work, make_work, split_by_cache, wanted_judgments
from .writer import JudgmentWriter

#: Judgments answered from the cache scored between two turns of the event loop (a cancel lands at the next).
CACHED_PER_TURN = 64


class TemplateRenderer:
    """Renders with the run's own template snapshot, persona texts and few-shot setting."""

    def __init__(self, config: RunConfig, fewshot_pool: Sequence[Example]) -> None:

        self._render = render_prompt
        self.config = config
        self.template = parse_template(config.template_text, config.template_source or config.template)
        if config.mode not in self.template.output.modes:
            offered = ", ".join(m.value for m in self.template.output.modes)
            raise ConfigError(
                f"template {config.template!r} does not support {config.mode.value} scoring "
                f"(it offers: {offered})")
        self._personas = {
            p.name: Persona(name=p.name, description=p.description, text=p.text)
            for p in config.personas if p is not None
        }
        self._selector = None
        if config.fewshot.enabled:
            if not config.quality:
                raise ConfigError("few-shot examples need the run's quality (which human rating to show)")

            self._selector = FewShotSelector(fewshot_pool, config.fewshot, config.quality)
        self._shots: dict[str, list[Example]] = {}
        #: Items whose oldest context turns were left out to fit a judge's window: label -> item -> turns.
        self.truncated: dict[str, dict[str, int]] = {}

    def fewshot_for(self, example: Example) -> list[Example]:
        if self._selector is None:
            return []
        if example.id not in self._shots:
            self._shots[example.id] = list(self._selector.select(example))
        return self._shots[example.id]

    def __call__(self, variant: JudgeVariant, example: Example) -> RenderedPrompt:

        persona = self._personas.get(variant.persona.name) if variant.persona else None
        fewshot = self.fewshot_for(example)

        def render(ex: Example) -> RenderedPrompt:
            return self._render(self.template, ex, aspect=self.config.aspect, persona=persona,
                                fewshot=fewshot, quality=self.config.quality, kpi=self.config.kpi)

        budget = _window_budget(variant, self.config.mode)
        if budget is None:
            return render(example)
        fitted = fit_to_window(render, example, budget)  # PromptTooLong fails this item only
        if fitted.dropped_turns:
            self.truncated.setdefault(variant.label, {})[example.id] = fitted.dropped_turns
        return fitted.prompt


def _window_budget(variant: JudgeVariant, mode: Any) -> Any:
    """The judge's prompt budget (truncation.WindowBudget), or None where its window is unknown."""

    config = variant.judge.config
    try:
        kind = backend_kind(config.backend)
    except ConfigError:  # a judge no backend here runs (an imported run's, core.imports): window unknown
        return None
    window = kind.context_window(config)
    if isinstance(window, bool) or not isinstance(window, int) or window <= 0:
        return None
    answer = variant.judge.sampling.max_tokens if mode is ScoringMode.GENERATE else 16
    return WindowBudget(window, answer)


class RunEngine:
    """Runs one :class:`RunConfig` over a dataset; ``await engine.run()``.

    ``backends`` maps each judge name of the config to a backend built by the
    caller (``make_backend``). The engine opens the backends it needs (``open``
    should be idempotent) and closes them only with ``options.close_backends``,
    so a caller may keep a loaded model for the next run.
    """

    def __init__(self, config: RunConfig, dataset: Dataset, backends: Mapping[str, JudgeBackend], store: RunStore,
                 options: EngineOptions | None = None) -> None:
        self.config = config
        self.dataset = dataset
        self.backends = dict(backends)
        self.store = store
        self.options = options = options or EngineOptions()
        self._scorer = options.scorer
        self._fewshot_pool = (list(options.fewshot_pool) if options.fewshot_pool is not None
                              else list(dataset.examples))
        self._clock = options.clock
        self.stop_rule = options.stop_rule
        self._subscribers: list[Subscriber] = []
        self._breaker_settings = options.breaker or BreakerSettings()
        self._breakers: dict[str, CircuitBreaker] = {}
        #: Judges stopped by their circuit breaker, with the reason; their remaining items stay pending.
        self.paused: dict[str, str] = {}
        self._lock_owner: str | None = None
        self._workers_stop = False
        #: Per judge variant: items whose oldest context turns were left out to fit its window.
        self.truncated: dict[str, dict[str, int]] = {}
        #: The stop rule's decision that ended the run early (None when it did not).
        self.stopped_by_rule: StopState | None = None
        #: Judgments scored and not yet in the store (see _record).
        self._writer = JudgmentWriter(store, interval_s=options.write_interval_s)
        self.counters = RunCounters(self._clock, progress_interval_s=options.progress_interval_s,
                                    progress_every=options.progress_every)

        self.run_id: int | None = None
        self.resumed = False
        self._cancel_requested = False
        self._main: asyncio.Task[None] | None = None
        #: The task of :meth:`run` itself: a cancel while the judges load (before _main exists) ends it.
        self._run_task: asyncio.Task[Any] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- subscribers and control ----------------------------------------------------------

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call ``callback(event)`` for every event; returns a function that unsubscribes."""
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback) if callback in self._subscribers else None

    def _emit(self, event: RunEvent) -> None:
        for callback in list(self._subscribers):
            callback(event)

    def cancel(self) -> None:
        """Stop the run cleanly: what is stored stays, the run is marked cancelled (resumable).
        Safe to call from another thread."""
        self._cancel_requested = True
        # At once, from this thread: a local model's evaluation in flight stops within milliseconds
        # instead of finishing the request (many seconds on a busy CPU) before the judge can close.
        self._interrupt_backends()
        loop = self._loop
        if loop is None:
            return
        try:
            on_loop = asyncio.get_running_loop() is loop
        except RuntimeError:
            on_loop = False
        if on_loop:
            self._cancel_now()
        else:
            with contextlib.suppress(RuntimeError):  # the loop has closed: the run is over
                loop.call_soon_threadsafe(self._cancel_now)

    def _cancel_now(self) -> None:
        # Judging: stop the workers (what is stored stays). Still preparing (a model loading for
        # many seconds): end run() at once, so that quitting never waits for the load.
        if self._main is not None:
            self._main.cancel()
        elif self._run_task is not None:
            self._run_task.cancel()

    @property
    def cancelled(self) -> bool:
        return self._cancel_requested

    def _interrupt_backends(self) -> None:
        for backend in self.backends.values():
            if isinstance(backend, InterruptibleBackend):
                backend.interrupt()

    def _clear_backend_interrupts(self) -> None:
        """A backend kept from a cancelled run (the tuning search's, say) serves this run again."""
        for backend in self.backends.values():
            if isinstance(backend, InterruptibleBackend):
                backend.clear_interrupt()

    # -- the run --------------------------------------------------------------------------

    async def run(self) -> RunSummary:
        """Do the run (or the rest of it). Raises DialjudgeError when it cannot start.
        An engine runs once; build another to run again."""
        if self._loop is not None:
            raise RuntimeError("this RunEngine has already run; build a new one")
        self._loop = asyncio.get_running_loop()
        self._run_task = asyncio.current_task()
        if self._cancel_requested:  # cancelled before it started (the app quit): ask nothing
            self._run_task = None
            return self._stop(RunStatus.CANCELLED)
        self._clear_backend_interrupts()
        if self._cancel_requested:  # cancelled as the interrupts were cleared: interrupted again
            self._interrupt_backends()
        try:
            return await self._run_once()
        except asyncio.CancelledError:
            if not self._cancel_requested or self._main is not None:
                raise
            # Cancelled while preparing: nothing was asked, the run (if it exists) stays resumable.
            return self._stop(RunStatus.CANCELLED)
        finally:
            self._run_task = None
            if self._lock_owner is not None:
                self.store.locks.unlock_run(self._lock_owner)

    async def _run_once(self) -> RunSummary:
        self.counters.start()
        try:
            cached_work, queues, timeouts = await self._prepare()
        except Exception as exc:
            self._emit(RunFailed(_describe(exc), self.run_id))
            raise
        if self._cancel_requested:
            return self._stop(RunStatus.CANCELLED)
        self._main = asyncio.ensure_future(self._process(cached_work, queues, timeouts))
        try:
            await self._main
        except asyncio.CancelledError:
            # Also when the task itself was cancelled (the CLI's Ctrl+C under asyncio.run) rather than
            # through cancel(): the judge's computation in flight stops before the judge is closed.
            self._interrupt_backends()
            summary = self._stop(RunStatus.CANCELLED)
            if self._cancel_requested:
                return summary
            raise
        except BaseException as exc:
            assert self.run_id is not None
            with contextlib.suppress(Exception):  # what was scored before the failure is kept if it can be
                self._writer.write_all()
            self.store.runs.set_status(self.run_id, RunStatus.FAILED, error=_describe(exc))
            self._emit(RunFailed(_describe(exc), self.run_id))
            raise
        finally:
            if self.options.close_backends:
                await self._close_backends(queues)
        if self.paused:
            return self._stop(RunStatus.FAILED, error="; ".join(self.paused.values()))
        cut_short = self._cancel_requested and self.counters.done < self.counters.total
        return self._stop(RunStatus.CANCELLED if cut_short else RunStatus.FINISHED)

    async def _prepare(self) -> tuple[list[tuple[Work, BackendResult]], dict[str, deque[Work]], dict[str, float]]:
        config = self.config
        variants = config.variants()
        missing = sorted({v.judge.name for v in variants} - set(self.backends))
        if missing:
            raise ConfigError(f"no backend given for judge {missing[0]!r}")
        items, wanted = wanted_judgments(config, variants, self.dataset, self.options.context_order_seed)
        counters = self.counters
        counters.total = len(wanted)
        self._emit(RunPhase(f"preparing {counters.total} prompts"))

        # Before looking for a run to resume: two processes on one run would both send every request.
        self._lock_owner = self.store.locks.lock_run(config.fingerprint, label=config.label)
        record = self._find_run()
        pending = (self.store.judgments.pending(record.id, wanted, retry_failed=self.options.retry_failed)
                   if record else wanted)
        renderer = self.options.renderer or TemplateRenderer(config, self._fewshot_pool)
        if self._scorer is None:
            self._scorer = _default_scorer()
        prepared = self.options.prepared
        too_long: list[Judgment] = []
        if prepared is not None:  # a batch import made the work, and holds its answers
            works = prepared.pending(pending)
        else:
            try:
                works, too_long = make_work(config, variants, items, pending, renderer, self.backends)
            except ItemMismatch as exc:  # a fact about the data: named by its file, not the template's
                raise DataError(exc.reason, path=self.dataset.source or None) from None
        in_hand = prepared.answers if prepared is not None else {}
        # Looked up together: one query per thousand items, not one per item.
        hits = {**(self.store.cache.cached_responses(w.cache_key for w in works if w.cache_key not in in_hand)
                   if self.options.use_cache else {}), **in_hand}
        cached_work, queues = split_by_cache(works, hits)

        # Fail fast, before the run is recorded and before any request is sent.
        for name in queues:
            backend = self.backends[name]
            # Loading a local model takes seconds to a minute: the front ends show it, with the time it takes.
            self._emit(RunPhase(f"loading judge {name}", judge=name))
            await backend.open()
            await backend.check_mode(config.mode, config.top_k)
            if config.constrain is not AnswerConstraint.OFF:
                await _check_constraint(backend, queues[name][0].request)
        timeouts = {name: self._timeout_for(name) for name in queues}

        if record is None:

            opened = {name: self.backends[name] for name in queues}
            snapshot = {**config.to_dict(), "environment": run_environment(opened)}
            self.run_id = self.store.runs.create_run(snapshot, config.fingerprint, name=config.name,
                                                     total=counters.total)
        else:
            self.run_id = record.id
            self.resumed = True
            self.store.runs.set_status(record.id, RunStatus.RUNNING)
            self.store.runs.set_total(record.id, counters.total)
        self.store.locks.set_lock_run(self._lock_owner, self.run_id)
        self._writer.bind(self.run_id, self._loop)
        self.truncated = dict(getattr(renderer, "truncated", {}))
        for judgment in too_long:
            self.store.judgments.add_judgment(self.run_id, judgment)
        counters.done = counters.total - len(pending) + len(too_long)
        if record is not None and self.stop_rule is not None:
            stored = self.store.judgments.load_judgments(record.id)
            judge = self.stop_rule.judge or variants[0].label
            self.stop_rule.judge = judge
            self.stop_rule.preload({item: j.normalized for item, j in stored.get(judge, {}).items()})
        counters.failures = (self.store.judgments.count_judgments(
            self.run_id, failed_only=True, include_request_failures=not self.options.retry_failed)
            if record else len(too_long))
        ways = {name: str(way) for name, backend in self.backends.items() if name in queues
                and (way := getattr(backend, "scoring_way", None)) is not None}
        self._emit(RunStarted(self.run_id, counters.total, counters.done, self.resumed, scoring=ways))
        counters.start_judging()  # rates leave out the preparing and the model's loading
        return cached_work, queues, timeouts

    def _find_run(self) -> Any:
        if self.options.run_id is not None:
            record = self.store.runs.get_run(self.options.run_id)
            if record.fingerprint != self.config.fingerprint:
                raise ConfigError(
                    f"run {record.id} was made from a different configuration; it cannot be resumed with this one")
            return record
        if not self.options.resume:
            return None
        unfinished = self.store.runs.find_resumable(self.config.fingerprint)
        if unfinished is None and self.options.reuse_finished:
            return identical_finished_run(self.store, self.config)
        return unfinished

    def _timeout_for(self, judge_name: str) -> float:
        if self.options.request_timeout_s is not None:
            return self.options.request_timeout_s
        # A guard against a hung backend; the backend's own timeout and retries act first.
        judge = next(j for j in self.config.judges if j.name == judge_name)
        return judge.config.timeout * (judge.config.max_retries + 1) + 60.0

    async def _process(self, cached_work: list[tuple[Work, BackendResult]],
                       queues: dict[str, deque[Work]], timeouts: dict[str, float]) -> None:
        for n, (work, response) in enumerate(cached_work):
            if self._cancel_requested:
                return
            self._record(work, self._score(work, response, cached=True), False, response=None)
            if n % CACHED_PER_TURN == CACHED_PER_TURN - 1:
                await asyncio.sleep(0)  # lets a cancel land (a turn of the loop per judgment cost a 100,000-answer
                # batch import about 2 s)
        waiting = [name for name, queue in queues.items() if queue]
        if waiting:  # an API judge's first answer (a cold server, a slow model) can take many seconds
            self._emit(RunPhase(f"waiting for the first answer of judge {waiting[0]}", judge=waiting[0])
                       if len(waiting) == 1 else RunPhase(f"waiting for the first answers of judges "
                                                          f"{', '.join(waiting)}"))
        workers = [
            asyncio.ensure_future(self._worker(queue, self.backends[name], timeouts[name], first=index == 0))
            for name, queue in queues.items()
            for index in range(max(1, int(self.backends[name].max_concurrency)))
        ]
        if not workers:
            return
        try:
            done, pending = await asyncio.wait(workers, return_when=asyncio.FIRST_EXCEPTION)
        except asyncio.CancelledError:
            # asyncio.wait_for (before Python 3.12) swallows a cancel that lands as its request
            # completes; the flag stops such a worker at its next item.
            self._workers_stop = True
            await _cancel_all(workers)
            raise
        await _cancel_all(pending)
        for task in done:
            if task.exception() is not None:
                raise task.exception()  # type: ignore[misc]

    async def _worker(self, queue: deque[Work], backend: JudgeBackend, timeout: float, *, first: bool) -> None:
        if not queue:
            return
        breaker = self._breaker(queue[0].variant.judge.name)
        if not first:
            # One request at a time until the judge has answered once: a wrong key or a dead
            # server then costs one request, not one per concurrent slot.
            await breaker.answered.wait()
        try:
            await self._work_through(queue, backend, timeout, breaker)
        finally:
            breaker.answered.set()  # this worker is done: the others must not wait for it

    async def _work_through(self, queue: deque[Work], backend: JudgeBackend, timeout: float,
                            breaker: CircuitBreaker) -> None:
        while queue and not self._cancel_requested and not self._workers_stop:
            work = queue.popleft()
            started = self._clock()
            self.counters.backend_calls += 1
            try:
                response = await asyncio.wait_for(backend.complete(work.request), timeout)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the backend already retried; record and carry on
                if (self._cancel_requested or self._workers_stop or isinstance(exc, RequestInterrupted)
                        or _is_shutdown_error(exc)):
                    # Stopping (the user cancelled, the process is exiting, the backend was
                    # interrupted): the request was dropped, not failed. Stored as a failure it
                    # would count against the judge; unstored, a resume asks it again.
                    self._cancel_requested = True
                    return
                reason = (f"no answer within {timeout:g} s" if isinstance(exc, asyncio.TimeoutError)
                          else _describe(exc))
                self._record(work, self._failed(work, reason, started), request_failed=True, response=None)
                breaker.record_failure(failure_kind(exc), reason)
                if breaker.reason is not None:
                    # The items not reached stay unstored, so a resume once it is fixed does them.
                    self.paused[work.variant.judge.name] = breaker.reason
                    queue.clear()
                continue
            breaker.record_success()
            breaker.answered.set()
            self._record(work, self._score(work, response, cached=False), False, response=response)
            await asyncio.sleep(0)  # a backend that never yields must not keep a cancel waiting

    def _breaker(self, judge_name: str) -> CircuitBreaker:
        if judge_name not in self._breakers:
            self._breakers[judge_name] = CircuitBreaker(judge_name, self._breaker_settings)
        return self._breakers[judge_name]

    def _score(self, work: Work, response: BackendResult, *, cached: bool) -> Judgment:
        assert self._scorer is not None
        request = work.request
        try:
            judgment = self._scorer(request, response, work.variant.label)
        except Exception as exc:  # a scoring bug must not lose the model's answer
            judgment = self._failed(work, f"scoring failed: {_describe(exc)}", None,
                                    raw_output=response.raw_output)
        # The stored sampling names the seed this repeat actually used (sampling.seed + r).
        return dataclasses.replace(
            judgment, judge=work.variant.label, repeat=request.repeat, cached=cached,
            sampling=_sampling_record(request))

    def _failed(self, work: Work, error: str, started: float | None, *, raw_output: str = "") -> Judgment:
        request = work.request
        return Judgment(
            item_id=request.item_id, judge=work.variant.label, mode=request.mode,
            prompt_hash=request.prompt.hash, raw_output=raw_output, score=None, normalized=None,
            error=error, latency_s=(self._clock() - started) if started is not None else 0.0,
            repeat=request.repeat, sampling=_sampling_record(request))

    def _record(self, work: Work, judgment: Judgment, request_failed: bool, *,
                response: BackendResult | None) -> None:
        assert self.run_id is not None
        self._writer.add(JudgmentWrite(judgment, work.cache_key, request_failed, response, work.backend.identity))
        self.counters.count(judgment)
        self._emit(JudgmentScored(judgment, self.counters.done, self.counters.total))
        self._maybe_progress()
        if self.stop_rule is not None and judgment.repeat == 0:
            state = self.stop_rule.observe(judgment.judge, judgment.item_id, judgment.normalized)
            if state is not None:
                self._emit(StopRuleChecked(state))
                if state.decided and self.stopped_by_rule is None:
                    self.stopped_by_rule = state
                    self.cancel()  # stored judgments stay; the run is resumable and can be extended

    # -- progress and the end -------------------------------------------------------------

    def _maybe_progress(self, *, force: bool = False) -> None:
        progress = self.counters.due_progress(force=force)
        if progress is not None:
            self._emit(progress)

    def _stop(self, status: RunStatus, *, error: str | None = None) -> RunSummary:
        if self.run_id is None:  # cancelled before anything was recorded
            summary = self._summary(status, 0)
            self._emit(RunFinished(0, status, summary))
            return summary
        self._writer.write_all()
        self.store.runs.set_status(self.run_id, status, error=error)
        self.store.runs.add_wall_time(self.run_id, self._clock() - self.counters.started_at)  # for cost and latency
        self._maybe_progress(force=True)
        summary = self._summary(status, self.run_id)
        self._emit(RunFinished(self.run_id, status, summary))
        return summary

    def _summary(self, status: RunStatus, run_id: int) -> RunSummary:
        counters = self.counters
        return RunSummary(
            run_id=run_id, status=status, total=counters.total, done=counters.done, failures=counters.failures,
            cached=counters.cached, backend_calls=counters.backend_calls, resumed=self.resumed,
            elapsed_s=counters.elapsed_s(),
            per_judge=self.store.judgments.judge_counts(run_id) if run_id else {},
            failure_reasons=self.store.judgments.failure_reasons(run_id) if run_id else [],
            truncated=dict(self.truncated),
            paused=dict(self.paused),
            session_done=dict(counters.session_done_by_judge))

    async def _close_backends(self, queues: Mapping[str, Any]) -> None:
        for name in queues:
            await self.backends[name].close()


def identical_finished_run(store: RunStore, config: RunConfig) -> Any:
    """The newest finished run made with exactly ``config`` (same fingerprint and name): asked for
    again, it is shown rather than stored twice (None: there is none, judge anew)."""
    finished = store.runs.find_finished(config.fingerprint, name=config.name)
    # The yes label is outside the fingerprint (it decides no judgment) but is recorded with the run:
    # a finished run recorded with another one is not this run, so the judgments are made (from the
    # response cache) into a new run that records the label given now.
    if finished is not None and finished.config.get("yes_label") != config.yes_label:
        return None
    return finished


async def _cancel_all(tasks: Iterable[asyncio.Future[Any]]) -> None:
    tasks = list(tasks)
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.gather(*tasks, return_exceptions=True)


def _is_shutdown_error(exc: BaseException) -> bool:
    """The error a thread pool raises once the interpreter is exiting: the process is ending, not the judge failing."""
    return isinstance(exc, RuntimeError) and "interpreter shutdown" in str(exc)


def _default_scorer() -> Scorer:

    return score_result


async def _check_constraint(backend: JudgeBackend, request: JudgeRequest) -> None:
    """Before the run: the backend can hold answers to this template's format (else it says why)."""
    check = getattr(backend, "check_constraint", None)
    if check is None:
        raise ConfigError(f"judge {backend.name!r}: its backend cannot constrain answers; "
                          "run without --constrain, or use a local GGUF or an OpenAI-compatible judge")
    await check(request)


def _sampling_record(request: JudgeRequest) -> dict[str, Any]:
    return {**request.sampling.to_dict(), "seed": request.seed}


def _describe(exc: BaseException) -> str:
    """The message a user sees: a DialjudgeError's own text, else the exception's type and text."""
    if isinstance(exc, DialjudgeError):
        return str(exc)
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
