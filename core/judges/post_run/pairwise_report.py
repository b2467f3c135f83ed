"""A pairwise run's report: its verdicts read back per judge, beside the humans' pairs.

Shared by ``dialjudge judge --mode pairwise`` and the app's pairwise report
widget. The statistics themselves live in :mod:`dialjudge.core.stats.pairwise`;
this module turns stored judgments and the dataset's human ratings into their
inputs, and the per-candidate scores into evaluator columns
(``judge:winrate``, ``judge:bt``) for the usual agreement tables.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping

from ...model import Aggregation, Dataset, Example
from ...stats.pairwise import (
    DEFAULT_BT_PRIOR,
    HUMAN_TIE,
    AskedVerdict,
    CandidateScores,
    LengthPreference,
    PairAccuracy,
    PositionStats,
    candidate_scores,
    human_pair_verdicts,
    humans_as_asked,
    length_preference,
    pair_accuracy,
    position_stats,
    word_count,
)
from ..prompts.templates import parse_template
from ..run.config import RunConfig
from ..run.pairwise import PairPlan, PairSetting, plan_pairs, verdict_of
from ..types import Judgment

WIN_RATE_SUFFIX = ":winrate"
BT_SUFFIX = ":bt"


@dataclass(frozen=True)
class JudgePairwise:
    judge: str
    position: PositionStats
    length: LengthPreference
    accuracy: PairAccuracy | None
    scores: CandidateScores
    #: Asked orders without a verdict (failed judgments) and not yet judged.
    failed: int
    missing: int


@dataclass(frozen=True)
class PairwiseReport:
    setting: PairSetting
    plan: PairPlan
    quality: str | None
    judges: dict[str, JudgePairwise]
    #: The humans on the same asked orders (None without a numeric human quality).
    humans_position: PositionStats | None
    humans_length: LengthPreference | None
    #: Unordered pairs with a human verdict, and how many of them the humans tied.
    human_pairs: int
    human_ties: int
    #: The candidates the pairs were drawn from (their human ratings are what the columns meet).
    candidates: tuple[Example, ...] = ()

    def score_columns(self) -> dict[str, dict[str, float | None]]:
        """Per judge, the win rate and Bradley-Terry columns (0-1) over the candidates."""
        out: dict[str, dict[str, float | None]] = {}
        for name, judge in self.judges.items():
            out[name + WIN_RATE_SUFFIX] = dict(judge.scores.win_rate)
            out[name + BT_SUFFIX] = dict(judge.scores.bt)
        return out

    @property
    def compared(self) -> tuple[Example, ...]:
        """The candidates in at least one asked pair: the items the score columns are compared on."""
        asked = {c for p in self.plan.asked for c in (p.first, p.second)}
        return tuple(ex for ex in self.candidates if ex.id in asked)

    def column_failures(self) -> dict[str, int]:
        """Compared candidates that no valid verdict scored, per column (failures, not silently dropped)."""
        out = {}
        ids = {ex.id for ex in self.compared}
        for name, judge in self.judges.items():
            out[name + WIN_RATE_SUFFIX] = len(ids - set(judge.scores.win_rate))
            out[name + BT_SUFFIX] = len(ids - set(judge.scores.bt))
        return out


def candidate_items(config: RunConfig, dataset: Dataset) -> list[Example]:
    """The candidates a pairwise run paired (its selection before pairing)."""
    return dataclasses.replace(config, pairs=None).select_items(dataset)


def asked_verdicts(plan: PairPlan, judgments: Mapping[str, Judgment], choices: tuple[str, ...]
                   ) -> tuple[list[AskedVerdict], int]:
    """Every asked order with the verdict its judgment names (None when failed); and how many
    asked orders have no judgment yet."""
    out = []
    missing = 0
    for asked in plan.asked:
        judgment = judgments.get(asked.item_id)
        if judgment is None:
            missing += 1
            continue
        verdict = verdict_of(judgment, choices)
        # A probability answer's score is p(first) + p(tie)/2: the expected point of the first reply.
        share = judgment.normalized if judgment.distribution and verdict is not None else None
        out.append(AskedVerdict(asked.context, asked.first, asked.second,
                                None if verdict is None else verdict.value, share))
    return out, missing


def pairwise_report(config: RunConfig, dataset: Dataset, table: Mapping[str, Mapping[str, Judgment]], *,
                    aggregation: Aggregation = Aggregation.MEAN, prior: float = DEFAULT_BT_PRIOR) -> PairwiseReport:
    """The report of a pairwise run from its stored judgments (``{judge: {item: Judgment}}``)."""

    if config.pairs is None:
        raise ValueError("not a pairwise run")
    candidates = candidate_items(config, dataset)
    plan = plan_pairs(candidates, config.pairs)
    choices = parse_template(config.template_text, config.template_source or config.template).output.choices
    lengths = {ex.id: word_count(ex.candidate) for ex in candidates}

    human: dict[frozenset[str], str] = {}
    quality = config.quality
    scale = dataset.qualities.get(quality) if quality else None
    if quality and scale is not None and scale.is_numeric:
        ratings: dict[str, float | None] = {}
        for ex in candidates:
            value = _numeric(ex, quality, aggregation)
            ratings[ex.id] = value
        unordered = sorted({(min(p.first, p.second), max(p.first, p.second)) for p in plan.asked})
        human = human_pair_verdicts(ratings, unordered)

    judges: dict[str, JudgePairwise] = {}
    humans_position = humans_length = None
    for name, judgments in table.items():
        verdicts, missing = asked_verdicts(plan, judgments, choices)
        judges[name] = JudgePairwise(
            judge=name, position=position_stats(verdicts), length=length_preference(verdicts, lengths),
            accuracy=pair_accuracy(verdicts, human) if human else None,
            scores=candidate_scores(verdicts, prior=prior),
            failed=sum(1 for v in verdicts if v.verdict is None), missing=missing)
    if human:
        every_order = [AskedVerdict(p.context, p.first, p.second, None) for p in plan.asked]
        as_asked = humans_as_asked(every_order, human)
        humans_position = position_stats(as_asked)
        humans_length = length_preference(as_asked, lengths)
    return PairwiseReport(
        setting=config.pairs, plan=plan, quality=quality, judges=judges, humans_position=humans_position,
        humans_length=humans_length, human_pairs=len(human),
        human_ties=sum(1 for h in human.values() if h == HUMAN_TIE), candidates=tuple(candidates))


def _numeric(ex: Example, quality: str, aggregation: Aggregation) -> float | None:
    try:
        value: Any = ex.human(quality, aggregation)
    except (TypeError, ValueError):
        return None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


__all__ = ["JudgePairwise", "PairwiseReport", "pairwise_report", "candidate_items", "asked_verdicts",
           "WIN_RATE_SUFFIX", "BT_SUFFIX"]


# --------------------------------------------------------------------------- text shared by the CLI and the app

#: The columns of :func:`summary_rows`.
SUMMARY_COLUMNS = ("who", "verdicts", "failed", "flip with order", "first-position wins", "ties",
                   "longer reply wins", "accuracy, ties counted", "accuracy, humans decisive")


def share_text(part: int, whole: int) -> str:
    return "–" if not whole else f"{100 * part / whole:.1f}% ({part}/{whole})"


def summary_rows(report: PairwiseReport) -> list[tuple[str, ...]]:
    """One row per judge, then the humans on the same asked orders (see SUMMARY_COLUMNS)."""
    rows: list[tuple[str, ...]] = []
    for name, judge in report.judges.items():
        p, acc = judge.position, judge.accuracy
        rows.append((
            name, str(p.verdicts), str(judge.failed), share_text(p.flips, p.both_orders),
            share_text(p.first_wins, p.first_wins + p.second_wins), share_text(p.ties, p.verdicts),
            share_text(judge.length.longer_wins, judge.length.n),
            share_text(acc.correct, acc.n) if acc else "–",
            share_text(acc.correct_decisive, acc.n_decisive) if acc else "–"))
    if report.humans_position is not None and report.humans_length is not None:
        h = report.humans_position
        rows.append((
            f"humans ({report.quality})", str(h.verdicts), "–", share_text(h.flips, h.both_orders),
            share_text(h.first_wins, h.first_wins + h.second_wins), share_text(h.ties, h.verdicts),
            share_text(report.humans_length.longer_wins, report.humans_length.n), "–", "–"))
    return rows


def summary_notes(report: PairwiseReport) -> list[str]:
    """How to read the summary's numbers."""
    notes = [
        report.plan.describe(report.setting),
        "flip with order: of the pairs judged in both orders, the share whose verdict changes when the replies "
        "swap places (issue 12's position consistency; 0% = fully consistent, higher = more position bias)",
        "first-position wins: share of decisive verdicts won by the reply shown first (50% = no position "
        "preference); longer reply wins: share of decisive verdicts on replies of different length (in words) "
        "won by the longer one",
    ]
    if report.humans_position is not None:
        notes.append(f"humans: the pooled {report.quality} rating decides each pair ({report.human_pairs} pairs, "
                     f"{report.human_ties} tied); they see no order, so they never flip, and with both orders asked "
                     "their first-position share is 50% by construction. Accuracy counts a human tie as matched only "
                     "by a judge's tie")
    notes.append("judge:winrate = (wins + ties/2) / verdicts of each candidate; judge:bt = Bradley-Terry strength "
                 f"within its context as π/(1+π) (prior: {DEFAULT_BT_PRIOR:g} virtual win and loss against a "
                 "reference of strength 1); both enter the agreement table below as evaluator columns. In logprob "
                 "mode a verdict above is the most likely answer, while both columns count each answer's expected "
                 "point, p(first) + p(tie)/2, so a constant position pull cancels over the two orders")
    return notes
