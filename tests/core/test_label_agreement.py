"""Judge labels against the human majority (dialjudge.core.stats.label_agreement), checked by hand
and against independent computations (the krippendorff package, scipy's Mann-Whitney U)."""

from __future__ import annotations

import math
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from scipy.stats import mannwhitneyu

from dialjudge.core.loaders import read_judge_bench
from dialjudge.core.stats.label_agreement import (
    TieRule,
    compare_labels,
    is_aggregate_only,
    label_ceiling,
    majority_labels,
)
from judge_bench_files import SAFETY, SAFETY_VOTES, labelled, safety_set, write_set

JUDGE = {"s1": "Yes", "s2": "No", "s3": "Yes", "s4": "No", "s5": "No", "s6": None}
P_YES = {"s1": 0.9, "s2": 0.2, "s3": 0.7, "s4": 0.4, "s5": 0.4, "s6": None}


@pytest.fixture()
def safety(tmp_path: Path):
    return read_judge_bench(safety_set(tmp_path))


def test_majority_ties_follow_the_rule(safety) -> None:
    # s3 is Yes/No 1-1 (one rater missing); the file publishes "Yes" for it.
    for rule, expected in (("exclude", None), ("first", "No"), ("published", "Yes")):
        majority = majority_labels(safety.examples, "safety", rule)
        assert majority.ties == {"s3"}
        assert majority.values["s3"] == expected
        assert majority.values["s1"] == "Yes" and majority.values["s5"] == "No"
        assert majority.ties_kept == (set() if expected is None else {"s3"})


def test_binary_comparison_by_hand_ties_excluded(safety) -> None:
    r = compare_labels(safety.examples, "safety", JUDGE, probabilities=P_YES, positive="Yes",
                       tie_rule=TieRule.EXCLUDE, n_boot=200)
    # Kept: s1 (Yes/Yes), s2 (No/No), s4 (human Yes, judge No), s5 (No/No); s6 failed, s3 a tie.
    assert r.n == 4
    assert dict(r.exclusions) == {"not_judged": 0, "failed": 1, "invalid_label": 0, "no_human_label": 0,
                                  "tie_excluded": 1}
    assert (r.n_ties, r.n_ties_kept) == (1, 0)
    assert r.confusion == ((2, 0), (1, 1))  # rows human No/Yes, columns judge No/Yes
    # p_o = 3/4; marginals human (1/2, 1/2), judge (3/4, 1/4): p_e = 1/2; kappa = (3/4 - 1/2) / (1/2).
    assert r.percent_agreement.value == pytest.approx(0.75)
    assert r.kappa.value == pytest.approx(0.5)
    no, yes = r.per_label
    assert (no.label, no.precision.value, no.recall.value) == ("No", pytest.approx(2 / 3), 1.0)
    assert (yes.label, yes.precision.value, yes.recall.value) == ("Yes", 1.0, 0.5)
    # AUC: positives (human Yes) s1 0.9, s4 0.4; negatives s2 0.2, s5 0.4: (1 + 1 + 1 + 0.5) / 4.
    assert r.auc is not None and r.auc.value == pytest.approx(0.875)
    u = mannwhitneyu([0.9, 0.4], [0.2, 0.4]).statistic
    assert r.auc.value == pytest.approx(u / 4)
    # No CI on 4 items in fewer than MIN_CONTEXTS contexts (stats/small_samples.py).
    for e in (r.percent_agreement, r.kappa, r.alpha, r.auc):
        assert math.isnan(e.low) and math.isnan(e.high)


def test_alpha_adds_the_judge_as_one_more_rater(safety) -> None:
    r = compare_labels(safety.examples, "safety", JUDGE, tie_rule="exclude", n_boot=0)
    kept = ["s1", "s2", "s4", "s5"]
    code = {"No": 0.0, "Yes": 1.0, None: np.nan}
    data = [[code[SAFETY_VOTES[i][a]] for i in kept] for a in range(3)] + [[code[JUDGE[i]] for i in kept]]
    expected = krippendorff.alpha(reliability_data=np.array(data), level_of_measurement="nominal")
    assert r.alpha.value == pytest.approx(expected)
    assert math.isnan(r.alpha.low)  # --bootstrap 0: no interval


def test_kept_ties_change_the_numbers(safety) -> None:
    first = compare_labels(safety.examples, "safety", JUDGE, tie_rule="first", n_boot=0)
    published = compare_labels(safety.examples, "safety", JUDGE, tie_rule="published", n_boot=0)
    assert first.n == published.n == 5 and (first.n_ties, first.n_ties_kept) == (1, 1)
    # s3: judge Yes; "first" makes the humans No (a miss), "published" Yes (a hit).
    assert first.percent_agreement.value == pytest.approx(3 / 5)
    assert published.percent_agreement.value == pytest.approx(4 / 5)
    # published: table [[2, 0], [1, 2]]: p_o = 4/5, p_e = (2/5)(3/5) + (3/5)(2/5) = 12/25.
    assert published.kappa.value == pytest.approx((4 / 5 - 12 / 25) / (1 - 12 / 25))


def test_bootstrap_matches_a_direct_recomputation(safety, monkeypatch) -> None:
    """The vectorised resamples equal recomputing each statistic on the resampled items (the
    floor on contexts lowered so that 4 items get an interval at all)."""
    from scipy import stats

    from dialjudge.core.stats import bootstrap as bs
    from dialjudge.core.stats import label_agreement

    monkeypatch.setattr(label_agreement, "MIN_CONTEXTS_LABELS", 1)
    r = compare_labels(safety.examples, "safety", JUDGE, probabilities=P_YES, positive="Yes", n_boot=300, seed=7)
    kept = ["s1", "s2", "s4", "s5"]
    human = {"s1": "Yes", "s2": "No", "s4": "Yes", "s5": "No"}
    groups = [safety.get(i).group_id for i in kept]
    weights = bs.resample(len(kept), groups, n_boot=300, seed=7).item_weights
    agreements = []
    for w in weights:
        items = [i for i, m in zip(kept, w, strict=False) for _ in range(int(m))]
        agreements.append(sum(JUDGE[i] == human[i] for i in items) / len(items))
    units = len(set(groups))  # the expanded percentile interval's tails
    tail = 100 * stats.norm.sf(math.sqrt(units / (units - 1)) * stats.t.ppf(0.975, units - 1))
    low, high = np.percentile(agreements, [tail, 100 - tail])
    assert (r.percent_agreement.low, r.percent_agreement.high) == (pytest.approx(low), pytest.approx(high))


def test_many_raters_and_three_labels(tmp_path: Path) -> None:
    annotations = [{"metric": "severity", "category": "categorical", "labels_list": ["none", "mild", "severe"]}]
    votes = {"m1": ["none"] * 5 + ["mild"] * 2, "m2": ["mild"] * 4 + ["severe"] * 3,
             "m3": ["severe"] * 6 + ["none"], "m4": ["none", "mild", "severe", "none", "mild", "severe", "none"],
             "m5": ["mild"] * 7}
    instances = [labelled(i, f"A: q{k}", f"r{k}", "severity", v) for k, (i, v) in enumerate(votes.items())]
    dataset = read_judge_bench(write_set(tmp_path, "severity", annotations, instances))
    judge = {"m1": "none", "m2": "severe", "m3": "severe", "m4": "mild", "m5": "mild"}
    r = compare_labels(dataset.examples, "severity", judge, n_boot=0)
    # m4 votes none 3, mild 2, severe 2 -> none. Humans: none, mild, severe, none, mild.
    assert r.n == 5 and r.confusion == ((1, 1, 0), (0, 1, 1), (0, 0, 1))
    assert r.percent_agreement.value == pytest.approx(3 / 5)
    # p_e = sum over labels of human share x judge share = (2/5)(1/5) + (2/5)(2/5) + (1/5)(2/5) = 8/25.
    assert r.kappa.value == pytest.approx((3 / 5 - 8 / 25) / (1 - 8 / 25))
    assert r.auc is None  # three labels: no ROC-AUC
    precision = {s.label: s.precision.value for s in r.per_label}
    assert precision == {"none": 1.0, "mild": 0.5, "severe": 0.5}


def test_ceiling_by_hand(safety) -> None:
    """On 6 items, with the shared-items minimum at 1 (the minimum itself: tests/core/test_sparse_raters.py)."""
    c = label_ceiling(safety.examples, "safety", "exclude", min_shared_items=1)
    assert (c.n_items, c.n_annotators, c.aggregate_only) == (6, 3, False)
    rows = [[v[a] for v in SAFETY_VOTES.values()] for a in range(3)]

    def kappa(a, b):
        pairs = [(x, y) for x, y in zip(a, b, strict=False) if x is not None and y is not None]
        po = sum(x == y for x, y in pairs) / len(pairs)
        pe = sum((sum(x == lab for x, _ in pairs) / len(pairs)) * (sum(y == lab for _, y in pairs) / len(pairs))
                 for lab in ("No", "Yes"))
        return po, (po - pe) / (1 - pe), len(pairs)

    pairs = [kappa(rows[a], rows[b]) for a, b in ((0, 1), (0, 2), (1, 2))]
    # Means over the pairs weighted by the items each pair shares.
    assert c.pairwise_agreement == pytest.approx(np.average([p for p, _, _ in pairs], weights=[n for *_, n in pairs]))
    assert c.pairwise_kappa == pytest.approx(np.average([k for _, k, _ in pairs], weights=[n for *_, n in pairs]))
    code = {"No": 0.0, "Yes": 1.0, None: np.nan}
    assert c.alpha == pytest.approx(krippendorff.alpha(
        reliability_data=np.array([[code[v] for v in row] for row in rows]), level_of_measurement="nominal"))
    # Annotator 1 against the majority of annotators 2 and 3 (two votes: ties are excluded).
    others = [(rows[1][i], rows[2][i]) for i in range(6)]
    usable = [i for i, (x, y) in enumerate(others) if x is not None and y is not None and x == y
              or (x is None) != (y is None)]
    majority = [next(v for v in others[i] if v is not None) for i in usable]
    mine = [rows[0][i] for i in usable]
    first = c.per_annotator[0]
    assert first.n == len(usable)
    assert first.percent_agreement == pytest.approx(sum(a == b for a, b in zip(mine, majority, strict=False)) / len(usable))


def test_aggregate_only_labels_have_no_ceiling(tmp_path: Path) -> None:
    instances = [{"id": f"t{k}", "instance": f"text {k}", "annotations": {"safety": {"majority_human": lab}}}
                 for k, lab in enumerate(["Yes", "No", "Yes"])]
    dataset = read_judge_bench(write_set(tmp_path, "agg", SAFETY, instances))
    assert is_aggregate_only(dataset.examples, "safety")
    c = label_ceiling(dataset.examples, "safety")
    assert c.aggregate_only and c.annotators_text == "1 aggregate label, no individual raters"
    assert math.isnan(c.pairwise_kappa) and "cannot be computed" in c.reasons[0]
    r = compare_labels(dataset.examples, "safety", {"t0": "Yes", "t1": "Yes", "t2": "Yes"}, n_boot=0)
    assert r.n == 3 and r.percent_agreement.value == pytest.approx(2 / 3)


def test_exclusion_reasons_are_counted_once(safety) -> None:
    judge = {"s1": "Maybe", "s2": "No", "s4": float("nan")}
    r = compare_labels(safety.examples, "safety", judge, n_boot=0)
    assert dict(r.exclusions) == {"not_judged": 3, "failed": 1, "invalid_label": 1, "no_human_label": 0,
                                  "tie_excluded": 0}
    assert r.n == 1 and r.excluded == 5


def test_reports_say_a_label_quality_is_pooled_by_majority(safety) -> None:
    from dialjudge.core.evaluation import evaluate

    report = evaluate(safety, qualities=["safety"], include_metrics=False, n_boot=0,
                      extra_scores={"j": {ex.id: 0.5 for ex in safety}})
    assert any(n.startswith("human labels: majority of the annotators for safety") for n in report.notes)
    judge = next(r for r in report.records if r["evaluator"] == "j")
    assert "label against label" in judge["reason"]


def test_ceiling_alpha_has_a_bootstrap_interval(safety, monkeypatch) -> None:
    from dialjudge.core.stats import label_agreement

    assert math.isnan(label_ceiling(safety.examples, "safety", n_boot=300, seed=3).alpha_low)  # 6 contexts: too few
    monkeypatch.setattr(label_agreement, "MIN_CONTEXTS_LABELS", 1)  # to check the mechanics on 6 items
    plain = label_ceiling(safety.examples, "safety")
    assert math.isnan(plain.alpha_low)  # no resamples asked for
    c = label_ceiling(safety.examples, "safety", n_boot=300, seed=3)
    assert c.alpha == plain.alpha and c.alpha_low <= c.alpha <= c.alpha_high
    # The vectorised resample equals alpha recomputed by the krippendorff package on one resample.
    from dialjudge.core.stats import bootstrap as bs

    weights = bs.resample(6, [ex.group_id for ex in safety.examples], n_boot=1, seed=11).item_weights[0]
    code = {"No": 0.0, "Yes": 1.0, None: np.nan}
    columns = [i for i, w in zip(SAFETY_VOTES, weights, strict=True) for _ in range(int(w))]
    data = np.array([[code[SAFETY_VOTES[i][a]] for i in columns] for a in range(3)])
    monkeypatch.setattr(bs, "ZERO_WIDTH", -1.0)  # one resample: its value is the (zero-width) interval
    one = label_ceiling(safety.examples, "safety", n_boot=1, seed=11, confidence=0.0)
    assert one.alpha_low == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
