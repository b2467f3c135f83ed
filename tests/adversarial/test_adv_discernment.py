"""Discernment statistics on constructed scores."""

from __future__ import annotations

import math
import random

import pytest

from dialjudge.core.adversarial.builder import make_adversarial_set
from dialjudge.core.adversarial.discernment import (
    ADVERSARIAL_ONLY,
    GENUINE_VS_ADVERSARIAL,
    NO_SCORES,
    ORIGINAL_VS_ADVERSARIAL,
    caught_list,
    discernment_table,
    histogram,
    roc_auc,
)
from dialjudge.core.errors import DataError
from dialjudge.core.model import Dataset, Example, Perturbation, Turn


def _example(example_id: str, group: str, *, source: str | None = None, reference: bool = False,
             kind: str = "negation") -> Example:
    return Example(
        id=example_id, group_id=group, context=(Turn("A", "q"),), candidate=example_id,
        references=("ref",), is_reference=reference,
        adversarial=Perturbation(kind, source) if source else None,
        tags=frozenset({"adversarial"}) if source else frozenset(),
    )


@pytest.fixture
def adv_set() -> Dataset:
    """Two originals, each with two adversarial candidates, and one genuine candidate each."""
    return Dataset("adv", [
        _example("o1", "g1", reference=True),
        _example("a1", "g1", source="o1"),
        _example("b1", "g1", source="o1", kind="number"),
        _example("s1", "g1"),
        _example("o2", "g2", reference=True),
        _example("a2", "g2", source="o2"),
        _example("b2", "g2", source="o2", kind="number"),
        _example("s2", "g2"),
    ])


def test_roc_auc_extremes_and_ties() -> None:
    assert roc_auc([0.9, 0.8], [0.1, 0.2]) == 1.0
    assert roc_auc([0.1, 0.2], [0.9, 0.8]) == 0.0
    assert roc_auc([0.5, 0.5], [0.5, 0.5, 0.5]) == 0.5
    assert roc_auc([0.9, 0.5, 0.2], [0.5, 0.1]) == pytest.approx((2 + 1.5 + 1) / 6)
    assert roc_auc([], [0.3]) is None


def test_roc_auc_matches_mann_whitney() -> None:
    from scipy.stats import mannwhitneyu

    rng = random.Random(0)
    pos = [round(rng.random(), 1) for _ in range(40)]
    neg = [round(rng.random() * 0.8, 1) for _ in range(30)]
    u = mannwhitneyu(pos, neg, alternative="two-sided").statistic
    assert roc_auc(pos, neg) == pytest.approx(u / (len(pos) * len(neg)))


def test_histogram_bins_and_sums() -> None:
    values = [0.0, 0.05, 0.1, 0.3, 0.7, 0.95, 1.0, 1.4, -0.2]
    counts = histogram(values)
    assert counts == (3, 1, 0, 1, 0, 0, 0, 1, 0, 3)
    assert sum(counts) == len(values)


def test_judge_scores_originals_against_their_perturbations(adv_set: Dataset) -> None:
    scores = {"judge": {"o1": 0.9, "a1": 0.2, "b1": 0.95, "o2": 0.8, "a2": 0.8, "b2": None,
                        "s1": 0.5}}
    [row] = discernment_table(adv_set, scores)
    assert row.comparison == ORIGINAL_VS_ADVERSARIAL
    assert (row.n_positive, row.n_adversarial, row.excluded_positive, row.excluded_adversarial) == (2, 3, 0, 1)
    # pairs (pos, adv): (0.9,0.2)>(0.9,0.95)<(0.9,0.8)>(0.8,0.2)>(0.8,0.95)<(0.8,0.8)= -> 3 + 0.5 of 6
    assert row.auc == pytest.approx(3.5 / 6)
    assert row.gap == pytest.approx(0.85 - (0.2 + 0.95 + 0.8) / 3)
    assert row.n_pairs == 3 and row.share_at_or_above == pytest.approx(2 / 3)
    assert sum(row.hist_positive) == row.n_positive and sum(row.hist_adversarial) == row.n_adversarial
    caught = caught_list(adv_set, scores, "judge")
    assert [(c.adversarial.id, c.original.id) for c in caught] == [("b1", "o1"), ("a2", "o2")]
    assert caught[0].margin == pytest.approx(0.05) and caught[1].margin == 0


def test_perfect_and_reversed_evaluators(adv_set: Dataset) -> None:
    perfect = {"o1": 1.0, "o2": 0.9, "a1": 0.1, "b1": 0.0, "a2": 0.2, "b2": 0.3}
    reversed_ = {k: 1 - v for k, v in perfect.items()}
    rows = discernment_table(adv_set, {"perfect": perfect, "reversed": reversed_})
    assert [r.auc for r in rows] == [1.0, 0.0]
    assert [r.share_at_or_above for r in rows] == [0.0, 1.0]
    assert caught_list(adv_set, {"perfect": perfect}, "perfect") == []


def test_reference_based_metric_without_originals(adv_set: Dataset) -> None:
    # A metric skips is_reference examples, so the originals have no score.
    with_genuine = {"o1": None, "o2": None, "a1": 0.9, "b1": 0.95, "a2": 0.85, "b2": 0.9,
                    "s1": 0.3, "s2": 0.2}
    only_adversarial = {"a1": 0.9, "b1": 0.95, "a2": 0.85, "b2": 0.9}
    genuine_row, adv_row = discernment_table(
        adv_set, {"bleu": with_genuine, "bleu-alone": only_adversarial})
    assert genuine_row.comparison == GENUINE_VS_ADVERSARIAL
    assert genuine_row.auc == 0.0 and genuine_row.n_positive == 2
    assert genuine_row.share_at_or_above is None and genuine_row.note
    no_genuine = adv_set.subset([ex for ex in adv_set if not ex.id.startswith("s")])
    [adv_row] = discernment_table(no_genuine, {"bleu": with_genuine})
    assert adv_row.comparison == ADVERSARIAL_ONLY
    assert adv_row.auc is None and adv_row.gap is None
    assert adv_row.mean_adversarial == pytest.approx(0.9)
    assert adv_row.excluded_positive == 2 and adv_row.n_positive == 0
    assert caught_list(no_genuine, {"bleu": with_genuine}, "bleu") == []


def test_missing_nan_and_unscored(adv_set: Dataset) -> None:
    rows = discernment_table(adv_set, {"nan": {"o1": math.nan, "o2": 0.5, "a1": "high", "b1": 0.1},
                                       "none": {}})
    assert rows[0].n_positive == 1 and rows[0].excluded_positive == 1
    assert rows[0].n_adversarial == 1 and rows[0].excluded_adversarial == 3
    assert rows[1].comparison == NO_SCORES and rows[1].auc is None


def test_by_kind_rows_and_records(adv_set: Dataset) -> None:
    scores = {"judge": {"o1": 0.9, "o2": 0.8, "a1": 0.1, "a2": 0.2, "b1": 0.95, "b2": 0.96}}
    table = discernment_table(adv_set, scores, by_kind=True)
    assert [(r.kind, r.auc) for r in table] == [(None, 0.5), ("negation", 1.0), ("number", 0.0)]
    records = table.to_records()
    assert records[0]["kind"] == "all" and records[1]["hist_positive"] == [0] * 8 + [1, 1]
    assert {"evaluator", "comparison", "auc", "gap", "share_at_or_above", "n_positive",
            "excluded_adversarial", "hist_adversarial"} <= set(records[0])


def test_errors_name_the_problem(adv_set: Dataset) -> None:
    plain = Dataset("plain", [_example("o1", "g1")])
    with pytest.raises(DataError, match="no adversarial candidates"):
        discernment_table(plain, {"judge": {}})
    with pytest.raises(DataError, match="no scores for evaluator 'bleu'"):
        caught_list(adv_set, {"judge": {}}, "bleu")


def test_on_a_built_set() -> None:
    source = Dataset("d", [Example(
        id=f"q{i}", group_id=f"q{i}", context=(Turn("A", "how many people are there?"),),
        candidate=reply, references=(reply,), is_reference=True)
        for i, reply in enumerate(["there is only one person", "the man can open the door",
                                   "she was born in 1975"])])
    adv, report = make_adversarial_set(source, kinds=("negation", "number", "date"), per_item=2)
    # A judge that scores by length cannot tell "is" from "is not" -- it prefers the longer one.
    judge = {ex.id: len(ex.candidate) / 100 for ex in adv}
    [row] = discernment_table(adv, {"length": judge})
    assert row.n_positive == report.items_used == 3
    assert row.n_adversarial == report.total_candidates
    assert sum(row.hist_adversarial) == row.n_adversarial
    assert len(caught_list(adv, {"length": judge}, "length")) == round(row.share_at_or_above * row.n_pairs)
