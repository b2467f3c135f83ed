"""Running LLM judges on a dataset, for the headless command and the app alike.

``plan_run`` turns what a user typed (template, judge and persona names, a
few-shot spec) into a validated :class:`RunConfig`; ``execute_run`` drives the
engine; ``run_scores`` reads a run's judgments back as evaluator columns that
the agreement statistics take beside the reference-based metrics.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from .config import Config
from .errors import ConfigError
from .judges.events import RunEvent, RunSummary
from .judges.runs import RunConfig
from .judges.store import RunStore
from .judges.types import JudgeBackend, ScoringMode
from .model import Dataset, Scale, ScaleKind

NO_PERSONA = "none"
POOL = "pool"


@dataclass(frozen=True)
class RunPlan:
    config: RunConfig
    quality: str | None
    subset: str


def infer_quality(dataset: Dataset, *, aspect: str | None, kpi: str | None) -> str | None:
    """The human-rated quality a judge's aspect or KPI is compared with: the KPI's, the aspect's,
    else Overall, else the first."""
    from .evaluation import resolve_quality

    for wanted in (kpi, aspect, "overall"):
        if wanted and resolve_quality(dataset, wanted) in dataset.qualities:
            return resolve_quality(dataset, wanted)
    return next(iter(dataset.qualities), None)


def preferred_mode(modes: Sequence[ScoringMode]) -> ScoringMode:
    """The mode a run uses unless told otherwise: probability scoring where the template
    supports it (fast, and every answer is a valid rating), else the template's first mode."""
    if ScoringMode.LOGPROB in modes:
        return ScoringMode.LOGPROB
    return modes[0] if modes else ScoringMode.GENERATE


def plan_run(dataset: Dataset, config: Config, *, template: str, judges: Sequence[str],
             mode: ScoringMode | str | None = None, aspect: str | None = None, kpi: str | None = None,
             quality: str | None = None, personas: Sequence[str] = (), fewshot: str = "none",
             subset: str | None = None, limit: int | None = None, repeats: int = 1, top_k: int = 0,
             item_ids: Sequence[str] = (), name: str = "", yes_label: str | None = None,
             pairs: Any = None) -> RunPlan:
    from .judges.fewshot import FewShotSetting
    from .judges.personas import load_personas
    from .judges.templates import get_template

    tpl = get_template(template, config.template_dirs)
    from .judges.pairwise import check_pairwise_plan

    pairs = check_pairwise_plan(tpl, pairs, fewshot)
    mode = preferred_mode(tpl.output.modes) if mode is None else ScoringMode(mode)
    if mode not in tpl.output.modes:
        supported = ", ".join(m.value for m in tpl.output.modes)
        raise ConfigError(f"template {tpl.name!r} does not support mode {mode.value!r} (it supports: {supported})")
    if tpl.needs_aspect and not aspect and quality and tpl.resolve_aspect(quality) is not None:
        aspect = quality  # the quality names the aspect ("Relevant" on FED -> the template's "relevant")
    if tpl.needs_aspect and not aspect:
        raise ConfigError(f"template {tpl.name!r} needs an aspect: {', '.join(tpl.aspects)}")
    if aspect and tpl.aspects and tpl.resolve_aspect(aspect) is None:
        raise ConfigError(f"template {tpl.name!r} has no aspect {aspect!r} (aspects: {', '.join(tpl.aspects)})")
    if tpl.needs_kpi and not kpi:
        raise ConfigError(f"template {tpl.name!r} needs a KPI: {', '.join(tpl.kpis)}")
    if kpi and tpl.kpis and tpl.resolve_kpi(kpi) is None:
        raise ConfigError(f"template {tpl.name!r} has no KPI {kpi!r} (KPIs: {', '.join(tpl.kpis)})")
    # An alias ("coherent", "harmful_input") must pick the same quality and KPI items as the name itself.
    aspect = tpl.resolve_aspect(aspect) or aspect
    kpi = tpl.resolve_kpi(kpi) or kpi

    known_personas = load_personas(config.template_dirs)
    chosen_personas: list[Any] = []
    for persona_name in personas:
        if persona_name == NO_PERSONA:
            chosen_personas.append(None)
        elif persona_name in known_personas:
            chosen_personas.append(known_personas[persona_name])
        else:
            raise ConfigError(f"no persona named {persona_name!r} (personas: {', '.join(known_personas)})")

    from .evaluation import resolve_quality

    quality = resolve_quality(dataset, quality) if quality else infer_quality(dataset, aspect=aspect, kpi=kpi)
    if quality is not None and quality not in dataset.qualities:
        raise ConfigError(f"{dataset.name} has no quality {quality!r} (qualities: {', '.join(dataset.qualities)})")
    if subset is None:
        # A KPI set holds items of several KPIs; a KPI run judges only its own items.
        kpi_tag = f"kpi:{kpi}" if kpi else None
        subset = f"tag:{kpi_tag}" if kpi_tag and kpi_tag in dataset.tags else "all"

    try:
        setting = FewShotSetting.parse(fewshot)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    run_config = RunConfig.build(
        dataset, tpl, [config.judge(j) for j in judges], personas=chosen_personas, fewshot=setting,
        mode=mode, aspect=aspect, kpi=kpi, quality=quality, subset=subset, limit=limit, repeats=repeats,
        top_k=top_k, item_ids=tuple(item_ids), name=name, yes_label=yes_label or None, pairs=pairs,
    )
    from .judges.render import pairwise_refusal

    pairwise = [ex.id for ex in run_config.select_items(dataset) if ex.is_pairwise]
    if pairwise and pairs is None:
        raise ConfigError(pairwise_refusal(tpl.name, pairwise))
    return RunPlan(run_config, quality, subset)


def build_backends(run_config: RunConfig, make: Callable[[Any], JudgeBackend] | None = None
                   ) -> dict[str, JudgeBackend]:
    if make is None:
        from .judges.backends import make_backend

        make = make_backend
    return {spec.name: make(spec.config) for spec in run_config.judges}


async def execute_run(run_config: RunConfig, dataset: Dataset, store: RunStore,
                      backends: Mapping[str, JudgeBackend], *, on_event: Callable[[RunEvent], None] | None = None,
                      **engine_options: Any) -> RunSummary:
    from .judges.engine import RunEngine

    engine = RunEngine(run_config, dataset, backends, store, **engine_options)
    if on_event is not None:
        engine.subscribe(on_event)
    return await engine.run()


def run_scores(store: RunStore, run_id: int, *, repeat: int = 0, with_pool: bool = True
               ) -> tuple[dict[str, dict[str, float | None]], dict[str, int]]:
    """A run's judges (and their mean pool) as evaluator columns of 0-1 scores, plus failure counts."""
    return judgment_columns(store.load_judgments(run_id, repeat=repeat), with_pool=with_pool)


def judgment_columns(table: Mapping[str, Mapping[str, Any]], *, with_pool: bool = True
                     ) -> tuple[dict[str, dict[str, float | None]], dict[str, int]]:
    """Judgments as loaded from the store (``{judge: {item: Judgment}}``) as evaluator columns."""
    scores: dict[str, dict[str, float | None]] = {}
    failures: dict[str, int] = {}
    for judge, judgments in table.items():
        scores[judge] = {item: j.normalized for item, j in judgments.items()}
        failures[judge] = sum(1 for j in judgments.values() if j.failed)
    if with_pool and len(table) > 1:
        from .judges.pool import PoolMethod, pool_scores

        pooled = pool_scores(dict(table), PoolMethod.MEAN)
        scores[POOL] = {item: p.value for item, p in pooled.items()}
        failures[POOL] = sum(1 for p in pooled.values() if p.value is None)
    return scores, failures


def is_label_quality(scale: Scale | None) -> bool:
    """Binary and categorical qualities are compared by agreement and kappa, not correlation."""
    return scale is not None and scale.kind in (ScaleKind.BINARY, ScaleKind.CATEGORICAL)


@dataclass(frozen=True)
class DrawSpread:
    """One judge's agreement with humans over several random few-shot draws (paper 003, 3.3)."""

    evaluator: str
    quality: str
    pearson: tuple[float, ...]
    spearman: tuple[float, ...]

    @staticmethod
    def _mean_std(values: Sequence[float]) -> tuple[float | None, float | None]:
        import statistics

        if not values:
            return None, None
        return statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else 0.0

    @property
    def pearson_mean_std(self) -> tuple[float | None, float | None]:
        return self._mean_std(self.pearson)

    @property
    def spearman_mean_std(self) -> tuple[float | None, float | None]:
        return self._mean_std(self.spearman)


def draw_spread(store: RunStore, run_ids: Sequence[int], dataset: Dataset, quality: str, *,
                subset: str = "all") -> list[DrawSpread]:
    """Each judge's Pearson and Spearman with the humans in every run (one run per few-shot
    draw), for a mean ± std; a draw where a coefficient is undefined is left out of it."""
    from .evaluation import evaluate

    per_judge: dict[str, tuple[list[float], list[float]]] = {}
    for run_id in run_ids:
        scores, failures = run_scores(store, run_id)
        report = evaluate(dataset, qualities=[quality], subset=subset, extra_scores=scores, failures=failures,
                          include_metrics=False, n_boot=0)
        for rec in report.records:
            if rec["is_ceiling"]:
                continue
            pearson, spearman = per_judge.setdefault(str(rec["evaluator"]), ([], []))
            if rec.get("pearson") is not None:
                pearson.append(float(rec["pearson"]))
            if rec.get("spearman") is not None:
                spearman.append(float(rec["spearman"]))
    return [DrawSpread(name, quality, tuple(p), tuple(s)) for name, (p, s) in per_judge.items()]
