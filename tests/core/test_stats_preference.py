"""core.stats.preference against hand-computed values: the human label and its ties, human-human
agreement with and without ties, agreement with ties counted and excluded, κ, tie-calibrated accuracy,
flips, first-position and longer-reply wins; and the intervals against a simulation with a known truth."""

from __future__ import annotations

import random

import numpy as np
import pytest

from dialjudge.core.stats.preference import (
    TIE,
    A,
    B,
    JudgedPair,
    OrderVerdict,
    agreement,
    best_epsilon,
    by_category,
    human_agreement,
    human_majority,
    label_with_band,
    longer_wins,
    order_stats,
    tie_calibrated_accuracy,
)

#: The votes of tests/data/judge_bench_pairs.json.
VOTES = {"p1": [A, A, A], "p2": [B, B, TIE], "p3": [TIE, TIE, A], "p4": [A, B], "p5": [B], "p6": [A, B, B]}
#: Reply lengths in words (A, B) of the same file.
LENGTHS = {"p1": (6, 14), "p2": (1, 12), "p3": (1, 4), "p4": (1, 1), "p5": (5, 1), "p6": (1, 10)}
#: A judge's verdict by reply with A shown first, then with B shown first.
ORDERS = {"p1": (A, A), "p2": (A, B), "p3": (TIE, TIE), "p4": (A, A), "p5": (B, B), "p6": (A, A)}
CATEGORY = {"p1": "knowledge", "p2": "language", "p3": "knowledge", "p4": "language", "p5": "math", "p6": "language"}


def judged(orders: dict[str, tuple[str | None, str | None]] = ORDERS) -> list[JudgedPair]:
    out = []
    for pair, votes in VOTES.items():
        majority = human_majority(votes)
        a_first, b_first = orders.get(pair, (None, None))
        out.append(JudgedPair(pair, pair, majority.label, *LENGTHS[pair],
                              a_first=None if a_first is None else OrderVerdict(a_first),
                              b_first=None if b_first is None else OrderVerdict(b_first),
                              category=CATEGORY[pair], human_split=majority.split))
    return out


def test_the_human_label_is_the_majority_and_a_shared_top_count_is_a_split_tie() -> None:
    assert [human_majority(v).label for v in VOTES.values()] == [A, B, TIE, TIE, B, B]
    assert [human_majority(v).split for v in VOTES.values()] == [False, False, False, True, False, False]
    assert human_majority([A, TIE]).label == TIE and human_majority([A, TIE]).split
    assert human_majority([]).label is None


def test_human_human_agreement_as_mt_bench_reports_it() -> None:
    # Pairs with several votes: p1 1, p2 1/3, p3 1/3, p4 0, p6 1/3 -> mean 2/5. Pooled votes A 6, B 5, tie 3
    # of 14: p_e = 70/196, kappa = (2/5 - 70/196) / (1 - 70/196) = 1/15.
    with_ties = human_agreement(list(VOTES.values()))
    assert (with_ties.pairs, with_ties.vote_pairs) == (5, 3 + 3 + 3 + 1 + 3)
    assert with_ties.percent == pytest.approx(2 / 5) and with_ties.kappa == pytest.approx(1 / 15)
    # Without tie votes: p1 1, p2 1, p4 0, p6 1/3 (p3 keeps one vote) -> 7/12; A 5, B 5: kappa = 1/6.
    without = human_agreement(list(VOTES.values()), ties=False)
    assert without.pairs == 4 and without.percent == pytest.approx(7 / 12) and without.kappa == pytest.approx(1 / 6)


def test_fleiss_kappa_is_what_human_agreement_reports_when_every_pair_has_the_same_number_of_votes() -> None:
    rng = random.Random(4)
    votes = [[rng.choice((A, B, TIE)) for _ in range(3)] for _ in range(40)]
    # Fleiss (1971): P_i = (sum_j n_ij^2 - n) / (n (n - 1)), p_j = share of all assignments to j.
    counts = np.array([[v.count(label) for label in (A, B, TIE)] for v in votes], dtype=float)
    n = 3
    p_i = ((counts ** 2).sum(axis=1) - n) / (n * (n - 1))
    p_j = counts.sum(axis=0) / counts.sum()
    fleiss = (p_i.mean() - (p_j ** 2).sum()) / (1 - (p_j ** 2).sum())
    assert human_agreement(votes).kappa == pytest.approx(fleiss)


def test_the_judge_verdict_of_a_pair_needs_the_same_winner_in_both_orders() -> None:
    pairs = {p.pair: p for p in judged()}
    assert [p.verdict for p in pairs.values()] == [A, TIE, TIE, A, B, A]
    assert pairs["p2"].flipped and not pairs["p1"].flipped
    one_order = JudgedPair("x", "x", A, 1, 2, a_first=None, b_first=OrderVerdict(B))
    assert one_order.verdict == B and one_order.flipped is None and one_order.margin == -1.0


def test_agreement_with_ties_counted_and_excluded() -> None:
    pairs = judged()
    counted = agreement(pairs, ties=True, n_boot=0)
    assert (counted.n, counted.agree, counted.excluded) == (6, 3, {})
    # humans A B tie tie B B, judge A tie tie A B A: p_o = 1/2, p_e = (1*3 + 3*1 + 2*2)/36 -> kappa 4/13.
    assert counted.kappa == pytest.approx(4 / 13)
    excluded = agreement(pairs, ties=False, n_boot=0)
    assert excluded.excluded == {"humans tie": 2, "judge tie": 1}
    # Left: p1 (A, A), p5 (B, B), p6 (B, A): 2/3; p_e = 1/3 * 2/3 + 2/3 * 1/3 = 4/9 -> kappa 0.4.
    assert (excluded.n, excluded.agree) == (3, 2) and excluded.kappa == pytest.approx(0.4)


def test_a_pair_without_a_verdict_is_excluded_by_reason_and_one_order_is_enough() -> None:
    orders = dict(ORDERS, p1=(None, None), p5=(B, None))
    pairs = judged(orders)
    counted = agreement(pairs, ties=True, n_boot=0)
    assert counted.excluded == {"no judge verdict": 1} and (counted.n, counted.agree) == (5, 2)
    stats = order_stats(pairs)
    assert (stats.both_orders, stats.one_order) == (4, 1)


def test_flips_first_position_and_longer_reply_wins() -> None:
    stats = order_stats(judged())
    assert (stats.both_orders, stats.flips) == (6, 1)
    # Decisive asked orders: 10 (p3's two ties left out); the reply shown first won p1 once, p2 twice,
    # p4, p5 and p6 once each.
    assert (stats.decisive, stats.first_wins) == (10, 6)
    judge = longer_wins(judged(), humans=False)
    assert (judge.n, judge.longer_wins) == (3, 0)  # p1, p5, p6 decisive with different lengths; shorter won
    humans = longer_wins(judged(), humans=True)
    assert (humans.n, humans.longer_wins) == (4, 2)  # p1 shorter, p2 longer, p5 shorter, p6 longer


def test_agreement_by_category() -> None:
    categories = by_category(judged(), n_boot=0)
    assert list(categories) == ["knowledge", "language", "math"]
    counted, excluded = categories["language"]
    assert (counted.n, counted.agree) == (3, 0)  # p2 B/tie, p4 tie/A, p6 B/A
    assert excluded.n == 1 and excluded.excluded == {"judge tie": 1, "humans tie": 1}


def test_the_tie_band_is_the_one_that_maximises_accuracy_with_ties_counted() -> None:
    assert label_with_band(0.2, 0.1) == A and label_with_band(-0.2, 0.1) == B and label_with_band(0.05, 0.1) == TIE
    assert label_with_band(0.0, 0.0) == TIE
    # Ties at 0.1 and 0.3, wins at 0.5 and -0.6: eps 0.3 gets all four.
    assert best_epsilon([0.1, 0.3, 0.5, -0.6], [TIE, TIE, A, B]) == pytest.approx(0.3)
    # Equal accuracy: the smallest band.
    assert best_epsilon([0.5, -0.6], [A, B]) == 0.0


def test_tie_calibration_chooses_the_band_on_one_half_and_tests_it_on_the_other() -> None:
    margins = {"t1": 0.1, "t2": 0.1, "d1": 0.9, "d2": -0.9}
    human = {"t1": TIE, "t2": TIE, "d1": A, "d2": B}
    pairs = [JudgedPair(p, p, human[p], 1, 2, a_first=OrderVerdict(A if m > 0 else B, m)) for p, m in margins.items()]
    for seed in range(6):
        result = tie_calibrated_accuracy(pairs, seed=seed)
        assert result.n == 4 and len(result.folds) == 2
        for fold in result.folds:
            tuned = {p[0] for p in fold.tuned}  # "t" or "d"
            # Hand rule: tuned on ties only or on a tie and a win -> eps 0.1, all of the other half right;
            # tuned on the two wins only -> eps 0, and the two ties of the other half are wrong.
            assert fold.epsilon == pytest.approx(0.0 if tuned == {"d"} else 0.1)
            assert fold.correct == (0 if tuned == {"d"} else 2)


def test_a_calibrated_tie_band_beats_no_band_on_a_judge_that_never_says_tie() -> None:
    rng = random.Random(1)
    pairs = []
    for k in range(400):
        truth = rng.uniform(-1, 1)
        label = TIE if abs(truth) < 0.3 else (A if truth > 0 else B)
        margin = truth + rng.gauss(0, 0.1)
        pairs.append(JudgedPair(f"p{k}", f"p{k}", label, 1, 2, a_first=OrderVerdict(A if margin > 0 else B, margin)))
    calibrated = tie_calibrated_accuracy(pairs, seed=0)
    plain = agreement(pairs, ties=True, n_boot=0)
    assert calibrated.share is not None and plain.share is not None
    assert plain.share < 0.75 < calibrated.share  # a third of the pairs are true ties
    assert all(0.15 < f.epsilon < 0.45 for f in calibrated.folds)


def test_intervals_resample_prompts_when_a_prompt_has_several_pairs() -> None:
    pairs = [JudgedPair(f"q{q}-{k}", f"q{q}", A, 1, 2, a_first=OrderVerdict(A if (q + k) % 3 else B))
             for q in range(10) for k in range(3)]
    result = agreement(pairs, ties=True, n_boot=200, seed=3)
    assert (result.unit, result.units) == ("prompts", 10)
    single = agreement(pairs[::3], ties=True, n_boot=200, seed=3)
    assert (single.unit, single.units) == ("pairs", 10)


def _coverage(clustered_by_prompt: bool, sims: int = 200) -> float:
    """Share of 95% intervals that hold the true agreement, with pairs of one prompt correlated."""
    rng = np.random.default_rng(11)
    hits = 0
    for sim in range(sims):
        pairs = []
        for q in range(50):
            shift = rng.normal(0, 1.5)  # a prompt the judge finds easy or hard
            for k in range(10):
                right = rng.random() < 1 / (1 + np.exp(-(0.847 + shift)))
                pairs.append(JudgedPair(f"q{q}-{k}", f"q{q}" if clustered_by_prompt else f"q{q}-{k}", A, 1, 2,
                                        a_first=OrderVerdict(A if right else B)))
        result = agreement(pairs, ties=True, n_boot=300, seed=sim)
        assert result.ci is not None
        hits += result.ci[0] <= TRUE_AGREEMENT <= result.ci[1]
    return hits / sims


#: E[1 / (1 + exp(-(0.847 + N(0, 1.5²))))] by numerical integration (the simulation's true agreement).
TRUE_AGREEMENT = float(np.mean(1 / (1 + np.exp(-(0.847 + np.random.default_rng(0).normal(0, 1.5, 2_000_000))))))


def test_prompt_intervals_cover_the_true_agreement_and_pair_intervals_would_not() -> None:
    by_prompt = _coverage(True)
    by_pair = _coverage(False)
    assert 0.90 <= by_prompt <= 0.99
    assert by_pair < 0.82  # treating correlated pairs as independent makes the interval too narrow


def test_pointwise_against_pairwise_on_the_same_pairs() -> None:
    from dialjudge.core.judges.post_run.preference_report import implied_verdict
    from dialjudge.core.stats.preference import compare_agreement

    assert implied_verdict(0.8, 0.3, 0.1) == OrderVerdict(A, pytest.approx(0.5))
    assert implied_verdict(0.4, 0.45, 0.1).verdict == TIE and implied_verdict(0.2, 0.9, 0.1).verdict == B
    assert implied_verdict(None, 0.9, 0.1).verdict is None
    pairwise = judged()  # right on p1, p3, p5
    # A pointwise judge right on p1, p2, p3, p5, p6 and with no score on p4.
    scores = {"p1": (0.9, 0.1), "p2": (0.2, 0.7), "p3": (0.5, 0.52), "p4": (None, 0.4), "p5": (0.1, 0.8),
              "p6": (0.3, 0.6)}
    pointwise = [JudgedPair(p.pair, p.prompt, p.human, p.length_a, p.length_b,
                            direct=implied_verdict(*scores[p.pair], 0.05)) for p in pairwise]
    assert [p.verdict for p in pointwise] == [A, B, TIE, None, B, B]
    result = compare_agreement(pointwise, pairwise, n_boot=0)
    # p4 left out; of p1 p2 p3 p5 p6: pointwise right on all 5, pairwise on p1 p3 p5.
    assert (result.n, result.agree_x, result.agree_y, result.only_x, result.only_y) == (5, 5, 3, 2, 0)
    assert result.excluded == 1 and result.difference == pytest.approx(2 / 5)
    assert result.p_value == pytest.approx(0.5)  # exact McNemar: 2 discordant pairs, both one way: 2 * (1/2)^2


def test_the_paired_difference_interval_covers_zero_for_two_equally_good_judges() -> None:
    from dialjudge.core.stats.preference import compare_agreement

    rng = np.random.default_rng(5)
    covered = rejected = 0
    sims = 100
    for sim in range(sims):
        x, y = [], []
        for q in range(40):
            hard = rng.normal(0, 1.0)
            for k in range(4):
                p_right = 1 / (1 + np.exp(-(0.8 + hard)))
                for out in (x, y):
                    right = rng.random() < p_right
                    out.append(JudgedPair(f"q{q}-{k}", f"q{q}", A, 1, 2, direct=OrderVerdict(A if right else B)))
        result = compare_agreement(x, y, n_boot=200, seed=sim)
        assert result.ci is not None and result.p_value is not None
        covered += result.ci[0] <= 0.0 <= result.ci[1]
        rejected += result.p_value < 0.05
    assert 0.88 <= covered / sims <= 1.0
    assert rejected / sims <= 0.12
