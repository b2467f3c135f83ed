"""Discernment: can an evaluator tell a reply from its adversarial perturbation?

Paper 000 (Figure 5) shows ChatGPT giving most candidates 0.8-1.0 whether they
are right or contradict the facts. For each evaluator this module reports, on
an adversarial set (see :mod:`builder`), with higher scores meaning "judged
better":

* ``auc``: P(score(positive) > score(adversarial)), ties counting half, over
  all positive-adversarial pairs (the ROC-AUC / normalised Mann-Whitney U);
  1.0 separates perfectly, 0.5 is chance, 0.0 is perfectly reversed;
* ``gap``: mean positive score minus mean adversarial score;
* ``share_at_or_above``: among adversarial candidates paired with their own
  original (via ``Perturbation.source_id``), the share scored at or above it
  (these are listed by :func:`caught_list`, the review queue);
* 10-bin histograms on 0-1 per class (values outside 0-1 go to the end bins),
  the number scored per class and the number excluded (score missing).

Which class is "positive" -- the design choice. A reference-free judge scores
the original reply like any candidate, so the natural comparison is original
vs adversarial ("original-vs-adversarial"). A reference-based metric cannot:
when the original is the set's only reference, the metric would compare it
with itself (always 1.0, meaningless), so metrics skip ``is_reference``
examples and the original has no score. Three cases follow, picked per
evaluator from the scores it actually gave, never from its name:

1. The evaluator scored some originals -- a judge, or a metric on a set whose
   items have a held-out second reference (the builder then makes the
   original an ordinary candidate, as DSTC7-ADV does): original vs
   adversarial, with pairs.
2. It scored no original but the set holds genuine non-adversarial candidates
   (``include_other_candidates``, e.g. USR's system replies): genuine vs
   adversarial ("genuine-vs-adversarial"). Those candidates are real system
   output, not paraphrases of the original, so the AUC asks "does the metric
   rank a perturbed copy of the reference above real replies?" -- no pairs.
3. Neither: "adversarial-only". No AUC or gap is defined; the row reports the
   adversarial candidates' mean score and histogram. Against the original as
   reference a negation flip scores near 1 on BLEU or ROUGE, which is
   paper 000's point that overlap metrics cannot tell a reply from its
   negation; the number is reported, not hidden.

Scores are read as given (normalise them to 0-1 first for the histograms);
missing, non-numeric and NaN scores are excluded and counted.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Iterator, Mapping

from ..errors import DataError
from ..model import Dataset, Example

ScoreMap = Mapping[str, Mapping[str, "float | None"]]

ORIGINAL_VS_ADVERSARIAL = "original-vs-adversarial"
GENUINE_VS_ADVERSARIAL = "genuine-vs-adversarial"
ADVERSARIAL_ONLY = "adversarial-only"
NO_SCORES = "no-scores"
BINS = 10


@dataclass(frozen=True)
class DiscernmentRow:
    evaluator: str
    comparison: str
    kind: str | None  # perturbation kind; None for all kinds together
    n_positive: int
    n_adversarial: int
    excluded_positive: int
    excluded_adversarial: int
    auc: float | None
    mean_positive: float | None
    mean_adversarial: float | None
    gap: float | None
    n_pairs: int
    share_at_or_above: float | None
    hist_positive: tuple[int, ...]
    hist_adversarial: tuple[int, ...]
    note: str = ""

    def to_record(self) -> dict[str, Any]:
        record = asdict(self)
        record["kind"] = self.kind or "all"
        record["hist_positive"] = list(self.hist_positive)
        record["hist_adversarial"] = list(self.hist_adversarial)
        return record


class DiscernmentTable(list[DiscernmentRow]):
    """The rows of :func:`discernment_table`; a list with an exporter hook."""

    def to_records(self) -> list[dict[str, Any]]:
        return [row.to_record() for row in self]


def to_records(rows: Iterable[DiscernmentRow]) -> list[dict[str, Any]]:
    return [row.to_record() for row in rows]


@dataclass(frozen=True)
class Caught:
    """An adversarial candidate the evaluator scored at or above its original."""

    adversarial: Example
    original: Example
    score: float
    original_score: float

    @property
    def margin(self) -> float:
        return self.score - self.original_score


def roc_auc(positive: list[float], negative: list[float]) -> float | None:
    """P(positive > negative) + 0.5 P(tie), from mid-ranks; None when a class is empty."""
    n_pos, n_neg = len(positive), len(negative)
    if not n_pos or not n_neg:
        return None
    pooled = sorted([(v, 1) for v in positive] + [(v, 0) for v in negative])
    rank_sum = 0.0
    i = 0
    while i < len(pooled):
        j = i
        while j + 1 < len(pooled) and pooled[j + 1][0] == pooled[i][0]:
            j += 1
        mid_rank = (i + j) / 2 + 1  # ranks start at 1
        rank_sum += mid_rank * sum(label for _, label in pooled[i:j + 1])
        i = j + 1
    return (rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def histogram(values: Iterable[float], bins: int = BINS) -> tuple[int, ...]:
    """Counts over ``bins`` equal bins on 0-1; 1.0 falls in the last bin."""
    counts = [0] * bins
    for v in values:
        index = math.floor(round(min(max(v, 0.0), 1.0) * bins, 9))
        counts[min(index, bins - 1)] += 1
    return tuple(counts)


def discernment_table(dataset: Dataset, evaluator_scores: ScoreMap, *,
                      by_kind: bool = False) -> DiscernmentTable:
    """One row per evaluator (and, with ``by_kind``, one more per perturbation kind)."""
    adversarial = _adversarial_examples(dataset)
    kinds = sorted({ex.adversarial.kind for ex in adversarial if ex.adversarial is not None})
    table = DiscernmentTable()
    for evaluator, scores in evaluator_scores.items():
        table.append(_row(dataset, evaluator, scores, adversarial, None))
        if by_kind:
            for kind in kinds:
                subset = [ex for ex in adversarial
                          if ex.adversarial is not None and ex.adversarial.kind == kind]
                table.append(_row(dataset, evaluator, scores, subset, kind))
    return table


def caught_list(dataset: Dataset, evaluator_scores: ScoreMap, evaluator: str, *,
                kind: str | None = None) -> list[Caught]:
    """Adversarial candidates scored at or above their own original, worst first.

    Empty for an evaluator that scored no original (see the module notes)."""
    if evaluator not in evaluator_scores:
        raise DataError(f"no scores for evaluator {evaluator!r}; have: "
                        f"{', '.join(evaluator_scores) or 'none'}")
    scores = evaluator_scores[evaluator]
    adversarial = [ex for ex in _adversarial_examples(dataset)
                   if kind is None or (ex.adversarial is not None and ex.adversarial.kind == kind)]
    caught = [
        Caught(adv, orig, adv_score, orig_score)
        for adv, orig, adv_score, orig_score in _pairs(dataset, adversarial, scores)
        if adv_score >= orig_score
    ]
    caught.sort(key=lambda c: (-c.margin, c.adversarial.id))
    return caught


def _adversarial_examples(dataset: Dataset) -> list[Example]:
    adversarial = [ex for ex in dataset.examples if ex.is_adversarial and ex.candidate is not None]
    if not adversarial:
        raise DataError(f"dataset {dataset.name!r} has no adversarial candidates; build one with "
                        "make_adversarial_set")
    return adversarial


def _score(scores: Mapping[str, Any], example_id: str) -> float | None:
    value = scores.get(example_id)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return None if math.isnan(value) else value


def _originals(dataset: Dataset, adversarial: list[Example]) -> list[Example]:
    ids = dict.fromkeys(ex.adversarial.source_id for ex in adversarial if ex.adversarial is not None)
    out = []
    for example_id in ids:
        try:
            out.append(dataset.get(example_id))
        except KeyError:
            continue
    return out


def _genuine(dataset: Dataset, adversarial: list[Example], originals: list[Example]) -> list[Example]:
    groups = {ex.group_id for ex in adversarial}
    excluded = {ex.id for ex in originals}
    return [ex for ex in dataset.examples
            if ex.group_id in groups and not ex.is_adversarial and ex.candidate is not None
            and not ex.is_reference and ex.id not in excluded]


def _pairs(dataset: Dataset, adversarial: list[Example],
           scores: Mapping[str, Any]) -> Iterator[tuple[Example, Example, float, float]]:
    for adv in adversarial:
        if adv.adversarial is None:
            continue
        adv_score = _score(scores, adv.id)
        orig_score = _score(scores, adv.adversarial.source_id)
        if adv_score is None or orig_score is None:
            continue
        try:
            original = dataset.get(adv.adversarial.source_id)
        except KeyError:
            continue
        yield adv, original, adv_score, orig_score


def _mean(values: list[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def _row(dataset: Dataset, evaluator: str, scores: Mapping[str, Any], adversarial: list[Example],
         kind: str | None) -> DiscernmentRow:
    originals = _originals(dataset, adversarial)
    adv_scores = [s for s in (_score(scores, ex.id) for ex in adversarial) if s is not None]
    original_scores = [s for s in (_score(scores, ex.id) for ex in originals) if s is not None]
    if original_scores:
        comparison, positives, note = ORIGINAL_VS_ADVERSARIAL, originals, ""
    else:
        genuine = _genuine(dataset, adversarial, originals)
        genuine_scores = [s for s in (_score(scores, ex.id) for ex in genuine) if s is not None]
        if genuine_scores:
            comparison, positives = GENUINE_VS_ADVERSARIAL, genuine
            note = ("no original was scored (a reference-based metric skips the reference); "
                    "compared with the set's genuine candidates instead")
        elif adv_scores:
            # The originals stay the positive class, all of them excluded (unscored).
            comparison, positives = ADVERSARIAL_ONLY, originals
            note = ("no original or genuine candidate was scored (a reference-based metric skips "
                    "the reference): only the adversarial scores are reported; a mean near 1 "
                    "means the metric cannot tell the reply from its perturbation")
        else:
            comparison, positives = NO_SCORES, originals
            note = "the evaluator scored none of these examples"
    positive_scores = [s for s in (_score(scores, ex.id) for ex in positives) if s is not None]
    pairs = list(_pairs(dataset, adversarial, scores)) if comparison == ORIGINAL_VS_ADVERSARIAL else []
    mean_pos, mean_adv = _mean(positive_scores), _mean(adv_scores)
    return DiscernmentRow(
        evaluator=evaluator,
        comparison=comparison,
        kind=kind,
        n_positive=len(positive_scores),
        n_adversarial=len(adv_scores),
        excluded_positive=len(positives) - len(positive_scores),
        excluded_adversarial=len(adversarial) - len(adv_scores),
        auc=roc_auc(positive_scores, adv_scores),
        mean_positive=mean_pos,
        mean_adversarial=mean_adv,
        gap=None if mean_pos is None or mean_adv is None else mean_pos - mean_adv,
        n_pairs=len(pairs),
        share_at_or_above=(sum(a >= o for _, _, a, o in pairs) / len(pairs)) if pairs else None,
        hist_positive=histogram(positive_scores),
        hist_adversarial=histogram(adv_scores),
        note=note,
    )
