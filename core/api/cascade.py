"""A cascade of two stored runs: the cheap judge decides where it is confident, the strong judge where the
cheap one is not, and the rest abstain (``dialjudge cascade``, the Runs screen's key e).

The thresholds are chosen with the Trust or Escalate guarantee (:mod:`core.stats.cascade`) on labelled
items, and the cascade is checked on other items: with a labels file, the file's items calibrate and
the items of contexts the file does not touch are checked against the dataset's human ratings;
without one, the contexts are dealt (seeded) into a calibration share and a checked rest. The cascade is
computed from stored answers; its cost counts the strong judge only where it would have been asked. The
strong run may hold only those items: the live cascade (:mod:`core.api.cascade_live`) asks the strong
judge only there, and this report on its two runs is its report. A judge's confidence is its answer
probability: runs in logprob or yesno mode.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..config import Config
from ..errors import ConfigError, DialjudgeError
from ..judges.post_run.cost import JudgeUsage, money_text
from ..judges.store.run_store import RunStore
from ..model import Dataset
from ..stats.cascade import (
    ABSTAIN,
    CHEAP,
    DEFAULT_DELTA,
    DEFAULT_TARGET,
    STRONG,
    CascadeThresholds,
    Proportion,
    cascade_thresholds,
    covered_agreement,
)
from ..stats.jury import points_of
from .jury import Member, Panel, human_point, label_points, load_panel
from .labels_estimates import read_labels_file
from .session import uses_store

DEFAULT_CALIBRATION = 0.5


@dataclass(frozen=True)
class CascadeRequest:
    cheap: str
    strong: str
    quality: str | None = None
    labels_file: Path | None = None
    #: The agreement with people guaranteed on the items the cascade decides, and the chance it fails.
    target: float = DEFAULT_TARGET
    delta: float = DEFAULT_DELTA
    #: Without a labels file: the share of contexts whose human ratings calibrate the thresholds.
    calibration: float = DEFAULT_CALIBRATION
    seed: int = 0

    def __post_init__(self) -> None:
        if not 0 < self.target < 1:
            raise ConfigError(f"--target must be between 0 and 1 (an agreement), not {self.target}")
        if not 0 < self.delta < 1:
            raise ConfigError(f"--delta must be between 0 and 1, not {self.delta}")
        if not 0 < self.calibration < 1:
            raise ConfigError(f"--calibration must be between 0 and 1, not {self.calibration}")


@dataclass(frozen=True)
class CascadeReport:
    dataset: str
    quality: str
    cheap: str
    strong: str
    thresholds: CascadeThresholds
    label_source: str
    n_calibration: int
    #: Items the cascade is checked on, and who decided them.
    n_checked: int
    decided_by: dict[str, int]
    #: Agreement on the checked items the cascade decided (and each judge's alone, on every checked item).
    agreement: Proportion
    cheap_alone: Proportion
    strong_alone: Proportion
    #: Checked items escalated to the strong judge (asked, whether it then decided or abstained).
    escalated: int
    cost_cascade: float | None
    cost_strong_alone: float | None
    tokens_cascade: float | None
    tokens_strong_alone: float | None
    #: Checked items each judge judged (every one, unless the strong judge was asked only where needed).
    n_cheap_judged: int = 0
    n_strong_judged: int = 0
    notes: tuple[str, ...] = field(default=())

    def share(self, who: str) -> float:
        return self.decided_by.get(who, 0) / self.n_checked if self.n_checked else math.nan


def checked_split(panel: Panel, truth: np.ndarray, request: CascadeRequest, from_file: bool
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(calibration items, checked items) as masks over the panel's items, disjoint by context."""
    groups = [ex.group_id for ex in panel.items]
    if from_file:
        calibrate = np.isfinite(truth)
        touched = {g for g, c in zip(groups, calibrate) if c}
        return calibrate, np.array([g not in touched for g in groups])
    calibrate = np.array([zlib.crc32(f"{request.seed}\x1f{g}".encode("utf-8")) / 2 ** 32 < request.calibration
                          for g in groups])
    return calibrate & np.isfinite(truth), ~calibrate


def cascade_report(store: RunStore, request: CascadeRequest, app_config: Config | None = None,
                   dataset: Dataset | None = None) -> CascadeReport:
    panel = load_panel(store, [request.cheap, request.strong], quality=request.quality, app_config=app_config,
                       dataset=dataset)
    if len(panel.members) != 2:
        raise ConfigError("a cascade has two judges: name one judge of each run (RUN:JUDGE)")
    cheap, strong = panel.members
    for member in panel.members:
        if not any(math.isfinite(c) for c in member.confidence.values()):
            raise DialjudgeError(f"{member.name} gave no answer probabilities: a cascade needs each judge's "
                                 "confidence (run it in logprob or yesno mode)")
    labels = read_labels_file(request.labels_file) if request.labels_file is not None else None
    truth, source = label_points(panel, labels)
    calibrate, checked = checked_split(panel, truth, request, labels is not None)
    if calibrate.sum() < 2:
        raise DialjudgeError(f"only {int(calibrate.sum())} labelled items to choose the thresholds on")
    ids = [ex.id for ex in panel.items]
    c1, c2 = (np.array([m.confidence.get(i, math.nan) for i in ids]) for m in (cheap, strong))
    a1, a2 = (judge_agrees(m, ids, panel, truth) for m in (cheap, strong))
    thresholds = cascade_thresholds(c1[calibrate], a1[calibrate], c2[calibrate], a2[calibrate],
                                    target=request.target, delta=request.delta)
    humans = np.array([human_point(ex, panel.quality, panel.scale) for ex in panel.items])
    h1, h2 = judge_agrees(cheap, ids, panel, humans), judge_agrees(strong, ids, panel, humans)
    # Each judge alone on the checked items it judged (a live cascade's strong judge judged only those escalated).
    j1, j2 = (np.array([i in m.scores for i in ids])[checked] for m in (cheap, strong))
    route = thresholds.route(c1[checked], c2[checked])
    labelled = np.isfinite(humans[checked])
    n = int(checked.sum())
    escalated = int((route != CHEAP).sum())
    notes = []
    if labels is None:
        notes.append(f"{int(calibrate.sum())} items of {request.calibration:.0%} of the contexts (seed "
                     f"{request.seed}) chose the thresholds; the cascade is checked on the other contexts' items")
    else:
        notes.append(f"the file's {int(calibrate.sum())} labelled items chose the thresholds; the cascade is "
                     "checked on the items of contexts no label touched")
    if not labelled.any():
        notes.append(f"the checked items have no human rating of {panel.quality}: coverage and cost only")
    cost = _costs(cheap.usage, strong.usage, n, escalated)
    return CascadeReport(
        panel.dataset.name, panel.quality, cheap.name, strong.name, thresholds, source, int(calibrate.sum()), n,
        {who: int((route == who).sum()) for who in (CHEAP, STRONG, ABSTAIN)},
        covered_agreement(route, h1[checked], h2[checked], labelled),
        _alone(h1[checked], labelled & j1), _alone(h2[checked], labelled & j2), escalated, *cost,
        int(j1.sum()), int(j2.sum()), tuple(notes))


def judge_agrees(member: Member, ids: list[str], panel: Panel, truth: np.ndarray) -> np.ndarray:
    """Whether the member's scale point is ``truth``'s, per item (no verdict, or no truth: it does not agree)."""
    judged = points_of([member.scores.get(i, math.nan) for i in ids], panel.points)
    return np.isfinite(judged) & (judged == truth)


def _alone(agrees: np.ndarray, labelled: np.ndarray) -> Proportion:
    return Proportion(int((agrees & labelled).sum()), int(labelled.sum()))


def _per_item(usage: JudgeUsage | None) -> tuple[float | None, float | None]:
    if usage is None or not usage.judgments:
        return None, None
    tokens = usage.prompt_tokens + usage.completion_tokens
    return (None if usage.cost is None else usage.cost / usage.judgments,
            tokens / usage.asked if usage.asked and tokens else None)


def _costs(cheap: JudgeUsage | None, strong: JudgeUsage | None, n: int, escalated: int
           ) -> tuple[float | None, float | None, float | None, float | None]:
    """(cascade cost, strong alone cost, cascade tokens, strong alone tokens) over the checked items: the
    cheap judge on all of them, the strong one on those escalated."""
    (cost1, tokens1), (cost2, tokens2) = _per_item(cheap), _per_item(strong)
    money = (cost1 * n + cost2 * escalated, cost2 * n) if cost1 is not None and cost2 is not None else (None, None)
    tokens = ((tokens1 * n + tokens2 * escalated, tokens2 * n) if tokens1 is not None and tokens2 is not None
              else (None, None))
    return money[0], money[1], tokens[0], tokens[1]


#: The use case: ``run_cascade(session, request, config)``.
run_cascade = uses_store(cascade_report)


# -- layouts both front ends show --------------------------------------------------------------------------

CASCADE_COLUMNS = ("who decides", "threshold", "items", "share", "agreement [95% CI]", "labelled")


def _agreement_text(p: Proportion) -> str:
    if not p.n:
        return "–"
    ci = p.ci
    return f"{100 * p.value:.1f}%" + (f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]" if ci else "")


def _threshold_text(value: float | None) -> str:
    return "never" if value is None else f"≥ {value:.2f}"


def cascade_rows(report: CascadeReport) -> list[tuple[str, ...]]:
    t = report.thresholds
    n = report.n_checked

    def share(count: int) -> str:
        return f"{100 * count / n:.1f}%" if n else "–"

    decided = report.decided_by[CHEAP] + report.decided_by[STRONG]
    return [
        (f"cheap: {report.cheap}", _threshold_text(t.cheap.threshold), str(report.decided_by[CHEAP]),
         share(report.decided_by[CHEAP]), "", ""),
        (f"strong: {report.strong}", _threshold_text(t.strong.threshold), str(report.decided_by[STRONG]),
         share(report.decided_by[STRONG]), "", ""),
        ("abstain (to people)", "", str(report.decided_by[ABSTAIN]), share(report.decided_by[ABSTAIN]), "", ""),
        ("cascade (decided items)", "", str(decided), share(decided), _agreement_text(report.agreement),
         str(report.agreement.n)),
        (f"{report.cheap} alone", "", str(report.n_cheap_judged), share(report.n_cheap_judged),
         _agreement_text(report.cheap_alone), str(report.cheap_alone.n)),
        (f"{report.strong} alone", "", str(report.n_strong_judged), share(report.n_strong_judged),
         _agreement_text(report.strong_alone), str(report.strong_alone.n)),
    ]


def cascade_title(report: CascadeReport) -> str:
    return (f"Cascade: {report.dataset} · {report.quality} · target agreement {report.thresholds.target:.0%} "
            f"(δ {report.thresholds.delta:g})")


def cascade_lines(report: CascadeReport) -> list[str]:
    t = report.thresholds
    lines = [f"thresholds by fixed-sequence testing on {report.n_calibration} labelled items ({report.label_source}):"
             f" each judge's disagreement on what it decides ≤ {t.risk:.0%} with {1 - t.delta / 2:.1%} confidence, "
             f"so the cascade's agreement ≥ {t.target:.0%} with {1 - t.delta:.0%} (Trust or Escalate, Jung et al. "
             "2024; union bound over the two judges)"]
    for who, s in (("cheap", t.cheap), ("strong", t.strong)):
        if s.reason:
            lines.append(f"{who} judge: {s.reason}")
    lines.append(f"agreement: the share of checked items with a human rating where the deciding judge's scale point "
                 f"is the humans' (Clopper–Pearson 95% CI); the strong judge is asked on {report.escalated} of "
                 f"{report.n_checked} checked items")
    if report.cost_cascade is not None and report.cost_strong_alone is not None:
        lines.append(f"est. cost: cascade {money_text(report.cost_cascade)} against "
                     f"{money_text(report.cost_strong_alone)} for the strong judge alone")
    if report.tokens_cascade is not None and report.tokens_strong_alone is not None:
        lines.append(f"tokens: cascade {report.tokens_cascade:,.0f} against {report.tokens_strong_alone:,.0f} for "
                     f"the strong judge alone ({_ratio(report.tokens_cascade, report.tokens_strong_alone)})")
    if report.cost_cascade is None:
        lines.append("est. cost: unknown (no price for a judge's model; add [prices.\"MODEL\"] to the config)")
    return lines + list(report.notes)


def _ratio(a: float, b: float) -> str:
    return f"{100 * a / b:.0f}%" if b else "–"


def cascade_record(report: CascadeReport) -> dict[str, Any]:
    t = report.thresholds
    return {"dataset": report.dataset, "quality": report.quality, "cheap": report.cheap, "strong": report.strong,
            "target": t.target, "delta": t.delta, "cheap_threshold": t.cheap.threshold,
            "strong_threshold": t.strong.threshold, "checked": report.n_checked, **report.decided_by,
            "agreement": report.agreement.value if report.agreement.n else None, "agreement_ci": report.agreement.ci,
            "escalated": report.escalated, "cost": report.cost_cascade, "cost_strong_alone": report.cost_strong_alone,
            "tokens": report.tokens_cascade, "tokens_strong_alone": report.tokens_strong_alone}


__all__ = ["CASCADE_COLUMNS", "DEFAULT_CALIBRATION", "DEFAULT_DELTA", "DEFAULT_TARGET", "CascadeReport", "CascadeRequest", "cascade_lines", "checked_split", "cascade_record",
           "cascade_report", "cascade_rows", "cascade_title", "judge_agrees", "run_cascade"]
