"""Planning and executing a judge run: the one path from a :class:`RunRequest` to judgments in the store.

``plan_run`` validates every choice of the request (template, judges, mode and
constraint, personas, few-shot, pairs, yes label, the items to judge) into a
:class:`RunPlan`; nothing patches the plan afterwards. ``open_run`` builds the
engine for a plan (a fresh run, a resumed one, or a retry of a run's failed
judgments) with a :class:`~core.api.display.RunDisplay` subscribed; the caller
awaits ``engine.run()`` and may ``engine.cancel()`` it from another thread.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..config import Config, JudgeConfig
from ..errors import ConfigError
from ..judges.backends import make_backend
from ..judges.post_run.labels import LabelMappingError, label_mapping
from ..judges.post_run.pairwise_report import candidate_items
from ..judges.post_run.retry import check_retryable
from ..judges.prompts.constraint import AnswerConstraint
from ..judges.prompts.fewshot import FewShotSetting, random_settings
from ..judges.prompts.render import resolve_output
from ..judges.prompts.templates import parse_template
from ..judges.run.config import RunConfig
from ..judges.run.engine import RunEngine, identical_finished_run
from ..judges.run.events import RunSummary
from ..judges.run.options import EngineOptions
from ..judges.run.pairwise import PairSetting, plan_pairs
from ..judges.run.stopping import StopRule
from ..judges.store.run_store import RunRecord, RunStore
from ..judges.types import JudgeBackend
from ..model import Aggregation, Dataset, is_label_quality
from ..planning import RunPlan
from ..planning import plan_run as plan_run_config
from ..run_columns import run_scores
from ..stats.human import human_labels
from .display import RunDisplay
from .requests import RunRequest, StopRequest

__all__ = ["RunPlan", "plan_run", "plan_runs", "find_resumable", "build_backends", "open_run", "execute_run",
           "EngineOptions", "stop_rule_for", "RetryPlan", "prepare_retry", "pair_plan_text"]


def plan_run(request: RunRequest, dataset: Dataset, config: Config, *, fewshot: str | None = None) -> RunPlan:
    """The run ``request`` asks for on ``dataset``, validated; a :class:`ConfigError` names what is wrong.

    ``fewshot`` replaces the request's few-shot spec (one random draw of :func:`plan_runs`)."""
    config = _with_extra_judges(config, request.extra_judges)
    try:
        constrain = AnswerConstraint(request.constrain)
    except ValueError:
        choices = ", ".join(c.value for c in AnswerConstraint)
        raise ConfigError(f"constrain must be one of {choices}, not {request.constrain!r}") from None
    pairs = (PairSetting.parse(request.pairs, seed=request.pair_seed, both_orders=request.pair_both_orders)
             if request.pairwise else None)
    plan = plan_run_config(
        dataset, config, template=request.template, judges=list(request.judge_names), mode=request.mode,
        aspect=request.aspect, kpi=request.kpi, quality=request.quality, personas=request.personas,
        fewshot=request.fewshot if fewshot is None else fewshot, subset=request.subset, limit=request.limit,
        repeats=request.repeats, top_k=request.top_k, item_ids=request.item_ids, name=request.name,
        yes_label=request.yes_label, pairs=pairs, constrain=constrain, judge_defaults=request.judge_defaults)
    if not plan.config.select_items(dataset):  # fail before anything is judged
        raise ConfigError(f"subset {plan.subset!r} of {dataset.name} holds no items to judge")
    if request.yes_label:
        _check_yes_label(dataset, plan, request.yes_label)
    return plan


def plan_runs(request: RunRequest, dataset: Dataset, config: Config) -> list[RunPlan]:
    """One plan per few-shot draw (``request.fewshot_draws`` random draws), else the one plan."""
    if request.fewshot_draws <= 1:
        return [plan_run(request, dataset, config)]
    try:
        setting = FewShotSetting.parse(request.fewshot)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    if setting.method != "random":
        raise ConfigError(f"several few-shot draws need random:K few-shot (got {request.fewshot!r}); other "
                          "selections are deterministic, so every draw would be the same")
    return [plan_run(request, dataset, config, fewshot=str(s))
            for s in random_settings(setting.k, request.fewshot_draws, setting.seed)]


def _with_extra_judges(config: Config, extra: Sequence[JudgeConfig]) -> Config:
    """The config with the judges typed in on a form; a model file that is not there is refused now."""
    if not extra:
        return config
    for judge in extra:
        if judge.model_path and not Path(judge.model_path).is_file():
            raise ConfigError(f"{judge.model_path}: no such model file (judge {judge.name!r})")
    return dataclasses.replace(config, judges={**config.judges, **{j.name: j for j in extra}})


def _check_yes_label(dataset: Dataset, plan: RunPlan, yes_label: str) -> None:
    """A yes label that names no label of the quality is the user's error: say so before judging."""
    scale = dataset.qualities.get(plan.quality) if plan.quality else None
    if scale is None or not is_label_quality(scale):
        raise ConfigError(f"a yes label is for two-label qualities; {plan.quality!r} is not one")
    template = parse_template(plan.config.template_text, plan.config.template)
    assert plan.quality is not None
    try:
        label_mapping(resolve_output(template, quality=plan.quality, scale=scale), plan.config.mode, scale,
                      plan.quality, yes_label=yes_label, template=f"template {template.name!r}")
    except LabelMappingError as exc:
        raise ConfigError(str(exc)) from None


def pair_plan_text(plan: RunPlan, dataset: Dataset) -> str | None:
    """How many pairs a pairwise run asks, in which orders (None: not a pairwise run)."""
    setting = plan.config.pairs
    if setting is None:
        return None
    return f"pairwise: {plan_pairs(candidate_items(plan.config, dataset), setting).describe(setting)}"


def find_resumable(store: RunStore, plan: RunPlan) -> RunRecord | None:
    """An unfinished run of exactly this configuration, which the plan could continue."""
    return store.runs.find_resumable(plan.config.fingerprint)


def find_finished(store: RunStore, plan: RunPlan) -> RunRecord | None:
    """A finished run of exactly this configuration: started again (without asking for a fresh run, or
    giving a new name) it is shown, not duplicated (``EngineOptions(reuse_finished=True)`` does that)."""
    return identical_finished_run(store, plan.config)


def build_backends(run_config: RunConfig, make: Callable[[JudgeConfig], JudgeBackend] = make_backend
                   ) -> dict[str, JudgeBackend]:
    """One (unopened) backend per judge of the run; ``make`` is the app's injected factory."""
    return {spec.name: make(spec.config) for spec in run_config.judges}


def stop_rule_for(request: StopRequest, plan: RunPlan, dataset: Dataset, store: RunStore, *,
                  aggregation: Aggregation = Aggregation.MEAN) -> StopRule | None:
    """The stop rule ``request`` asks for on ``plan``'s items, or None when it asks for none."""
    if not request.asked:
        return None
    if plan.config.pairs is not None:
        raise ConfigError("the stop rule watches one score per item; a pairwise run judges pairs of items")
    if not plan.quality:
        raise ConfigError("the stop rule needs a human-rated quality")
    items = plan.config.select_items(dataset)
    labels = human_labels(items, plan.quality, aggregation).values
    human = {item: (float(v) if isinstance(v, (int, float)) else None) for item, v in labels.items()}
    baseline = None
    if request.baseline_run is not None:
        columns, _ = run_scores(store, request.baseline_run, with_pool=False)
        if not columns:
            raise ConfigError(f"run {request.baseline_run} has no judgments to compare with")
        label = plan.config.variants()[0].label
        baseline = columns.get(label) or next(iter(columns.values()))
    try:
        return StopRule(human, {ex.id: ex.group_id for ex in items}, ci_width=request.ci_width,
                        baseline=baseline, baseline_name=f"run {request.baseline_run}",
                        check_every=request.check_every, seed=request.seed)
    except ValueError as exc:
        raise ConfigError(f"stop rule: {exc}") from None


def open_run(config: RunConfig, dataset: Dataset, store: RunStore, backends: Mapping[str, JudgeBackend], *,
             display: RunDisplay | None = None, options: EngineOptions | None = None,
             retry: bool = False) -> RunEngine:
    """The engine for one run, ready to ``await engine.run()``: a new run (``options.resume`` False),
    the unfinished run of the same configuration (``options.resume``), run ``options.run_id``, or
    (``retry``) run ``options.run_id``'s failed judgments asked again past the response cache."""
    options = options or EngineOptions()
    if retry:
        if options.run_id is None:
            raise ConfigError("a retry names the run whose failed judgments it asks again")
        # Past the cache: it holds the very answers that failed.
        options = dataclasses.replace(options, use_cache=False, retry_failed=True)
    engine = RunEngine(config, dataset, backends, store, options)
    if display is not None:
        engine.subscribe(display.on_event)
    return engine


def execute_run(config: RunConfig, dataset: Dataset, store: RunStore, backends: Mapping[str, JudgeBackend], *,
                display: RunDisplay | None = None, options: EngineOptions | None = None,
                retry: bool = False) -> RunSummary:
    """Run to the end on this thread (the command line; the app runs :func:`open_run` on a worker)."""
    engine = open_run(config, dataset, store, backends, display=display, options=options, retry=retry)
    return asyncio.run(engine.run())


@dataclass(frozen=True)
class RetryPlan:
    """A stored run whose failed judgments were marked to be asked again."""

    run_id: int
    config: RunConfig
    failed: int


def prepare_retry(store: RunStore, run_id: int, dataset: Dataset) -> RetryPlan:
    """Check that run ``run_id`` can be retried on ``dataset`` and mark its failed judgments;
    then :func:`open_run` with ``retry=True`` asks them again."""
    check_retryable(store, run_id)
    config = store.runs.get_run(run_id).run_config
    if config.dataset != dataset.name:
        raise ConfigError(f"run {run_id} judged {config.dataset}, but {dataset.name} is open; open "
                          f"{config.dataset} first, then retry")
    failed = store.judgments.mark_failed_for_retry(run_id)
    return RetryPlan(run_id, config, failed)
