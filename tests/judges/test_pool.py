"""Pooling judges (paper 002's Max-Vote) and their agreement with max-voted humans, checked by hand."""

from __future__ import annotations

import math

import pytest

from dialjudge.core.errors import ConfigError
from dialjudge.core.judges.post_run.pool import (
    PoolMethod,
    default_pool_method,
    judge_label,
    pool_report,
    pool_scores,
    stability,
)
from dialjudge.core.judges.types import Judgment, OutputKind, OutputSpec, ScoringMode
from dialjudge.core.model import BINARY_01, Dataset, Example, Rating, Scale, ScaleKind, Turn

LIKERT_1_5 = Scale(ScaleKind.ORDINAL, 1, 5)


def vote(item: str, judge: str, score: float | None, *, low: float = 0, high: float = 1,
         repeat: int = 0) -> Judgment:
    normalized = None if score is None else (score - low) / (high - low)
    return Judgment(item_id=item, judge=judge, mode=ScoringMode.GENERATE, prompt_hash="h", raw_output="",
                    score=score, normalized=normalized, error=None if score is not None else "no score",
                    repeat=repeat)


def table(labels: dict[str, list[float | None]], items: list[str]) -> dict[str, dict[str, Judgment]]:
    return {j: {i: vote(i, j, s) for i, s in zip(items, scores)} for j, scores in labels.items()}


def dataset(ratings: dict[str, tuple], scale: Scale = BINARY_01) -> Dataset:
    return Dataset("humans", [
        Example(id=i, group_id=i, context=(Turn("user", "hi"),), candidate="hello",
                ratings={"kpi": Rating(tuple(scores), scale)})
        for i, scores in ratings.items()])


def test_max_vote_pools_binary_judges_and_reports_ties() -> None:
    judgments = table({"a": [1, 0, 0, 1], "b": [1, 1, 0, None], "c": [0, None, 0, None]},
                      ["i1", "i2", "i3", "i4"])
    del judgments["b"]["i4"], judgments["c"]["i4"]  # i4 was judged by a alone
    pooled = pool_scores(judgments, PoolMethod.MAX_VOTE)
    assert (pooled["i1"].value, pooled["i1"].n, pooled["i1"].is_tie) == (1, 3, False)
    # b voted 1, a voted 0, c failed (abstains): a tie, broken towards the smaller label.
    assert (pooled["i2"].value, pooled["i2"].n, pooled["i2"].tied) == (0, 2, (0, 1))
    assert (pooled["i3"].value, pooled["i3"].n) == (0, 3)
    assert (pooled["i4"].value, pooled["i4"].n) == (1, 1)
    with pytest.raises(ConfigError, match="no judgments from judge 'z'"):
        pool_scores(judgments, PoolMethod.MAX_VOTE, judges=["a", "z"])


def test_mean_pools_normalised_scores() -> None:
    items = ["i1", "i2"]
    judgments = {
        "a": {i: vote(i, "a", s, low=1, high=5) for i, s in zip(items, [5, 2])},
        "b": {i: vote(i, "b", s, low=1, high=5) for i, s in zip(items, [3, None])},
    }
    pooled = pool_scores(judgments, PoolMethod.MEAN)
    assert pooled["i1"].value == pytest.approx((1.0 + 0.5) / 2) and pooled["i1"].n == 2
    assert pooled["i2"].value == pytest.approx(0.25) and pooled["i2"].n == 1


def test_votes_are_whole_points_on_the_human_scale() -> None:
    assert judge_label(vote("i", "a", 0.7)) == 1.0  # p(yes) = 0.7 votes yes
    assert judge_label(vote("i", "a", 0.5)) == 1.0  # half rounds up, not to even
    assert judge_label(vote("i", "a", 3.4, low=1, high=5), LIKERT_1_5) == 3.0
    assert judge_label(vote("i", "a", 4, low=1, high=5), BINARY_01) == 1.0  # 0.75 of the way
    assert judge_label(vote("i", "a", None)) is None
    assert default_pool_method(OutputSpec(OutputKind.BINARY)) is PoolMethod.MAX_VOTE
    assert default_pool_method(OutputSpec(OutputKind.JSON, 0, 1)) is PoolMethod.MAX_VOTE
    assert default_pool_method(OutputSpec(OutputKind.LIKERT, 1, 5)) is PoolMethod.MEAN


ITEMS = ["i1", "i2", "i3", "i4", "i5", "i6"]
# Five annotators each; the max-voted labels are 1, 0, 0, 0, 1, 1.
HUMANS = {"i1": (1, 1, 1, 0, 0), "i2": (0, 0, 1, 0, 1), "i3": (0, 0, 0, 1, 1),
          "i4": (1, 0, 0, 0, 0), "i5": (1, 1, 1, 1, 0), "i6": (1, 1, 0, 1, 0)}
JUDGES = {"a": [1, 1, 0, 0, 1, 0], "b": [1, 0, 0, 1, 1, 1], "c": [0, 1, 0, 0, 1, 1]}


def test_pool_report_matches_a_hand_computation() -> None:
    report = pool_report(table(JUDGES, ITEMS), dataset(HUMANS), "kpi")
    # a: 4 of 6 agree; both sides say 1 half the time -> p_e = 0.5, kappa = (4/6 - 0.5) / 0.5.
    a = report.judges["a"]
    assert (a.n, a.percent, a.kappa) == (6, pytest.approx(400 / 6), pytest.approx(1 / 3))
    # b: 5 of 6; b says 1 four times -> p_e = 4/6*3/6 + 2/6*3/6 = 0.5, kappa = 2/3.
    assert report.judges["b"].percent == pytest.approx(500 / 6)
    assert report.judges["b"].kappa == pytest.approx(2 / 3)
    assert report.judges["c"].kappa == pytest.approx(1 / 3)
    # Max-Vote of a, b, c: 1, 1, 0, 0, 1, 1 -> 5 of 6 agree, kappa 2/3 (above two of the three judges).
    assert [report.pooled[i].value for i in ITEMS] == [1, 1, 0, 0, 1, 1]
    assert report.pool.name == "Max-Vote(judges)"
    assert (report.pool.percent, report.pool.kappa) == (pytest.approx(500 / 6), pytest.approx(2 / 3))
    assert report.judge_ties == [] and report.human_ties == []


def test_human_ties_are_reported_and_can_be_left_out() -> None:
    humans = {**HUMANS, "i7": (1, 1, 0, 0)}  # 2 against 2: a tie, broken towards 0
    judges = {name: labels + [1] for name, labels in JUDGES.items()}
    kept = pool_report(table(judges, ITEMS + ["i7"]), dataset(humans), "kpi")
    assert kept.human_ties == ["i7"] and kept.pool.n == 7
    assert kept.pool.percent == pytest.approx(500 / 7)
    left_out = pool_report(table(judges, ITEMS + ["i7"]), dataset(humans), "kpi", exclude_human_ties=True)
    assert left_out.excluded == ["i7"] and left_out.pool.n == 6
    assert left_out.pool.percent == pytest.approx(500 / 6)


def test_graded_judges_pool_by_mean_then_vote_on_the_human_scale() -> None:
    items = ["i1", "i2"]
    judgments = {
        "a": {i: vote(i, "a", s, low=1, high=5) for i, s in zip(items, [4, 1])},  # 0.75, 0.0
        "b": {i: vote(i, "b", s, low=1, high=5) for i, s in zip(items, [2, 2])},  # 0.25, 0.25
    }
    report = pool_report(judgments, dataset({"i1": (1, 1, 0), "i2": (0, 0, 0)}), "kpi", method=PoolMethod.MEAN)
    assert report.pool.name == "Mean(judges)"
    assert report.pooled["i1"].value == pytest.approx(0.5) and report.pooled["i2"].value == pytest.approx(0.125)
    # 0.5 rounds up to 1 (agrees), 0.125 to 0 (agrees).
    assert report.pool.percent == 100.0
    assert report.judges["a"].percent == 100.0 and report.judges["b"].percent == 50.0


def test_kappa_is_none_when_undefined() -> None:
    report = pool_report(table({"a": [1, 1]}, ["i1", "i2"]), dataset({"i1": (1, 1), "i2": (1, 0, 1)}), "kpi")
    assert report.judges["a"].percent == 100.0 and report.judges["a"].kappa is None


def test_agreement_needs_a_categorical_human_scale() -> None:
    continuous = Scale(ScaleKind.CONTINUOUS, 0, 1)
    with pytest.raises(ConfigError, match="compare it by correlation"):
        pool_report(table({"a": [1]}, ["i1"]), dataset({"i1": (0.3, 0.8)}, continuous), "kpi")
    with pytest.raises(ConfigError, match="no human ratings of 'other'"):
        pool_report(table({"a": [1]}, ["i1"]), dataset({"i1": (1,)}), "other")


# -- stability ----------------------------------------------------------------------------------


def repeats(values: dict[str, list[list[float | None]]], items: list[str], *, low: float = 0,
            high: float = 1) -> dict[str, dict[str, dict[int, Judgment]]]:
    out: dict[str, dict[str, dict[int, Judgment]]] = {}
    for judge, rounds in values.items():
        for r, scores in enumerate(rounds):
            for i, s in zip(items, scores):
                out.setdefault(judge, {}).setdefault(i, {})[r] = vote(i, judge, s, low=low, high=high, repeat=r)
    return out


def test_stability_of_graded_judges() -> None:
    items = ["i1", "i2", "i3", "i4"]
    up, down = [1, 2, 3, 4], [4, 3, 2, 1]
    data = repeats({"steady": [up, up, up], "flaky": [up, up, down]}, items, low=1, high=5)
    humans = dataset({i: (s, s) for i, s in zip(items, [1, 2, 3, 4])}, LIKERT_1_5)
    result = stability(data, binary=False, dataset=humans, quality="kpi")

    steady = result["steady"]
    assert (steady.repeats, steady.items) == (3, 4)
    assert steady.spearman == pytest.approx(1.0) and steady.pearson == pytest.approx(1.0)
    assert steady.alpha == pytest.approx(1.0)
    assert steady.human.mean == pytest.approx(1.0) and steady.human.std == pytest.approx(0.0)

    flaky = result["flaky"]
    # Pairs (0,1), (0,2), (1,2): rho = 1, -1, -1.
    assert flaky.spearman == pytest.approx(-1 / 3) and flaky.pearson == pytest.approx(-1 / 3)
    assert flaky.alpha < 0
    # Spearman with the humans per repeat: 1, 1, -1 -> mean 1/3, sample std sqrt(4/3).
    assert flaky.human.values == pytest.approx((1.0, 1.0, -1.0))
    assert flaky.human.mean == pytest.approx(1 / 3) and flaky.human.std == pytest.approx(math.sqrt(4 / 3))
    assert flaky.human_measure.startswith("Spearman")
    assert flaky.percent_agreement is None


def test_stability_of_binary_judges() -> None:
    items = ["i1", "i2", "i3", "i4"]
    data = repeats({"a": [[1, 0, 1, 1], [1, 1, 0, 0]], "b": [[1, 0, None, 0], [1, 0, 1, 0]]}, items)
    humans = dataset({"i1": (1, 1, 0), "i2": (0, 0, 1), "i3": (1, 1, 1), "i4": (0, 0, 0)})
    result = stability(data, binary=True, dataset=humans, quality="kpi")
    a = result["a"]
    assert a.percent_agreement == pytest.approx(25.0) and a.spearman is None  # only i1 repeats
    # Against the max-voted humans 1, 0, 1, 0: repeat 0 agrees on 3 of 4, repeat 1 on 2 of 4.
    assert a.human.values == pytest.approx((75.0, 50.0))
    assert a.human.mean == pytest.approx(62.5) and a.human.std == pytest.approx(math.sqrt(2) * 12.5)
    b = result["b"]
    # The failed judgment abstains: 3 items scored twice, all equal.
    assert b.items == 3 and b.percent_agreement == pytest.approx(100.0) and b.alpha == pytest.approx(1.0)
    assert b.human.values == pytest.approx((100.0, 100.0))


def test_stability_without_humans_or_with_one_repeat() -> None:
    data = repeats({"a": [[0.2, 0.4, 0.9]]}, ["i1", "i2", "i3"])
    (only,) = stability(data, binary=False).values()
    assert only.repeats == 1 and only.items == 0
    assert only.spearman is None and only.alpha is None and only.human.mean is None
