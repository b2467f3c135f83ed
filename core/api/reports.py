"""The reports that follow a judge run, decided here for every front end.

:func:`reports_after_run` says which reports apply to a run (from its
configuration, its quality's scale and how many runs and judges there are);
:func:`run_reports` computes them. A front end shows what it is handed: the
command line prints the tables (or writes the agreement tables to a file), the
app shows them on its screens. Whether a report applies is never decided by a
front end.
"""

from __future__ import annotations

import enum
import statistics
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field

from ..adversarial.builder import CONTRADICTS
from ..adversarial.discernment import DiscernmentRow, discernment_table
from ..evaluation import EvaluationReport, evaluate, split_subsets
from ..judges.post_run.labels import LabelReport, run_label_report
from ..judges.post_run.pairwise_report import PairwiseReport, pairwise_report
from ..judges.post_run.pool import PoolReport, Stability, pool_report, stability
from ..judges.prompts.constraint import AnswerConstraint
from ..judges.run.config import RunConfig
from ..judges.run.events import RunSummary
from ..judges.store.run_store import RunStore
from ..judges.store.status import RunStatus
from ..judges.types import Judgment, ScoringMode
from ..model import Aggregation, Dataset, Example, ScaleKind, is_label_quality
from ..planning import RunPlan
from ..run_columns import POOL, judgment_columns, run_scores
from ..stats.baselines import (
    LENGTH_EVALUATOR,
    CertaintySplit,
    LengthBias,
    annotator_spread,
    certainty_split,
    length_bias,
    length_scores,
)
from ..stats.human import human_labels
from ..stats.interjudge import InterJudgeMatrix, inter_judge_matrix
from ..stats.label_agreement import TieRule
from ..subsets import Subset
from .profiles import profile_metric_ids
from .requests import AgreementRequest

JudgmentTable = dict[str, dict[str, Judgment]]


class Report(str, enum.Enum):
    """A report that may follow a run."""

    #: Every judge (and the metrics) against the humans by correlation, with the human ceiling.
    AGREEMENT = "agreement"
    #: Judges against the human majority label (label qualities), with the label ceiling.
    LABELS = "labels"
    #: % agreement and Cohen's κ with max-voted humans, each judge and the judges' vote.
    LABEL_AGREEMENT = "label-agreement"
    #: The judges against each other (does pooling them make sense?).
    INTER_JUDGE = "inter-judge"
    #: Verbosity bias, and agreement where the annotators agree and where they do not.
    LENGTH_AND_CERTAINTY = "length-and-certainty"
    #: Self-agreement over repeats.
    STABILITY = "stability"
    #: Correlation as mean ± std over random few-shot draws.
    DRAW_SPREAD = "draw-spread"
    #: Pairwise verdicts, and the candidates' win rates and Bradley-Terry scores against the humans.
    PAIRWISE = "pairwise"


#: What a written file holds: the tables, not the terminal's diagnostics.
FILE_REPORTS = frozenset({Report.AGREEMENT, Report.LABELS, Report.PAIRWISE})


def reports_after_run(config: RunConfig, dataset: Dataset, *, runs: int = 1, judges: int | None = None,
                      for_file: bool = False) -> tuple[Report, ...]:
    """The reports that follow a run of ``config`` (``runs`` > 1: few-shot draws; ``judges``: judge
    columns, default the run's judges); ``for_file``: only what a written file holds."""
    quality = config.quality
    scale = dataset.qualities.get(quality) if quality else None
    n_judges = len(config.variants()) if judges is None else judges
    if config.pairs is not None:
        chosen = [Report.PAIRWISE]
    elif scale is not None and scale.kind is ScaleKind.CATEGORICAL:
        chosen = [Report.LABELS]  # labels without numbers: no correlation
    else:
        chosen = [Report.AGREEMENT]
        label = is_label_quality(scale)
        if n_judges > 1 and not label:
            chosen.append(Report.INTER_JUDGE)
        # A judge's label means "good reply"; an adversarial set's label means "contradicts the facts".
        # Agreement between the two is meaningless: the discernment table measures it.
        if label and quality != CONTRADICTS:
            chosen += [Report.LABEL_AGREEMENT, Report.LABELS]
        if quality and not label and not only_dialogs(dataset):
            chosen.append(Report.LENGTH_AND_CERTAINTY)
        if config.repeats > 1:
            chosen.append(Report.STABILITY)
        if runs > 1 and quality:
            chosen.append(Report.DRAW_SPREAD)
    return tuple(r for r in chosen if not for_file or r in FILE_REPORTS)


def only_dialogs(dataset: Dataset) -> bool:
    """Every item rates a whole dialog (no candidate response)."""
    return bool(len(dataset)) and all(ex.candidate is None for ex in dataset)


def agreement_levels(choice: str, dataset: Dataset) -> list[str]:
    """The levels an agreement table shows for a --level choice (turn, dialog, system, both)."""
    dialogs = only_dialogs(dataset)
    if choice == "both":
        return ["dialog" if dialogs else "turn", "system"]
    if choice == "turn" and dialogs:
        return ["dialog"]  # the default level, named for what a dialog-only set holds
    return [choice]


def run_note(config: RunConfig, run_id: int) -> str:
    """One line that says which run a table shows and how it judged."""
    if config.pairs is not None:
        return (f"run {run_id}: template {config.template}, pairwise ({config.pairs.spec} pairs, seed "
                f"{config.pairs.seed}), {config.mode.value}")
    mode = config.mode.value
    if config.mode is ScoringMode.LOGPROB and config.top_k:
        mode += f", top-{config.top_k}"
    if config.constrain is not AnswerConstraint.OFF:
        mode += f", constrained ({config.constrain.value})"
    return (f"run {run_id}: template {config.template}, mode {mode}"
            + (f", aspect {config.aspect}" if config.aspect else "")
            + (f", KPI {config.kpi}" if config.kpi else "")
            + f", few-shot {config.fewshot.spec}")


def label_run_note(config: RunConfig, run_id: int) -> str:
    return (f"run {run_id}: template {config.template}, mode {config.mode.value}"
            + (f", yes label {config.yes_label!r}" if config.yes_label else ""))


@dataclass(frozen=True)
class LengthAndCertainty:
    """One judge's verbosity bias and its agreement split by how much the annotators agree."""

    judge: str
    bias: LengthBias
    split: CertaintySplit


@dataclass(frozen=True)
class DrawSpread:
    """One judge's agreement with humans over several random few-shot draws (Huynh et al.)."""

    evaluator: str
    quality: str
    pearson: tuple[float, ...]
    spearman: tuple[float, ...]

    @staticmethod
    def _mean_std(values: Sequence[float]) -> tuple[float | None, float | None]:
        if not values:
            return None, None
        return statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else 0.0

    @property
    def pearson_mean_std(self) -> tuple[float | None, float | None]:
        return self._mean_std(self.pearson)

    @property
    def spearman_mean_std(self) -> tuple[float | None, float | None]:
        return self._mean_std(self.spearman)


@dataclass
class RunReports:
    """Every report that follows one run (those that do not apply are None)."""

    run_id: int
    plan: RunPlan
    dataset: Dataset
    #: Which reports apply, in the order a front end shows them.
    reports: tuple[Report, ...]
    #: The run's judgments ({judge: {item: Judgment}}), its judge columns and failure counts.
    judgments: JudgmentTable
    scores: dict[str, dict[str, float | None]]
    failures: dict[str, int]
    note: str
    agreement: EvaluationReport | None = None
    labels: LabelReport | None = None
    label_agreement: PoolReport | None = None
    inter_judge: InterJudgeMatrix | None = None
    length_and_certainty: list[LengthAndCertainty] = field(default_factory=list)
    stability: dict[str, Stability] = field(default_factory=dict)
    draw_spread: list[DrawSpread] = field(default_factory=list)
    pairwise: PairwiseReport | None = None
    #: The run ids of the few-shot draws (one id: no draws).
    draw_runs: tuple[int, ...] = ()

    @property
    def label_quality(self) -> bool:
        """The run's quality is compared label against label (core.model.is_label_quality)."""
        quality = self.plan.quality
        return is_label_quality(self.dataset.qualities.get(quality) if quality else None)


def run_reports(store: RunStore, plan: RunPlan, dataset: Dataset, run_ids: Sequence[int],
                request: AgreementRequest, *, for_file: bool = False) -> RunReports:
    """The reports that follow run ``run_ids[0]`` (the others: more few-shot draws of the same plan)."""
    run_id = run_ids[0]
    judgments = store.judgments.load_judgments(run_id)
    scores, failures = judgment_columns(judgments)
    judge_columns = {name: column for name, column in scores.items() if name != POOL}
    chosen = reports_after_run(plan.config, dataset, runs=len(run_ids), judges=len(judge_columns),
                               for_file=for_file)
    out = RunReports(run_id, plan, dataset, chosen, judgments, scores, failures, run_note(plan.config, run_id),
                     draw_runs=tuple(run_ids))
    quality = plan.quality
    if Report.PAIRWISE in chosen:
        out.pairwise = pairwise_report(plan.config, dataset, judgments, aggregation=request.aggregation)
        out.agreement = pairwise_agreement(out.pairwise, plan, dataset, request, run_id)
        return out
    if Report.AGREEMENT in chosen:
        out.agreement = run_agreement(plan, dataset, scores, failures, request, note=out.note)
    if Report.LABELS in chosen:
        out.labels = run_label_report(plan.config, dataset, judgments, yes_label=plan.config.yes_label,
                                      tie_rule=request.tie_rule, n_boot=request.n_boot, seed=request.seed)
    if quality is None:
        return out
    if Report.LABEL_AGREEMENT in chosen:
        out.label_agreement = pool_report(judgments, dataset, quality)
    if Report.INTER_JUDGE in chosen:
        out.inter_judge = inter_judge_matrix(judge_columns)
    if Report.LENGTH_AND_CERTAINTY in chosen:
        out.length_and_certainty = length_and_certainty(dataset, scores, quality, plan.subset, seed=request.seed)
    if Report.STABILITY in chosen:
        scale = dataset.qualities.get(quality)
        out.stability = stability(store.judgments.load_repeats(run_id), binary=is_label_quality(scale), dataset=dataset,
                                  quality=quality)
    if Report.DRAW_SPREAD in chosen:
        out.draw_spread = draw_spread(store, run_ids, dataset, quality, subset=plan.subset)
    return out


def judged_items(config: RunConfig, dataset: Dataset) -> Dataset:
    """The items a run judges (its subset, ``--limit`` and item list): a run is compared on these."""
    return dataset.subset(config.select_items(dataset))


def run_agreement(plan: RunPlan, dataset: Dataset, scores: Mapping[str, Mapping[str, float | None]],
                  failures: Mapping[str, int], request: AgreementRequest, *, note: str = "") -> EvaluationReport:
    """The run's judges (and the metrics) against the humans on the items the run judged; the human
    ceiling is computed on the items the judges are compared on (core.evaluation.compared_items)."""
    # The judges on the items this run judged: --limit must not count the others as excluded.
    judged = judged_items(plan.config, dataset)
    qualities = list(request.qualities) or ([plan.quality] if plan.quality else None)
    subsets = split_subsets(judged, plan.subset)
    levels = agreement_levels(request.level, dataset)
    report = evaluate(judged, qualities=qualities, subset=subsets[0], extra_subsets=subsets[1:], levels=levels,
                      aggregation=request.aggregation, judge_scores=scores, failures=failures,
                      include_metrics=False, n_boot=request.n_boot, seed=request.seed, include_length=True)
    if request.include_metrics:
        # The metrics on every item of the subsets, as the app's Scores screen, `dialjudge metrics`
        # and `runs export --with-metrics` show them; each row says its n.
        metrics = evaluate(dataset, qualities=report.qualities, subset=subsets[0], extra_subsets=subsets[1:],
                           levels=levels, aggregation=request.aggregation, include_metrics=True,
                           metric_ids=profile_metric_ids(request.metric_profile),
                           n_boot=request.n_boot, seed=request.seed)
        _put_metrics_first(report, metrics)
    if note:
        report.notes.insert(0, note)
    return report


def _put_metrics_first(report: EvaluationReport, metrics: EvaluationReport) -> None:
    """The metric rows of ``metrics`` ahead of ``report``'s rows, subset by subset."""
    rows = [r for r in metrics.records if not r["is_ceiling"]]
    report.records = [r for subset in report.subsets
                      for r in [*(m for m in rows if m["subset"] == subset),
                                *(j for j in report.records if j["subset"] == subset)]]
    report.scores = {**metrics.scores, **report.scores}
    report.evaluators = [*metrics.evaluators, *report.evaluators]
    # Notes about the metrics (no references, WordNet) first; the human-label note once.
    report.notes = [n for n in metrics.notes if n not in report.notes] + report.notes


def pairwise_agreement(report: PairwiseReport, plan: RunPlan, dataset: Dataset, request: AgreementRequest,
                       run_id: int) -> EvaluationReport:
    """The candidates' pairwise scores (win rate, Bradley-Terry) against the humans, on the compared candidates."""
    candidates = dataset.subset(list(report.compared))
    qualities = list(request.qualities) or ([plan.quality] if plan.quality else None)
    agreement = evaluate(candidates, qualities=qualities, aggregation=request.aggregation,
                         judge_scores=report.score_columns(), failures=report.column_failures(),
                         include_metrics=request.include_metrics, n_boot=request.n_boot, seed=request.seed,
                         metric_ids=profile_metric_ids(request.metric_profile))
    agreement.notes.insert(0, run_note(plan.config, run_id))
    return agreement


def _numeric_human(examples: Sequence[Example], quality: str) -> dict[str, float | None]:
    return {i: (float(v) if isinstance(v, (int, float)) else None)
            for i, v in human_labels(examples, quality).values.items()}


def length_and_certainty(dataset: Dataset, scores: Mapping[str, Mapping[str, float | None]], quality: str,
                         subset: str, *, seed: int = 0) -> list[LengthAndCertainty]:
    """Verbosity bias and agreement split by human certainty, one row per judge."""
    selected = Subset(subset).select(dataset.examples)
    human = _numeric_human(selected, quality)
    lengths, spread = length_scores(selected), annotator_spread(selected, quality)
    groups: dict[str, Hashable] = {ex.id: ex.group_id for ex in selected}
    return [LengthAndCertainty(judge, length_bias(column, human, lengths, evaluator=judge, quality=quality),
                               certainty_split(column, human, spread, groups, evaluator=judge, quality=quality,
                                               n_boot=0, seed=seed))
            for judge, column in scores.items()]


def metric_length_bias(dataset: Dataset, report: EvaluationReport, subset: str) -> list[LengthBias]:
    """Each evaluator's Spearman ρ with the response length beside the humans', and its agreement
    with the humans once length is partialled out, for every numeric quality of ``report``."""
    selected = Subset(subset).select(dataset.examples)
    lengths = length_scores(selected)
    rows = []
    for quality in report.qualities:
        if not dataset.qualities[quality].is_numeric:
            continue
        human = _numeric_human(selected, quality)
        rows += [length_bias(column, human, lengths, evaluator=name, quality=quality)
                 for name, column in report.scores.items() if name != LENGTH_EVALUATOR]
    return rows


def discernment(dataset: Dataset, subset: str, scores: Mapping[str, Mapping[str, float | None]]
                 ) -> list[DiscernmentRow]:
    """How well each evaluator tells a subset's adversarial candidates from their originals."""
    return discernment_table(dataset.subset(Subset(subset).select(dataset)), scores)


def draw_spread(store: RunStore, run_ids: Sequence[int], dataset: Dataset, quality: str, *,
                subset: str = "all") -> list[DrawSpread]:
    """Each judge's Pearson and Spearman with the humans in every run (one run per few-shot
    draw), for a mean ± std; a draw where a coefficient is undefined is left out of it."""
    per_judge: dict[str, tuple[list[float], list[float]]] = {}
    for run_id in run_ids:
        scores, failures = run_scores(store, run_id)
        report = evaluate(dataset, qualities=[quality], subset=subset, judge_scores=scores, failures=failures,
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


def run_finished(summaries: Sequence[RunSummary], *, stopped: bool = False) -> bool:
    """Every run of a plan (every few-shot draw) finished, or a stop rule ended it on purpose."""
    return stopped or all(s.status == RunStatus.FINISHED for s in summaries)


__all__ = ["Report", "FILE_REPORTS", "reports_after_run", "run_reports", "RunReports", "run_agreement",
           "pairwise_agreement", "judged_items", "agreement_levels", "only_dialogs", "run_note", "label_run_note",
           "LengthAndCertainty", "length_and_certainty", "metric_length_bias", "DrawSpread", "draw_spread",
           "run_finished", "discernment", "TieRule", "Aggregation"]
