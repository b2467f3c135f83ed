"""Judge columns read as labels: confusion matrix with plain and weighted κ, calibration, inter-judge
agreement, and the files the run export writes; each number against a hand computation or scipy."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from scipy import stats

from dialjudge.core import diagnostics_report as dr
from dialjudge.core.judge_diagnostics import (
    calibration_view,
    confusion_view,
    judge_diagnostics,
    nearest_point,
    scale_points,
)
from dialjudge.core.model import Example, Rating, Scale, ScaleKind

ORDINAL = Scale(ScaleKind.ORDINAL, 1, 3)
BINARY = Scale(ScaleKind.BINARY, 0, 1)


def example(i: int, ratings: tuple[float, ...], scale: Scale = ORDINAL) -> Example:
    return Example(id=f"e{i}", group_id=f"g{i // 2}", context=(), candidate=f"reply {i}",
                   ratings={"q": Rating(ratings, scale)})


def unit(point: float, scale: Scale = ORDINAL) -> float:
    return scale.normalize(point)


# judge x human counts [[2,1,0],[0,2,1],[1,0,3]] over the points 1, 2, 3 (n = 10)
TABLE = {(1, 1): 2, (1, 2): 1, (2, 2): 2, (2, 3): 1, (3, 1): 1, (3, 3): 3}


def table_examples() -> tuple[list[Example], dict[str, float | None]]:
    examples, scores = [], {}
    for (judge, human), count in TABLE.items():
        for _ in range(count):
            k = len(examples)
            # Three annotators whose mean rounds to ``human`` (e.g. 2, 2, 3 -> 2.33 -> 2).
            ratings = (human, human, min(3, human + 1)) if human < 3 else (3, 3, 2)
            examples.append(example(k, ratings))
            scores[f"e{k}"] = unit(judge)
    return examples, scores


def test_scale_points_and_nearest_point() -> None:
    assert scale_points(ORDINAL) == (1.0, 2.0, 3.0)
    assert scale_points(BINARY) == (0.0, 1.0)
    assert scale_points(Scale(ScaleKind.CONTINUOUS, 0, 1)) is None
    assert scale_points(Scale(ScaleKind.ORDINAL, 0, 100)) is None  # too many points to count
    assert scale_points(Scale(ScaleKind.CATEGORICAL, labels=("a", "b"))) is None
    assert nearest_point(2.33, (1, 2, 3)) == 2 and nearest_point(2.67, (1, 2, 3)) == 3
    assert nearest_point(2.5, (1, 2, 3)) is None  # halfway: no nearest point
    assert nearest_point(0.5, (0, 1)) is None


def test_confusion_matrix_and_kappas_by_hand() -> None:
    examples, scores = table_examples()
    from dialjudge.core.judge_diagnostics import human_points

    view = confusion_view("j", "q", ORDINAL, scores, human_points(examples, "q"))
    assert view.matrix.labels == (1.0, 2.0, 3.0)
    assert view.matrix.counts == ((2, 1, 0), (0, 2, 1), (1, 0, 3))
    assert view.n == 10 and view.excluded == 0
    assert view.agreement == pytest.approx(0.7)
    # p_o = .7; margins .3 .3 .4 both sides; p_e = .34 -> (.7 - .34) / .66
    assert view.kappa == pytest.approx(0.36 / 0.66)
    # linear: observed disagreement (1 + 1 + 2) / 10 = .4, expected .9 -> 1 - .4/.9
    assert view.kappa_linear == pytest.approx(1 - 0.4 / 0.9)
    # quadratic: observed (1 + 1 + 4) / 10 = .6, expected 1.38 -> 1 - .6/1.38
    assert view.kappa_quadratic == pytest.approx(1 - 0.6 / 1.38)


def test_items_without_a_score_a_label_or_a_nearest_point_are_counted() -> None:
    examples = [example(0, (1, 1)), example(1, (2, 3)), example(2, (3, 3)), example(3, (2, 2)), example(4, (1, 1))]
    human = {"e0": 1.0, "e1": 2.5, "e2": 3.0, "e3": None, "e4": 1.0}
    scores = {"e0": unit(1), "e1": unit(2), "e2": 0.75, "e3": unit(2)}  # e2: 2.5 halfway; e4 not judged
    view = confusion_view("j", "q", ORDINAL, scores, human)
    assert (view.n, view.no_score, view.no_human_label, view.halfway) == (1, 1, 1, 2)
    assert len(examples) == view.n + view.excluded


def test_calibration_matches_a_direct_computation() -> None:
    rng = np.random.default_rng(3)
    p = rng.uniform(0, 1, 40)
    outcome = (rng.uniform(0, 1, 40) < p).astype(int)
    examples = [example(i, (int(o), int(o), int(o)), BINARY) for i, o in enumerate(outcome)]
    human = {ex.id: float(o) for ex, o in zip(examples, outcome, strict=True)}
    view = calibration_view("j", "q", BINARY, {ex.id: float(x) for ex, x in zip(examples, p, strict=True)}, human,
                            n_bins=5)
    c = view.calibration
    assert c.brier == pytest.approx(float(np.mean((p - outcome) ** 2)))
    bins = np.minimum((p * 5).astype(int), 4)
    ece = sum((bins == k).sum() / 40 * abs(outcome[bins == k].mean() - p[bins == k].mean())
              for k in range(5) if (bins == k).any())
    assert c.ece == pytest.approx(ece)
    assert [b.n for b in c.bins] == [int((bins == k).sum()) for k in range(5)]
    assert view.summary_record()["brier_of_base_rate"] == pytest.approx(outcome.mean() * (1 - outcome.mean()))


def test_diagnostics_of_two_judges_on_a_binary_quality() -> None:
    votes = [(1, 1, 0), (0, 0, 1), (1, 1, 1), (0, 0, 0), (1, 0, 1), (0, 1, 0), (1, 1, 1), (0, 0, 0)]
    examples = [example(i, v, BINARY) for i, v in enumerate(votes)]
    a = {f"e{i}": p for i, p in enumerate([0.9, 0.2, 0.7, 0.1, 0.4, 0.3, 0.8, 0.6])}
    b = {f"e{i}": p for i, p in enumerate([0.8, 0.6, 0.9, 0.2, 0.7, 0.1, 0.3, 0.2])}
    d = judge_diagnostics(examples, "q", BINARY, {"a": a, "b": b}, probability_judges={"a"})
    assert [v.evaluator for v in d.confusion] == ["a", "b"] and [c.evaluator for c in d.calibration] == ["a"]
    # a's labels 1,0,1,0,0,0,1,1 against the majority 1,0,1,0,1,0,1,0: rows judge, columns human
    assert d.confusion[0].matrix.counts == ((3, 1), (1, 3))
    # two labels: every weighting is the same kappa, (.75 - .5) / .5
    assert d.confusion[0].kappa == d.confusion[0].kappa_linear == pytest.approx(0.5)
    assert d.confusion[0].kappa_quadratic == pytest.approx(0.5)
    # inter-judge: κ of a's and b's labels, 1,0,1,0,0,0,1,1 vs 1,1,1,0,1,0,0,0
    assert d.inter_judge is not None and d.inter_judge.measure == "kappa"
    po, pe = 4 / 8, 0.5 * 0.5 + 0.5 * 0.5
    assert d.inter_judge.value("a", "b") == pytest.approx((po - pe) / (1 - pe))


def test_graded_judges_get_spearman_between_them_and_no_calibration() -> None:
    examples, scores = table_examples()
    other = {k: 1 - v for k, v in scores.items() if k != "e0"}
    d = judge_diagnostics(examples, "q", ORDINAL, {"a": scores, "b": other}, probability_judges={"a"})
    assert d.calibration == ()  # calibration is for binary qualities
    assert d.inter_judge is not None and d.inter_judge.measure == "spearman"
    shared = sorted(other)
    rho = stats.spearmanr([scores[i] for i in shared], [other[i] for i in shared]).statistic
    assert d.inter_judge.value("a", "b") == pytest.approx(rho) and d.inter_judge.n[0][1] == 9
    continuous = judge_diagnostics(examples, "q", Scale(ScaleKind.CONTINUOUS, 1, 3), {"a": scores})
    assert continuous.empty


def test_files_hold_the_same_numbers() -> None:
    examples, scores = table_examples()
    d = judge_diagnostics(examples, "q", ORDINAL, {"a": scores})
    tables = dr.csv_tables(d)
    assert set(tables) == {"confusion", "kappa"}
    cells = list(csv.DictReader(io.StringIO(tables["confusion"])))
    assert {(r["judge_label"], r["human_label"]): int(r["count"]) for r in cells} == {
        (str(j), str(h)): TABLE.get((j, h), 0) for j in (1, 2, 3) for h in (1, 2, 3)}
    kappa = next(csv.DictReader(io.StringIO(tables["kappa"])))
    assert float(kappa["kappa_quadratic"]) == pytest.approx(1 - 0.6 / 1.38)
    document = json.loads(dr.json_document(d, meta={"run_id": 3}))
    assert document["meta"] == {"run_id": 3}
    matrix = document["results"][0]["confusion"][0]
    assert matrix["counts"] == [[2, 1, 0], [0, 2, 1], [1, 0, 3]] and matrix["labels"] == [1, 2, 3]
    text = dr.markdown(d, title="Run 3")
    assert "| 3 | 1 | 0 | 3 |" in text and f"quadratic κ {1 - 0.6 / 1.38:.3f}" in text
