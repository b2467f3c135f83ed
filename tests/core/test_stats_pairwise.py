"""Pairwise statistics against hand-computed values on small tables, and Bradley-Terry against scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from dialjudge.core.stats.pairwise import (
    HUMAN_TIE,
    AskedVerdict,
    bradley_terry,
    candidate_scores,
    human_pair_verdicts,
    humans_as_asked,
    length_preference,
    pair_accuracy,
    position_stats,
    win_rates,
)


def v(first: str, second: str, verdict: str | None, context: str = "c") -> AskedVerdict:
    return AskedVerdict(context, first, second, verdict)  # type: ignore[arg-type]  # test data: literal strings


# Context c has candidates x, y, z; every pair asked in both orders. Context d has one pair, one order failed.
TABLE = [
    v("x", "y", "first"), v("y", "x", "second"),   # x wins both ways: consistent
    v("x", "z", "first"), v("z", "x", "first"),    # first position wins both times: flips (x, then z)
    v("y", "z", "tie"), v("z", "y", "second"),     # tie, then y wins: flips
    v("p", "q", "second", "d"), v("q", "p", None, "d"),  # one order failed: not counted as both-orders
]


def test_position_stats_by_hand() -> None:
    stats = position_stats(TABLE)
    # Valid verdicts: 7; first wins: xy, xz, zx = 3; second wins: yx, zy, pq = 3; ties: 1.
    assert (stats.verdicts, stats.first_wins, stats.second_wins, stats.ties) == (7, 3, 3, 1)
    # Pairs with both orders valid: {x,y}, {x,z}, {y,z}; flips: {x,z} and {y,z}.
    assert (stats.both_orders, stats.flips) == (3, 2)
    assert stats.flip_share == pytest.approx(2 / 3)
    assert stats.consistent_share == pytest.approx(1 / 3)
    assert stats.first_win_share == pytest.approx(3 / 6)
    assert stats.tie_share == pytest.approx(1 / 7)


def test_length_preference_by_hand() -> None:
    lengths = {"x": 10, "y": 5, "z": 10, "p": 3, "q": 8}
    pref = length_preference(TABLE, lengths)
    # Decisive: xy->x (longer), yx->x (longer), xz->x (same length: out), zx->z (same: out),
    # zy->y (shorter), pq->q (longer). n = 4, longer wins = 3.
    assert (pref.n, pref.longer_wins) == (4, 3)
    assert pref.share == pytest.approx(0.75)


def test_win_rates_count_ties_as_half() -> None:
    rates = win_rates(TABLE)
    # x: xy W, yx W, xz W, zx L -> 3/4. y: xy L, yx L, yz T, zy W -> 1.5/4. z: xz L, zx W, yz T, zy L -> 1.5/4.
    # pq: the second (q) wins -> p 0/1, q 1/1 (the failed order counts for nobody).
    assert rates == pytest.approx({"x": 0.75, "y": 0.375, "z": 0.375, "p": 0.0, "q": 1.0})


def test_human_pairs_and_accuracy_with_ties() -> None:
    ratings = {"x": 4.0, "y": 3.0, "z": 3.0, "p": 2.0, "q": None}
    human = human_pair_verdicts(ratings, [("x", "y"), ("x", "z"), ("y", "z"), ("p", "q")])
    assert human == {frozenset("xy"): "x", frozenset("xz"): "x", frozenset("yz"): HUMAN_TIE}  # q unrated
    acc = pair_accuracy(TABLE, human)
    # Judged orders with a human verdict: xy(x ok), yx(x ok), xz(x ok), zx(z, wrong), yz(tie ok), zy(y, wrong).
    assert (acc.n, acc.correct) == (6, 4)
    assert acc.accuracy == pytest.approx(4 / 6)
    assert (acc.n_decisive, acc.correct_decisive) == (4, 3)
    assert (acc.human_ties, acc.judge_ties) == (2, 1)

    as_asked = humans_as_asked(TABLE, human)
    humans = position_stats(as_asked)
    # The humans do not see an order: no flips, and with both orders asked their first-position share is 1/2.
    assert (humans.both_orders, humans.flips) == (3, 0)
    assert humans.first_win_share == pytest.approx(0.5)


def test_bradley_terry_two_players_hand_solved() -> None:
    # x beats y 3 times, y beats x once: the MLE has π_x / π_y = 3 (P(x beats y) = 3/4).
    pi = bradley_terry({("x", "y"): 3, ("y", "x"): 1}, prior=0)
    assert pi["x"] / pi["y"] == pytest.approx(3.0, rel=1e-8)
    assert pi["x"] * pi["y"] == pytest.approx(1.0)  # scaled to a geometric mean of 1


def test_bradley_terry_with_prior_against_hand_solved_fixed_point() -> None:
    # One win each way: by symmetry both strengths equal the reference's, π = 1; check the MM fixed point
    # by hand: π_x = (1 + 0.5) / (2 / (π_x + π_y) + 2 * 0.5 / (π_x + 1)) = 1.5 / (1 + 0.5) = 1.
    pi = bradley_terry({("x", "y"): 1.0, ("y", "x"): 1.0}, prior=0.5)
    assert pi == pytest.approx({"x": 1.0, "y": 1.0})


def _scipy_bt(wins: dict[tuple[str, str], float], prior: float) -> dict[str, float]:
    players = sorted({p for pair in wins for p in pair})
    index = {p: k for k, p in enumerate(players)}

    def nll(theta: np.ndarray) -> float:
        total = 0.0
        for (i, j), w in wins.items():
            a, b = theta[index[i]], theta[index[j]]
            total -= w * (a - np.logaddexp(a, b))
        for k in range(len(players)):  # prior virtual wins and losses against a reference at log-strength 0
            total -= prior * (theta[k] - np.logaddexp(theta[k], 0.0))
            total -= prior * (0.0 - np.logaddexp(theta[k], 0.0))
        return float(total)

    result = minimize(nll, np.zeros(len(players)), method="BFGS", options={"gtol": 1e-10})
    return {p: math.exp(result.x[index[p]]) for p in players}


@pytest.mark.parametrize("prior", [0.5, 2.0])
def test_bradley_terry_matches_scipy_on_a_table_with_an_unbeaten_player(prior: float) -> None:
    wins = {("a", "b"): 2.0, ("a", "c"): 1.0, ("b", "c"): 1.5, ("c", "b"): 0.5, ("b", "d"): 1.0,
            ("d", "c"): 1.0, ("c", "d"): 1.0}
    mm = bradley_terry(wins, prior=prior)
    reference = _scipy_bt(wins, prior)
    for player, value in reference.items():
        assert mm[player] == pytest.approx(value, rel=1e-4)
    assert mm["a"] > mm["b"] > 1.0  # a never lost; the prior keeps its strength finite


def test_bradley_terry_matches_scipy_without_prior_on_a_connected_table() -> None:
    wins = {("a", "b"): 2.0, ("b", "a"): 1.0, ("b", "c"): 3.0, ("c", "b"): 1.0, ("c", "a"): 1.0, ("a", "c"): 2.0}
    mm = bradley_terry(wins, prior=0)
    ref = _scipy_bt(wins, 0.0)
    geo = math.exp(sum(math.log(x) for x in ref.values()) / 3)
    for player, value in ref.items():
        assert mm[player] == pytest.approx(value / geo, rel=1e-4)


def test_bradley_terry_refuses_a_player_without_wins_at_prior_zero() -> None:
    with pytest.raises(ValueError, match="MLE does not exist"):
        bradley_terry({("a", "b"): 1.0}, prior=0)


def test_candidate_scores_are_per_context_and_transform_strengths() -> None:
    scores = candidate_scores(TABLE, prior=0.5)
    assert set(scores.bt) == {"x", "y", "z", "p", "q"}
    for c, value in scores.bt.items():
        assert value == pytest.approx(math.exp(scores.bt_log_strength[c]) / (1 + math.exp(scores.bt_log_strength[c])))
    assert scores.bt["x"] > scores.bt["y"]
    # Context d alone: q beat p once; with the prior, the strengths solve a small fixed point checked by scipy.
    ref = _scipy_bt({("q", "p"): 1.0}, 0.5)
    assert scores.bt["q"] == pytest.approx(ref["q"] / (1 + ref["q"]), rel=1e-4)
    assert scores.bt["p"] == pytest.approx(ref["p"] / (1 + ref["p"]), rel=1e-4)


def test_probability_answers_count_their_expected_point_in_the_candidate_scores() -> None:
    # x shown first gets p(first) + p(tie)/2 = 0.9; shown second it gets 1 - 0.7 = 0.3.
    soft = [AskedVerdict("c", "x", "y", "first", 0.9), AskedVerdict("c", "y", "x", "first", 0.7)]
    assert win_rates(soft) == pytest.approx({"x": (0.9 + 0.3) / 2, "y": (0.1 + 0.7) / 2})
    # Bradley-Terry on expected points: x 1.2 "wins" over y, y 0.8 over x -> π_x / π_y = 1.5.
    scores = candidate_scores(soft, prior=0)
    assert math.exp(scores.bt_log_strength["x"] - scores.bt_log_strength["y"]) == pytest.approx(1.5, rel=1e-8)
    # The hard verdicts still say "first" twice: one flip, and every decisive verdict went to the first position.
    stats = position_stats(soft)
    assert (stats.flips, stats.first_win_share) == (1, 1.0)
