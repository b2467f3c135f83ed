"""A jury of stored runs: several judges pooled into one, reported like any judge (``dialjudge jury``,
the Runs screen's key y, a leaderboard row with ``--jury``).

The members are judges of stored runs on one dataset (``RUN`` for every judge of a run, ``RUN:JUDGE``
for one); the jury judges every item at least one member judged. The pooling is
:mod:`core.stats.jury` (majority with abstentions and a stated tie rule, mean, or weights learned
on labelled items, cross-fitted by context). The report gives each member's and the jury's agreement
with the humans as every judge's table does (:func:`core.evaluation.evaluate`: Spearman with its CI
and n), the agreement on the scale's points with an exact CI, the panel's cost (the members' summed,
when every member's is known), and the jury's confidence (its members' agreement with it) with the
selective-trust threshold it supports on the labelled items.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..config import Config
from ..errors import ConfigError, DialjudgeError
from ..evaluation import evaluate, resolve_quality
from ..format import interval_text, number_text
from ..judges.post_run.cost import JudgeUsage, money_text, run_usage
from ..judges.store.run_store import RunStore
from ..model import Aggregation, Dataset, Example, Scale, ScaleKind
from ..stats.cascade import Proportion
from ..stats.jury import DEFAULT_FOLDS, TIE_RULE, JuryMethod, JuryScores, points_of, pool
from ..stats.selective import (
    DEFAULT_ALPHA,
    DEFAULT_DELTA,
    SelectiveThreshold,
    answer_confidence,
    selective_threshold,
)
from .labels_estimates import read_labels_file
from .leaderboard_columns import Evaluator, Usage, run_info
from .session import uses_store
from .stored import dataset_of_run

JURY_KIND = "jury"


# -- members ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Member:
    """One judge of one stored run: its 0-1 score per item (NaN: failed), its usage, its answer confidence."""

    run_id: int
    judge: str
    name: str
    scores: dict[str, float]
    confidence: dict[str, float]
    usage: JudgeUsage | None
    failures: int


@dataclass(frozen=True)
class Panel:
    dataset: Dataset
    quality: str
    scale: Scale
    members: tuple[Member, ...]
    #: The items at least one member judged, in the dataset's order.
    items: tuple[Example, ...]

    @property
    def points(self) -> tuple[float, ...]:
        return scale_points(self.scale)

    def matrix(self) -> np.ndarray:
        return np.array([[m.scores.get(ex.id, math.nan) for ex in self.items] for m in self.members])


def parse_members(specs: Sequence[str]) -> list[tuple[int, str | None]]:
    """``RUN`` or ``RUN:JUDGE`` (commas also separate: ``1,2,3``)."""
    out: list[tuple[int, str | None]] = []
    for spec in (s.strip() for text in specs for s in str(text).split(",")):
        if not spec:
            continue
        run, _, judge = spec.partition(":")
        try:
            out.append((int(run), judge or None))
        except ValueError:
            raise ConfigError(f"a jury member is RUN or RUN:JUDGE, not {spec!r}") from None
    return out


def scale_points(scale: Scale) -> tuple[float, ...]:
    """The scale's points as 0-1 positions (whole points of an ordinal scale, the ends of a pass/fail one;
    a continuous scale is read on five equal points)."""
    if scale.kind is ScaleKind.BINARY:
        return (0.0, 1.0)
    if scale.kind is ScaleKind.ORDINAL and scale.min is not None and scale.max is not None \
            and float(scale.min).is_integer() and float(scale.max).is_integer() and scale.max > scale.min:
        return tuple(scale.normalize(v) for v in range(int(scale.min), int(scale.max) + 1))
    return (0.0, 0.25, 0.5, 0.75, 1.0)


def load_panel(store: RunStore, specs: Sequence[str], *, quality: str | None = None,
               app_config: Config | None = None, dataset: Dataset | None = None, minimum: int = 2) -> Panel:
    """The members named, checked to be on one dataset, with their scores on the quality's scale."""
    config = app_config or Config()
    wanted = parse_members(specs)
    if len(wanted) < 1:
        raise ConfigError("name the runs whose judges to pool (RUN or RUN:JUDGE)")
    members: list[Member] = []
    first = None
    for run_id, judge in wanted:
        record = store.runs.get_run(run_id)
        run_config = record.run_config
        if first is None:
            first = record
            dataset = dataset_of_run(run_config, config, current=dataset)
        elif run_config.dataset != first.run_config.dataset:
            raise ConfigError(f"run {run_id} judged {run_config.dataset}, not {first.run_config.dataset}: "
                              "a jury's members judge the same dataset")
        judgments = store.judgments.load_judgments(run_id)
        if not judgments:
            raise DialjudgeError(f"run {run_id} has no judgments")
        if judge is not None and judge not in judgments:
            raise ConfigError(f"run {run_id} has no judge {judge!r} (judges: {', '.join(judgments)})")
        usage = {u.judge: u for u in run_usage(store, record, config.prices).judges}
        for name in [judge] if judge is not None else list(judgments):
            column = judgments[name]
            scores = {item: (math.nan if j.normalized is None else float(j.normalized)) for item, j in column.items()}
            confidence = {item: _confidence(j) for item, j in column.items()}
            label = f"run {run_id} {name}"
            members.append(Member(run_id, name, label, scores, confidence, usage.get(name),
                                  sum(1 for v in scores.values() if math.isnan(v))))
    assert dataset is not None and first is not None
    if len(members) < minimum:
        raise ConfigError(f"a jury needs at least {minimum} judges; the runs named have {len(members)}")
    names = [m.name for m in members]
    if len(set(names)) < len(names):
        raise ConfigError(f"a judge is named twice: {', '.join(names)}")
    chosen = resolve_quality(dataset, quality) if quality else first.run_config.quality
    if not chosen or chosen not in dataset.qualities:
        raise ConfigError(f"say which quality the jury is compared on (--quality); {dataset.name} has "
                          f"{', '.join(dataset.qualities) or 'none'}")
    scale = dataset.qualities[chosen]
    if not scale.is_numeric:
        raise ConfigError(f"{chosen} is {scale.kind.value}: a jury pools numeric or pass/fail scales")
    judged = {item for m in members for item in m.scores}
    items = tuple(ex for ex in dataset.examples if ex.id in judged)
    if not items:
        raise DialjudgeError(f"the members judged no item of {dataset.name}")
    return Panel(dataset, chosen, scale, tuple(members), items)


def _confidence(judgment: Any) -> float:
    """The judge's answer probability (as selective trust reads it); NaN when it failed or gave none."""
    if judgment.failed or not judgment.distribution:
        return math.nan
    value = answer_confidence(judgment.distribution)
    return math.nan if value is None else float(value)


def human_point(example: Example, quality: str, scale: Scale) -> float:
    """The humans' label as a 0-1 scale point (majority for pass/fail, the mean rounded otherwise); NaN if none."""
    value = example.human(quality, Aggregation.MAJORITY if scale.kind is ScaleKind.BINARY else Aggregation.MEAN)
    if value is None or isinstance(value, str) or not math.isfinite(float(value)):
        return math.nan
    return float(points_of([scale.normalize(float(value))], scale_points(scale))[0])


def label_points(panel: Panel, labels: Mapping[str, float] | None) -> tuple[np.ndarray, str]:
    """The labels the jury learns and is checked against, as 0-1 points: the user's (a file, on the
    quality's scale) or the dataset's human ratings; and where they came from, in words."""
    if labels is None:
        values = np.array([human_point(ex, panel.quality, panel.scale) for ex in panel.items])
        return values, f"the dataset's human ratings of {panel.quality}"
    lo, hi = panel.scale.min, panel.scale.max
    bad = [(item, v) for item, v in labels.items() if lo is not None and hi is not None and not lo <= v <= hi]
    if bad:
        raise DialjudgeError(f"label {bad[0][1]:g} of item {bad[0][0]!r} is outside {panel.quality}'s scale "
                             f"({lo:g}-{hi:g})")
    known = {ex.id for ex in panel.items}
    values = np.array([points_of([panel.scale.normalize(labels[ex.id])], panel.points)[0] if ex.id in labels
                       else math.nan for ex in panel.items])
    missing = sum(1 for item in labels if item not in known)
    return values, f"{len(labels) - missing} labels from a file" + (
        f" ({missing} of items no member judged, left out)" if missing else "")


# -- the jury ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JuryRequest:
    members: tuple[str, ...]
    method: JuryMethod = JuryMethod.MAJORITY
    quality: str | None = None
    labels_file: Path | None = None
    n_boot: int = 1000
    seed: int = 0
    folds: int = DEFAULT_FOLDS
    #: Selective trust on the jury's confidence: the disagreement allowed, and the chance the bound fails.
    alpha: float = DEFAULT_ALPHA
    delta: float = DEFAULT_DELTA

    def __post_init__(self) -> None:
        if not isinstance(self.method, JuryMethod):
            try:
                object.__setattr__(self, "method", JuryMethod(self.method))
            except ValueError:
                raise ConfigError(f"--method must be one of {', '.join(m.value for m in JuryMethod)}, "
                                  f"not {self.method!r}") from None
        if self.folds < 2:
            raise ConfigError(f"--folds must be at least 2, not {self.folds}")


@dataclass(frozen=True)
class JuryRow:
    """One line of the report: a member or the jury."""

    name: str
    kind: str
    record: Mapping[str, Any]
    points: Proportion
    abstained: int
    cost: float | None
    calls: int | None
    tokens: int | None


@dataclass(frozen=True)
class JuryReport:
    dataset: str
    quality: str
    method: JuryMethod
    rows: tuple[JuryRow, ...]
    #: The jury's 0-1 value and confidence per item (None: no member voted).
    scores: Mapping[str, float | None]
    confidence: Mapping[str, float | None]
    label_source: str
    ties: int
    weights: tuple[float, ...]
    selective: SelectiveThreshold | None
    notes: tuple[str, ...] = field(default=())

    @property
    def jury(self) -> JuryRow:
        return self.rows[-1]

    @property
    def members(self) -> tuple[JuryRow, ...]:
        return self.rows[:-1]


def jury_name(method: JuryMethod, members: Sequence[Member]) -> str:
    return f"jury {method.value} ({', '.join(m.name.removeprefix('run ') for m in members)})"


def pool_panel(panel: Panel, method: JuryMethod, labels: np.ndarray, *, folds: int = DEFAULT_FOLDS,
               seed: int = 0) -> JuryScores:
    try:
        return pool(method, panel.matrix(), panel.points, labels=labels,
                    groups=[ex.group_id for ex in panel.items], folds=folds, seed=seed)
    except ValueError as exc:  # too few labelled contexts for learned weights: said, not a traceback
        raise DialjudgeError(f"{method.value} jury: {exc}") from None


def jury_report(store: RunStore, request: JuryRequest, app_config: Config | None = None,
                dataset: Dataset | None = None) -> JuryReport:
    """The jury of the request's members, beside each of them, against the humans."""
    panel = load_panel(store, request.members, quality=request.quality, app_config=app_config, dataset=dataset)
    labels = read_labels_file(request.labels_file) if request.labels_file is not None else None
    truth, source = label_points(panel, labels)
    jury = pool_panel(panel, request.method, truth, folds=request.folds, seed=request.seed)
    ids = [ex.id for ex in panel.items]
    name = jury_name(request.method, panel.members)
    columns: dict[str, Mapping[str, float | None]] = {
        m.name: {i: _or_none(m.scores.get(i, math.nan)) for i in ids} for m in panel.members}
    columns[name] = {i: _or_none(v) for i, v in zip(ids, jury.values)}
    failures = {m.name: m.failures for m in panel.members}
    agreement = evaluate(panel.dataset.subset(panel.items), qualities=[panel.quality], judge_scores=columns,
                         failures=failures, include_metrics=False, n_boot=request.n_boot, seed=request.seed)
    records = {r["evaluator"]: r for r in agreement.records if r["subset"] == agreement.subset}
    humans = np.array([human_point(ex, panel.quality, panel.scale) for ex in panel.items])
    matrix = panel.matrix()
    rows = []
    for k, m in enumerate(panel.members):
        member_points = points_of(matrix[k], panel.points)
        usage = m.usage
        rows.append(JuryRow(m.name, "judge", records.get(m.name, {}), _point_agreement(member_points, humans),
                            int(np.sum(~np.isfinite(matrix[k]))), None if usage is None else usage.cost,
                            None if usage is None else usage.asked,
                            None if usage is None else usage.prompt_tokens + usage.completion_tokens))
    costs = [r.cost for r in rows]
    calls = [r.calls for r in rows]
    tokens = [r.tokens for r in rows]
    jury_points = points_of(jury.values, panel.points)
    rows.append(JuryRow(name, JURY_KIND, records.get(name, {}), _point_agreement(jury_points, humans),
                        int(np.sum(~np.isfinite(jury.values))),
                        sum(c for c in costs if c is not None) if all(c is not None for c in costs) else None,
                        sum(c for c in calls if c is not None) if all(c is not None for c in calls) else None,
                        sum(t for t in tokens if t is not None) if all(t is not None for t in tokens) else None))
    notes = list(agreement.notes)
    unpriced = [r.name for r in rows[:-1] if r.cost is None]
    if unpriced and len(unpriced) < len(rows) - 1:
        notes.append(f"no price for {', '.join(unpriced)}: the panel's cost is unknown")
    selective = _selective(jury, jury_points, truth, request, notes)
    return JuryReport(panel.dataset.name, panel.quality, request.method, tuple(rows),
                      {i: _or_none(v) for i, v in zip(ids, jury.values)},
                      {i: _or_none(c) for i, c in zip(ids, jury.confidence)}, source, int(jury.ties.sum()),
                      jury.weights, selective, tuple(notes))


def _selective(jury: JuryScores, jury_points: np.ndarray, truth: np.ndarray, request: JuryRequest,
               notes: list[str]) -> SelectiveThreshold | None:
    """Where the jury can be trusted alone, by its members' agreement with it (Trust or Escalate)."""
    known = np.isfinite(truth) & np.isfinite(jury.confidence)
    if known.sum() < 2:
        notes.append("no selective-trust threshold: fewer than 2 labelled items with a jury verdict")
        return None
    return selective_threshold(jury.confidence[known], jury_points[known] == truth[known], alpha=request.alpha,
                               delta=request.delta, all_confidence=jury.confidence[np.isfinite(jury.confidence)])


def _point_agreement(judged: np.ndarray, humans: np.ndarray) -> Proportion:
    both = np.isfinite(judged) & np.isfinite(humans)
    return Proportion(int((judged[both] == humans[both]).sum()), int(both.sum()))


def _or_none(value: float) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


#: The use case: ``run_jury(session, request, config)``.
run_jury = uses_store(jury_report)


# -- a jury as a leaderboard row ---------------------------------------------------------------------------


def jury_evaluator(store: RunStore, members: Sequence[str], method: JuryMethod, dataset: Dataset, quality: str,
                   app_config: Config | None = None, *, seed: int = 0) -> Evaluator:
    """The jury as one more score column of a leaderboard (learned weights on the dataset's human ratings,
    cross-fitted), its usage the members' summed per 1,000 items."""
    panel = load_panel(store, members, quality=quality, app_config=app_config, dataset=dataset)
    truth, _ = label_points(panel, None)
    jury = pool_panel(panel, method, truth, seed=seed)
    ids = [ex.id for ex in panel.items]
    scores = {i: _or_none(v) for i, v in zip(ids, jury.values)}
    per_1k = [_per_1k(m) for m in panel.members]
    cost = sum(u.cost for u in per_1k if u.cost is not None) if all(u.cost is not None for u in per_1k) else None
    tokens = sum(u.tokens for u in per_1k if u.tokens is not None) if any(u.tokens for u in per_1k) else None
    seconds = None
    first = store.runs.get_run(panel.members[0].run_id)
    return Evaluator(jury_name(method, panel.members), JURY_KIND, scores,
                     sum(1 for v in scores.values() if v is None), run_info(first), usage=Usage(cost, tokens, seconds))


def _per_1k(member: Member) -> Usage:
    usage = member.usage
    if usage is None or not usage.judgments:
        return Usage(None, None, None)
    tokens = usage.prompt_tokens + usage.completion_tokens
    return Usage(None if usage.cost is None else 1000 * usage.cost / usage.judgments,
                 1000 * tokens / usage.asked if usage.asked and tokens else None, None)


# -- layouts both front ends show --------------------------------------------------------------------------

JURY_COLUMNS = ("evaluator", "Spearman [95% CI]", "n", "on the points [95% CI]", "labelled", "abstained", "calls",
                "tokens", "est. cost")


def _ci_text(value: float | None, ci: tuple[float, float] | None, *, percent: bool = False) -> str:
    if value is None or not math.isfinite(value):
        return "–"
    if percent:
        text = f"{100 * value:.1f}%"
        return text + (f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]" if ci else "")
    return " ".join(p for p in (number_text(value), interval_text(*(ci or (None, None)))) if p)


def jury_rows(report: JuryReport) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for row in report.rows:
        rec = row.record
        rho = rec.get("spearman")
        lo, hi = rec.get("spearman_lo"), rec.get("spearman_hi")
        out.append((row.name, _ci_text(rho, (lo, hi) if lo is not None and hi is not None else None),
                    str(rec.get("n", "–")), _ci_text(row.points.value, row.points.ci, percent=True),
                    str(row.points.n), str(row.abstained), "–" if row.calls is None else str(row.calls),
                    "–" if row.tokens is None else f"{row.tokens:,}", money_text(row.cost)))
    return out


def jury_title(report: JuryReport) -> str:
    return f"Jury: {report.dataset} · {report.quality} · {report.method.value} of {len(report.members)} judges"


def jury_lines(report: JuryReport) -> list[str]:
    """The method, the tie rule, the weights, the selective-trust threshold and the notes, in words."""
    lines = []
    if report.method is JuryMethod.MAJORITY:
        lines.append(f"majority of the members' scale points; a failed or unparseable judgment does not vote; "
                     f"{TIE_RULE} ({report.ties} ties)")
    elif report.method is JuryMethod.MEAN:
        lines.append("mean of the members' 0-1 scores; a failed or unparseable judgment does not vote")
    else:
        names = [r.name for r in report.members]
        weights = ", ".join(f"{n} {w:+.3f}" for n, w in zip(names, report.weights[1:]))
        lines.append(f"weights learned on {report.label_source}, cross-fitted over context folds (an item is "
                     f"weighted only by the labels of other contexts' folds); fitted on every label: intercept "
                     f"{report.weights[0]:+.3f}, {weights}")
    lines.append("on the points: the share of labelled items where the judge's scale point is the humans' "
                 "(Clopper–Pearson 95% CI); cost: the members' summed")
    lines.append("confidence: the share of the members whose point is the jury's (a failed member disagrees)")
    s = report.selective
    if s is not None:
        if s.threshold is None:
            lines.append(f"selective trust ({report.label_source}): {s.reason}")
        else:
            lines.append(f"selective trust ({report.label_source}): trust the jury alone where at least "
                         f"{s.threshold:.0%} of its members agree with it — {s.coverage:.0%} of its items, "
                         f"disagreement ≤ {s.alpha:.0%} with {1 - s.delta:.0%} confidence "
                         f"(Trust or Escalate, Jung et al. 2024)")
    return lines + list(report.notes)


def jury_records(report: JuryReport) -> list[dict[str, Any]]:
    return [{"evaluator": r.name, "kind": r.kind, "spearman": r.record.get("spearman"),
             "spearman_lo": r.record.get("spearman_lo"), "spearman_hi": r.record.get("spearman_hi"),
             "n": r.record.get("n"), "point_agreement": None if not r.points.n else r.points.value,
             "point_ci": r.points.ci, "labelled": r.points.n, "abstained": r.abstained, "calls": r.calls,
             "tokens": r.tokens, "cost": r.cost} for r in report.rows]


__all__ = ["DEFAULT_FOLDS", "JURY_COLUMNS", "JURY_KIND", "JuryMethod", "JuryReport", "JuryRequest", "JuryRow", "Member", "Panel",
           "jury_evaluator", "jury_lines", "jury_name", "jury_records", "jury_report", "jury_rows", "jury_title",
           "label_points", "load_panel", "parse_members", "run_jury", "scale_points"]
