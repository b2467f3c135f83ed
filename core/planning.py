"""Planning a judge run: what a user chose (template, judges, personas, few-shot, ...) validated
into a :class:`RunConfig`, with every error naming the choice that is wrong.

The application layer (``core.api.runs``) turns a front end's request into these
arguments; the tuning search plans its variants here too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .config import Config, JudgeConfig
from .errors import ConfigError
from .evaluation import resolve_quality
from .judges.prompts.constraint import AnswerConstraint
from .judges.prompts.fewshot import FewShotSetting
from .judges.prompts.personas import Persona, load_personas
from .judges.prompts.templates import Template, get_template
from .judges.run.config import RunConfig
from .judges.run.pairwise import PairSetting, check_pairwise_plan
from .judges.types import ScoringMode
from .model import Dataset

NO_PERSONA = "none"


@dataclass(frozen=True)
class RunPlan:
    config: RunConfig
    quality: str | None
    subset: str


def infer_quality(dataset: Dataset, *, aspect: str | None, kpi: str | None) -> str | None:
    """The human-rated quality a judge's aspect or KPI is compared with: the KPI's, the aspect's,
    else Overall, else the first."""
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


@dataclass(frozen=True)
class Scoring:
    """How a run scores: its mode and whether generate mode's answers are held to the template's format."""

    mode: ScoringMode
    constrain: AnswerConstraint = AnswerConstraint.OFF
    #: Few-shot examples the judge needs for the template (a FewShotSetting spec; "none": none).
    fewshot: str = "none"


#: A judge's ``options.scoring`` way (core.config.SCORING_CHOICES) as a mode and a constraint.
_SCORING_OF = {
    "constrained": Scoring(ScoringMode.GENERATE, AnswerConstraint.ANSWER),
    "reasoning": Scoring(ScoringMode.GENERATE, AnswerConstraint.REASONING),
    **{m.value: Scoring(m) for m in ScoringMode},
}


def _judge_scoring(judge: JudgeConfig, template: str) -> Scoring | None:
    """What ``options.scoring`` names for ``template``: a way, or a table with ``way`` and ``fewshot``."""
    named = (judge.extra.get("scoring") or {}).get(template)
    if isinstance(named, str):
        return _SCORING_OF.get(named)
    if isinstance(named, Mapping) and named.get("way") in _SCORING_OF:
        return dataclasses.replace(_SCORING_OF[named["way"]], fewshot=str(named.get("fewshot", "none")))
    return None


def default_scoring(template: Template, judges: Sequence[JudgeConfig]) -> Scoring:
    """How a run of ``template`` scores when it names neither a mode nor a constraint: the way the
    judges' ``options.scoring`` names for this template (the bundled judge's was measured; see
    core.config.BUNDLED_SCORING), where every judge of the run names the same one the template
    offers; else the template's preferred mode. The Run screen's form, the Prompt lab's trial and a
    run all ask here, so they agree."""
    named = {_judge_scoring(judge, template.name) for judge in judges}
    if len(named) == 1:
        (chosen,) = named
        if chosen is not None and chosen.mode in template.output.modes:
            return chosen
    return Scoring(preferred_mode(template.output.modes))


def resolve_scoring(template: Template, judges: Sequence[JudgeConfig], *, mode: ScoringMode | str | None = None,
                    constrain: AnswerConstraint = AnswerConstraint.OFF, judge_defaults: bool = True) -> Scoring:
    """The scoring a run uses: what it asked for; a constraint alone implies generate mode; neither
    asked: the judges' default for the template (``judge_defaults`` False, as a protocol that names
    its own scoring asks: the template's preferred mode)."""
    if mode is None and constrain is AnswerConstraint.OFF:
        return default_scoring(template, judges) if judge_defaults else Scoring(preferred_mode(template.output.modes))
    if mode is None:
        return Scoring(ScoringMode.GENERATE, constrain)  # the constraint holds a generated answer
    return Scoring(ScoringMode(mode), constrain)


def plan_run(dataset: Dataset, config: Config, *, template: str, judges: Sequence[str],
             mode: ScoringMode | str | None = None, aspect: str | None = None, kpi: str | None = None,
             quality: str | None = None, personas: Sequence[str] = (), fewshot: str = "none",
             subset: str | None = None, limit: int | None = None, repeats: int = 1, top_k: int = 0,
             item_ids: Sequence[str] = (), name: str = "", yes_label: str | None = None,
             pairs: PairSetting | None = None, constrain: AnswerConstraint = AnswerConstraint.OFF,
             judge_defaults: bool = True) -> RunPlan:
    """A validated run configuration, or a :class:`ConfigError` that names the wrong choice.

    ``constrain`` holds generate mode's answers to the template's answer format (a run that asks
    for it and names no mode runs in generate mode). Naming neither, the run scores the way its
    judges do for this template (:func:`resolve_scoring`; ``judge_defaults`` False: the template's
    preferred mode)."""
    tpl = get_template(template, config.template_dirs)
    pairs = check_pairwise_plan(tpl, pairs, fewshot)
    judge_configs = [config.judge(j) for j in judges]
    scoring = resolve_scoring(tpl, judge_configs, mode=mode, constrain=constrain, judge_defaults=judge_defaults)
    mode, constrain = scoring.mode, scoring.constrain
    if fewshot == "none" and scoring.fewshot != "none" and tpl.accepts_examples and pairs is None:
        fewshot = scoring.fewshot  # the examples the judge's way of scoring this template needs
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
    chosen_personas: list[Persona | None] = []
    for persona_name in personas:
        if persona_name == NO_PERSONA:
            chosen_personas.append(None)
        elif persona_name in known_personas:
            chosen_personas.append(known_personas[persona_name])
        else:
            raise ConfigError(f"no persona named {persona_name!r} (personas: {', '.join(known_personas)})")

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
        dataset, tpl, judge_configs, personas=chosen_personas, fewshot=setting,
        mode=mode, aspect=aspect, kpi=kpi, quality=quality, subset=subset, limit=limit, repeats=repeats,
        top_k=top_k, item_ids=tuple(item_ids), name=name, yes_label=yes_label or None, pairs=pairs,
    )
    if constrain is not AnswerConstraint.OFF:
        run_config = dataclasses.replace(run_config, constrain=constrain)

    run_config.select_items(dataset)  # a mixture of pairs and single replies is refused here, before judging
    return RunPlan(run_config, quality, subset)


