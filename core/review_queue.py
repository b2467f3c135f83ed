"""Which judged items deserve a human look, and the reviewed labels as export rows.

A run's items are flagged for five reasons, in this order of urgency:

1. a judge's answer could not be scored (parse failure or failed request);
1b. a probability-mode answer put too little probability on valid answers at the
   answer position: below the judge's own threshold (``options.min_valid_mass``, the one its runs
   score from, so a judgment the run scored is never flagged for its mass);
2. an adversarial candidate was scored at or above its own original
   (:func:`dialjudge.core.adversarial.discernment.caught_list`);
2b. on pre-paired preference data (a pairwise run asking each pair, issue 21): the judge contradicts
   the humans' majority in both orders, or its verdict flips when the replies swap places
   (:func:`dialjudge.core.judges.post_run.preference_report.pairs_to_review`);
3. a judge disagrees with the human label by at least ``min_gap`` on the
   common 0-1 scale (the largest ``per_kind`` gaps);
4. two judges of the run disagree with each other by at least ``min_gap``
   (the largest ``per_kind`` spreads).

An item flagged for several reasons is listed once, at its most urgent
reason, with every reason attached. No UI here: the Review screen shows the
queue, and tests check it against the same inputs.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dialjudge.core.adversarial.discernment import caught_list
from dialjudge.core.judges.post_run.preference_report import FLIPS, WRONG_BOTH_ORDERS, PreferenceReport, pairs_to_review
from dialjudge.core.judges.store.run_store import Review
from dialjudge.core.judges.types import DEFAULT_MIN_VALID_MASS, Judgment
from dialjudge.core.model import Aggregation, Dataset, Example, Scale

#: |judge - human| or |judge - judge| on 0-1 from which an item is flagged.
MIN_GAP = 0.3
#: At most this many items per disagreement kind (the largest gaps).
PER_KIND = 25


class FlagKind(str, enum.Enum):
    PARSE_FAILURE = "parse-failure"
    LOW_MASS = "low-valid-mass"
    CAUGHT = "adversarial-caught"
    PAIR_WRONG = "pair-wrong-both-orders"
    PAIR_FLIPS = "pair-flips"
    JUDGE_HUMAN = "judge-vs-human"
    JUDGES_DISAGREE = "judges-disagree"

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {
    FlagKind.PARSE_FAILURE: "not scored",
    FlagKind.LOW_MASS: "little probability on valid answers",
    FlagKind.CAUGHT: "adversarial ≥ original",
    FlagKind.PAIR_WRONG: "wrong in both orders",
    FlagKind.PAIR_FLIPS: "flips with the order",
    FlagKind.JUDGE_HUMAN: "judge vs human",
    FlagKind.JUDGES_DISAGREE: "judges disagree",
}
_URGENCY = {kind: rank for rank, kind in enumerate(FlagKind)}


@dataclass(frozen=True)
class Flag:
    kind: FlagKind
    #: How far apart the scores are (0-1); failures count as 1.
    gap: float
    #: One line saying what was found, with the numbers.
    text: str
    judge: str | None = None


@dataclass
class ReviewCase:
    item_id: str
    flags: list[Flag] = field(default_factory=list)

    @property
    def kind(self) -> FlagKind:
        """The most urgent reason the item is in the queue."""
        return min((f.kind for f in self.flags), key=_URGENCY.__getitem__)

    @property
    def gap(self) -> float:
        return max(f.gap for f in self.flags)

    @property
    def reasons(self) -> str:
        return ", ".join(dict.fromkeys(f.kind.label for f in self.flags))


def human_unit(example: Example, dataset: Dataset, quality: str | None,
               aggregation: Aggregation = Aggregation.MEAN, *, scales: Mapping[str, Scale] | None = None
               ) -> float | None:
    """The pooled human label of ``quality`` mapped to 0-1, None when unrated or not numeric.
    ``scales``: ``dataset.qualities`` read once by a caller that asks for many items (reading it walks
    every item: per item, a 100,000-item queue took minutes)."""
    if quality is None or quality not in example.ratings:
        return None
    scale = (dataset.qualities if scales is None else scales).get(quality)
    value = example.human(quality, aggregation)
    if scale is None or not scale.is_numeric or value is None or isinstance(value, str):
        return None
    return scale.normalize(float(value))


def build_queue(dataset: Dataset, judgments: Mapping[str, Mapping[str, Judgment]], quality: str | None, *,
                aggregation: Aggregation = Aggregation.MEAN, min_gap: float = MIN_GAP,
                per_kind: int = PER_KIND, preferences: PreferenceReport | None = None,
                mass_thresholds: Mapping[str, float] | None = None) -> list[ReviewCase]:
    """The items of a run worth reviewing, most urgent first.

    ``judgments`` is one repeat of a run as ``{judge: {item_id: Judgment}}``
    (``store.judgments.load_judgments``); ``preferences``: the run's report on pre-paired items, whose
    pairs the judge gets wrong in both orders or flips on are flagged; ``mass_thresholds``: each
    judge's least valid mass (core.judges.run.probability.mass_thresholds; a judge not in it: the
    default threshold).
    """
    flags: dict[str, list[Flag]] = {}

    def add(item_id: str, flag: Flag) -> None:
        flags.setdefault(item_id, []).append(flag)

    for judge, by_item in judgments.items():
        threshold = (mass_thresholds or {}).get(judge, DEFAULT_MIN_VALID_MASS)
        for item_id, j in by_item.items():
            if j.failed:
                add(item_id, Flag(FlagKind.PARSE_FAILURE, 1.0, f"{judge}: {j.error or 'no score'}", judge))
            if j.valid_mass is not None and j.valid_mass < threshold:
                bound = "at least " if j.mass_is_lower_bound else ""
                what = "not scored" if j.failed else f"scored {j.normalized:.2f} (0-1) all the same"
                add(item_id, Flag(FlagKind.LOW_MASS, 1.0 - j.valid_mass,
                                  f"{judge}: {bound}{100 * j.valid_mass:.1f}% of the probability on valid "
                                  f"answers; {what}", judge))

    scores = {judge: {i: j.normalized for i, j in by_item.items() if j.normalized is not None}
              for judge, by_item in judgments.items()}
    for flag_item, flag in _caught(dataset, scores):
        add(flag_item, flag)

    if preferences is not None:
        for pair_id, flag in preference_flags(preferences):
            add(pair_id, flag)

    examples = {ex.id: ex for ex in dataset.examples}
    scales = dataset.qualities
    human_gaps: list[tuple[float, str, Flag]] = []
    for judge, judge_scores in scores.items():
        for item_id, score in judge_scores.items():
            example = examples.get(item_id)
            human = human_unit(example, dataset, quality, aggregation, scales=scales) if example is not None else None
            if human is None:
                continue
            gap = abs(score - human)
            if gap >= min_gap:
                text = f"{judge} {score:.2f} vs human {human:.2f} (0-1), gap {gap:.2f}"
                human_gaps.append((gap, item_id, Flag(FlagKind.JUDGE_HUMAN, gap, text, judge)))
    for _, item_id, flag in _largest(human_gaps, per_kind):
        add(item_id, flag)

    if len(scores) >= 2:
        spreads: list[tuple[float, str, Flag]] = []
        item_ids = dict.fromkeys(i for by_item in scores.values() for i in by_item)
        for item_id in item_ids:
            given = {judge: by_item[item_id] for judge, by_item in scores.items() if item_id in by_item}
            if len(given) < 2:
                continue
            low = min(given, key=given.__getitem__)
            high = max(given, key=given.__getitem__)
            spread = given[high] - given[low]
            if spread >= min_gap:
                text = f"{high} {given[high]:.2f} vs {low} {given[low]:.2f}, spread {spread:.2f}"
                spreads.append((spread, item_id, Flag(FlagKind.JUDGES_DISAGREE, spread, text)))
        for _, item_id, flag in _largest(spreads, per_kind):
            add(item_id, flag)

    order = {ex.id: position for position, ex in enumerate(dataset.examples)}
    cases = [ReviewCase(item_id, item_flags) for item_id, item_flags in flags.items()]
    cases.sort(key=lambda c: (_URGENCY[c.kind], -c.gap, order.get(c.item_id, len(order)), c.item_id))
    return cases


_PAIR_KINDS = {WRONG_BOTH_ORDERS: FlagKind.PAIR_WRONG, FLIPS: FlagKind.PAIR_FLIPS}


def preference_flags(report: PreferenceReport) -> list[tuple[str, Flag]]:
    """(pair id, flag) for each judge's pairs worth a look on pre-paired data: wrong in both orders, or
    a verdict that changes when the replies swap; the text gives the humans' label and both verdicts."""
    out = []
    for judge, side in report.judges.items():
        pairs = {p.pair: p for p in side.pairs}
        for pair_id, why in pairs_to_review(report, judge):
            p = pairs[pair_id]
            a_first = "not asked" if p.a_first is None else p.a_first.verdict or "failed"
            b_first = "not asked" if p.b_first is None else p.b_first.verdict or "failed"
            text = f"{judge}: {a_first} with A shown first, {b_first} with B shown first; humans: {p.human}"
            out.append((pair_id, Flag(_PAIR_KINDS[why], 1.0, text, judge)))
    return out


def _caught(dataset: Dataset, scores: Mapping[str, Mapping[str, float]]) -> list[tuple[str, Flag]]:
    if not any(ex.is_adversarial for ex in dataset.examples):
        return []

    out = []
    for judge in scores:
        for caught in caught_list(dataset, scores, judge):
            text = (f"{judge} scored this {caught.adversarial.adversarial.kind} perturbation "  # type: ignore[union-attr]
                    f"{caught.score:.2f}, its original {caught.original.id} {caught.original_score:.2f}")
            out.append((caught.adversarial.id, Flag(FlagKind.CAUGHT, max(caught.margin, 0.0), text, judge)))
    return out


def _largest(found: list[tuple[float, str, Flag]], n: int) -> list[tuple[float, str, Flag]]:
    return sorted(found, key=lambda t: (-t[0], t[1]))[:n]


# -- exports -------------------------------------------------------------------------------

#: Columns of a review export before one score column per judge.
REVIEW_COLUMNS = ("run_id", "item_id", "quality", "label", "label_is_manual", "dataset_label", "verdict",
                  "note", "flags")


def review_rows(dataset: Dataset, run_id: int, quality: str | None,
                judgments: Mapping[str, Mapping[str, Judgment]], reviews: Mapping[str, Review],
                queue: Sequence[ReviewCase] = (), *,
                aggregation: Aggregation = Aggregation.MEAN) -> list[dict[str, Any]]:
    """One row per item the run judged: the label to use (the reviewer's own rating where given,
    with ``label_is_manual`` true, else the dataset's), the review, the flags and each judge's 0-1 score."""
    judged = dict.fromkeys(i for by_item in judgments.values() for i in by_item)
    flagged = {case.item_id: case for case in queue}
    measured = {judge for judge, by_item in judgments.items() if any(j.valid_mass is not None for j in by_item.values())}
    rows = []
    for ex in dataset.examples:
        if ex.id not in judged:
            continue
        review = reviews.get(ex.id)
        dataset_label = _label(ex, quality, aggregation)
        manual = review is not None and review.own_rating is not None
        row: dict[str, Any] = {
            "run_id": run_id,
            "item_id": ex.id,
            "quality": quality or "",
            "label": review.own_rating if manual else dataset_label,  # type: ignore[union-attr]
            "label_is_manual": manual,
            "dataset_label": dataset_label,
            "verdict": review.verdict if review else "",
            "note": review.note if review else "",
            "flags": "; ".join(f.kind.value for f in flagged[ex.id].flags) if ex.id in flagged else "",
        }
        for judge, by_item in judgments.items():
            j = by_item.get(ex.id)
            row[f"judge:{judge}"] = None if j is None else j.normalized
            if judge in measured:  # probability modes: how much the answer put on valid answers
                row[f"valid_mass:{judge}"] = None if j is None else j.valid_mass
        rows.append(row)
    return rows


def _label(example: Example, quality: str | None, aggregation: Aggregation) -> Any:
    if quality is None or quality not in example.ratings:
        return None
    value = example.human(quality, aggregation)
    if isinstance(value, float) and math.isnan(value):
        return None
    return value
