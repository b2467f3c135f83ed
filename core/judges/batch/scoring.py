"""Importing a batch run's answer files: matched to the planned judgments by custom id and scored as a
live run's answers are.

Each readable answer is read by the judge's own backend (``OpenAIBackend.result_from_body``: the same
checks, log-probability reading, valid mass and lower bound as a live answer) into the response cache
under its judgment's cache key; then the run engine resumes the run with the cache on, so the answers
are scored, stored and counted by the engine's own code. The judgments still without an answer meet a
stand-in judge that has none to give (:class:`AwaitingAnswers`): the engine leaves them pending, as it
leaves a cancelled run's. An error or expired line becomes a failed request (``runs retry`` writes it
into a new batch file); a line that cannot be matched or read is counted and named, never scored.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import ConfigError, RequestInterrupted
from ...model import Dataset, Example
from ..run.engine import RunEngine, _sampling_record
from ..run.events import RunEvent, RunStatus, RunSummary
from ..run.failures import RequestFailed
from ..run.options import EngineOptions
from ..run.work_plan import PreparedWork, Work
from ..store.records import JudgmentWrite
from ..store.run_store import JudgmentKey, RunRecord, RunStore
from ..types import BackendResult, JudgeBackend, JudgeRequest, Judgment, RenderedPrompt, ScoringMode
from .answers import AnswerLine, AnswerProblem, file_sha256, read_answers, where
from .requests import BatchPlan, batch_info, custom_id, parse_custom_id, plan_batch


class AwaitingAnswers:
    """A judge whose answers come from a batch file: the engine finds them in the response cache; a
    judgment without one is left pending (a dropped request, never a failure)."""

    max_concurrency = 1

    def __init__(self, name: str, identity: str) -> None:
        self.name = name
        self.identity = identity

    async def open(self) -> None:
        return None

    async def close(self) -> None:
        return None

    async def check_mode(self, mode: ScoringMode, top_k: int) -> None:
        return None

    async def check_constraint(self, request: JudgeRequest) -> None:
        return None

    async def complete(self, request: JudgeRequest) -> BackendResult:
        raise RequestInterrupted("no batch answer for this judgment yet")


@dataclass
class AnswersImport:
    """What importing answer files did to a batch run."""

    run_id: int
    status: RunStatus
    total: int
    #: Judgments stored (scored or failed) after the import, and scored by it.
    stored: int
    scored_now: int
    #: Lines counted and named: left out (not JSON, truncated, malformed, other run, unmatched,
    #: duplicate, already answered) or stored as failed requests (error, expired, unreadable).
    problems: list[AnswerProblem] = field(default_factory=list)
    #: Models the answers say answered them, when another than the planned one did.
    other_models: dict[str, int] = field(default_factory=dict)
    planned_models: dict[str, str] = field(default_factory=dict)
    files: list[dict[str, Any]] = field(default_factory=list)
    #: Custom ids of judgments still without an answer (the first few) and their number.
    missing: list[str] = field(default_factory=list)
    summary: RunSummary | None = None

    @property
    def counts(self) -> dict[str, int]:
        return dict(Counter(p.kind for p in self.problems))

    @property
    def awaiting(self) -> int:
        return self.total - self.stored


def import_answers(store: RunStore, record: RunRecord, dataset: Dataset, paths: Sequence[Path],
                   backends: Mapping[str, JudgeBackend], *, fewshot_pool: Sequence[Example] | None = None,
                   on_event: Callable[[RunEvent], None] | None = None) -> AnswersImport:
    """Import ``paths`` (in any order, partial, already imported: harmless) into batch run ``record``."""
    info = batch_info(record)
    if info is None:
        raise ConfigError(f"run {record.id} was not written to a batch file (judge --batch-out); its answers "
                          "cannot be imported")
    config = record.run_config
    seed = info.get("context_order_seed")
    plan = plan_batch(config, dataset, backends, context_order_seed=seed, fewshot_pool=fewshot_pool,
                      pending=lambda wanted: store.judgments.pending(record.id, wanted, retry_failed=True))
    work_of = {plan.place(w): w for w in plan.works}
    report = AnswersImport(record.id, record.status, len(plan.wanted), 0, 0,
                           planned_models={name: b.model for name, b in plan.backends.items()})
    answers: dict[str, tuple[Work, BackendResult]] = {}
    errors: dict[str, tuple[Work, str]] = {}
    for path in paths:
        report.files.append(_read_file(Path(path), record.id, plan, work_of, answers, errors, report))
    errors = {cid: e for cid, e in errors.items() if cid not in answers}  # answered in another file
    store.cache.put_cached_responses((work.cache_key, work.backend.identity, result)
                                     for work, result in answers.values())
    store.judgments.add_judgments(record.id, (
        JudgmentWrite(_failed(work, reason), work.cache_key, True, None, work.backend.identity)
        for work, reason in errors.values()))
    in_hand = {work.cache_key: result for work, result in answers.values()}
    report.summary = _score(store, record, plan, dataset, seed, fewshot_pool, on_event, in_hand)
    # Scored through the cache, but asked (and paid for) by this run: its cost and usage count them.
    store.judgments.mark_answered_anew(record.id, (JudgmentKey(work.request.item_id, work.variant.label,
                                                               work.request.repeat) for work, _ in answers.values()))
    report.scored_now = len(answers)
    _finish(store, record, plan, report)
    store.runs.set_config_entry(record.id, "batch", {**info, "imports": [*info.get("imports", []), *report.files]})
    return report


def _read_file(path: Path, run_id: int, plan: BatchPlan, work_of: Mapping[int, Work],
               answers: dict[str, tuple[Work, BackendResult]], errors: dict[str, tuple[Work, str]],
               report: AnswersImport) -> dict[str, Any]:
    """One answer file into ``answers`` and ``errors`` (by custom id); returns its provenance."""
    lines = 0
    endpoints: dict[str, str] = {}
    providers: Counter[str] = Counter()
    models: Counter[str] = Counter()
    for entry in read_answers(path):
        lines += 1
        if isinstance(entry, AnswerProblem):
            report.problems.append(entry)
            continue
        providers[_provider(entry.line_id)] += 1
        work, problem = _match(path, entry, run_id, plan, work_of)
        if problem is not None:
            report.problems.append(problem)
            continue
        assert work is not None
        cid = entry.custom_id
        if cid in answers or (entry.error is not None and cid in errors):
            report.problems.append(AnswerProblem("duplicate", where(path, entry.line, custom_id=cid),
                                                 "a second line for this custom id: left out (the first is kept)"))
            continue
        if entry.body is None:
            place = where(path, entry.line, custom_id=cid)
            kind = "expired" if entry.expired else "error"
            report.problems.append(AnswerProblem(kind, place, f"{entry.error}; stored as a failed request "
                                                              "(runs retry writes it into a new batch file)"))
            errors[cid] = (work, f"batch answer {entry.error} ({place})")
            continue
        model = entry.body.get("model")
        if isinstance(model, str):
            models[model] += 1
            planned = plan.backends[work.variant.judge.name].model
            if not _same_model(model, planned):
                report.other_models[model] = report.other_models.get(model, 0) + 1
        backend = plan.backends[work.variant.judge.name]
        endpoint = endpoints.get(work.variant.label)
        if endpoint is None:  # one endpoint per judge variant in a run (its mode and continuation decide it)
            endpoint = endpoints[work.variant.label] = backend.request_body(work.request)[0]
        try:
            result = backend.result_from_body(work.request, entry.body, path=endpoint)
        except RequestFailed as exc:
            report.problems.append(AnswerProblem("unreadable", where(path, entry.line, "response.body", cid),
                                                 f"{exc}; stored as a failed request"))
            errors[cid] = (work, f"batch answer unreadable: {exc} ({where(path, entry.line, custom_id=cid)})")
            continue
        answers[cid] = (work, result)
        errors.pop(cid, None)
    return {"file": str(path), "sha256": file_sha256(path), "lines": lines,
            "provider": providers.most_common(1)[0][0] if providers else "unknown",
            "models": dict(models)}


def _match(path: Path, entry: AnswerLine, run_id: int, plan: BatchPlan, work_of: Mapping[int, Work]
           ) -> tuple[Work | None, AnswerProblem | None]:
    cid = entry.custom_id

    def at_custom_id() -> str:  # written out only for a line that is named
        return where(path, entry.line, "custom_id", cid)

    parsed = parse_custom_id(cid)
    if parsed is None:
        return None, AnswerProblem("unmatched", at_custom_id(), "not a custom id dialjudge wrote")
    run, index, key = parsed
    if run != run_id:
        return None, AnswerProblem("other run", at_custom_id(), f"answers run {run}, not run {run_id}: left out")
    if index >= len(plan.wanted):
        return None, AnswerProblem("unmatched", at_custom_id(), f"run {run_id} plans {len(plan.wanted)} "
                                                                f"judgments; there is no judgment {index}")
    work = work_of.get(index)
    if work is None:
        return None, AnswerProblem("already answered", where(path, entry.line, custom_id=cid),
                                   "this judgment is stored already (an answer file imported again?): left out")
    if work.cache_key[:len(key)] != key or not key:
        return None, AnswerProblem("unmatched", at_custom_id(), "answers another request than the one planned now "
                                                                "(the dataset, template or judge changed since "
                                                                "the export): left out")
    return work, None


def _same_model(reported: str, planned: str) -> bool:
    """OpenAI answers with the dated snapshot of the model asked for (gpt-4o-mini -> gpt-4o-mini-2024-07-18)."""
    return reported == planned or reported.startswith(planned + "-")


def _provider(line_id: str) -> str:
    if line_id.startswith("batch_req_"):
        return "OpenAI Batch API"
    if line_id.startswith("vllm"):
        return "vLLM run-batch"
    return "unknown"


def _failed(work: Work, reason: str) -> Judgment:
    request = work.request
    return Judgment(item_id=request.item_id, judge=work.variant.label, mode=request.mode,
                    prompt_hash=request.prompt.hash, raw_output="", score=None, normalized=None, error=reason,
                    repeat=request.repeat, sampling=_sampling_record(request))


def _score(store: RunStore, record: RunRecord, plan: BatchPlan, dataset: Dataset, seed: int | None,
           fewshot_pool: Sequence[Example] | None, on_event: Callable[[RunEvent], None] | None,
           in_hand: Mapping[str, BackendResult]) -> RunSummary:
    """The engine resumes the run: the answers now in the response cache are scored and stored (handed to
    it with the work the plan made, not rendered and read back again)."""
    prompts: dict[tuple[str, str], RenderedPrompt] = {
        (w.variant.label, w.example.id): w.request.prompt for w in plan.works}
    stand_ins = {name: AwaitingAnswers(name, backend.identity) for name, backend in plan.backends.items()}

    def rendered(variant: Any, example: Example) -> RenderedPrompt:
        return prompts[(variant.label, example.id)]

    options = EngineOptions(renderer=rendered, fewshot_pool=fewshot_pool, run_id=record.id, use_cache=True,
                            retry_failed=True, context_order_seed=seed,
                            prepared=PreparedWork(plan.works, in_hand))
    engine = RunEngine(plan.config, dataset, stand_ins, store, options)
    if on_event is not None:
        engine.subscribe(on_event)
    return asyncio.run(engine.run())


def _finish(store: RunStore, record: RunRecord, plan: BatchPlan, report: AnswersImport) -> None:
    """Finished once every judgment is stored (some may have failed); else awaiting the rest."""
    done = store.judgments.done_keys(record.id, retry_failed=False)
    report.stored = len(done)
    status = RunStatus.FINISHED if report.stored >= report.total else RunStatus.AWAITING_ANSWERS
    store.runs.set_status(record.id, status)
    report.status = status
    index = plan.index
    keys = {JudgmentKey(w.request.item_id, w.variant.label, w.request.repeat): w for w in plan.works}
    report.missing = [custom_id(record.id, index[key], work.cache_key)
                      for key, work in keys.items() if key not in done][:5]


__all__ = ["AnswersImport", "AwaitingAnswers", "import_answers"]

