"""Human agreement that sparse raters cannot distort (issue 33): pairs sharing fewer than
MIN_SHARED_ITEMS items and leave-one-out slots with fewer are left out, the rest weighted by items;
the graded pairwise Spearman, pair by pair, is scipy's."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dialjudge.core.model import BINARY_01, Example, Rating, Scale, ScaleKind
from dialjudge.core.stats.ceiling import human_ceiling
from dialjudge.core.stats.label_agreement import label_ceiling
from dialjudge.core.stats.rater_pairs import MIN_SHARED_ITEMS
from shared_data import require_file, shared_data_dir

LIKERT = Scale(ScaleKind.ORDINAL, 1, 5)
NAMES = ("ann", "bob", "cat")


def numeric_set(n_items: int, seed: int, per_context: int = 3) -> list[Example]:
    """Three named annotators who rate every item on 1-5, seeing one latent quality through noise."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n_items):
        q = rng.normal()
        scores = tuple(float(np.clip(np.rint(3 + q + rng.normal(0, 0.8)), 1, 5)) for _ in NAMES)
        out.append(Example(f"i{i}", f"c{i // per_context}", (), "", ratings={"q": Rating(scores, LIKERT, NAMES)}))
    return out


def label_set(n_items: int, seed: int) -> list[Example]:
    """Three named annotators who say yes/no, agreeing moderately (pairwise κ about .5)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n_items):
        q = rng.normal()
        votes = tuple(int(q + rng.normal(0, 0.7) > 0) for _ in NAMES)
        out.append(Example(f"i{i}", f"c{i // 3}", (), "", ratings={"q": Rating(votes, BINARY_01, NAMES)}))
    return out


def with_rater(examples: list[Example], rater: str, votes: dict[int, float]) -> list[Example]:
    """The examples with ``rater``'s vote added on the items at the given positions."""
    out = []
    for k, ex in enumerate(examples):
        rating = ex.ratings["q"]
        if k in votes:
            rating = Rating((*rating.scores, votes[k]), rating.scale, (*rating.annotators, rater))
        out.append(Example(ex.id, ex.group_id, ex.context, ex.candidate, ratings={"q": rating}))
    return out


def test_one_vote_from_a_new_rater_moves_no_pairwise_figure() -> None:
    """The issue's case: one extra vote on one of 60 items halved the unweighted pairwise κ."""
    base = label_set(60, seed=1)
    first = base[0].ratings["q"].scores[0]
    stray = with_rater(base, "dee", {0: 1 - first})  # a vote that disagrees: the worst case
    before, after = label_ceiling(base, "q"), label_ceiling(stray, "q")
    assert 0.3 < before.pairwise_kappa < 0.8  # a set whose figures can move
    for figure in ("pairwise_kappa", "pairwise_agreement", "vs_majority_agreement", "vs_majority_kappa", "alpha"):
        assert abs(getattr(after, figure) - getattr(before, figure)) <= 0.02, figure
    assert after.kappa_basis.raters == NAMES and after.kappa_basis.n_units == 3
    assert after.majority_basis.raters == NAMES and after.majority_basis.n_items == 60
    assert any("3 annotator pairs sharing fewer than 10 items" in r for r in after.reasons)
    assert any("vs the majority of the others: 1 rater" in r for r in after.reasons)
    # The same through the numeric ceiling's κ and % agreement (label scales) ...
    for figure in ("kappa", "percent_agreement"):
        assert abs(getattr(human_ceiling(stray, "q", n_boot=0), figure)
                   - getattr(human_ceiling(base, "q", n_boot=0), figure)) <= 0.02, figure
    # ... and its graded pairwise Spearman and leave-one-out ceiling on a numeric scale.
    graded = numeric_set(60, seed=2)
    was, now = human_ceiling(graded, "q", n_boot=0), human_ceiling(with_rater(graded, "dee", {5: 1.0}), "q", n_boot=0)
    assert now.pairwise_spearman is not None and was.pairwise_spearman is not None
    assert abs(now.pairwise_spearman.value - was.pairwise_spearman.value) <= 0.02
    for method in ("pearson", "spearman", "kendall"):
        assert abs(now.coefficient(method) - was.coefficient(method)) <= 0.02, method


def test_a_rater_with_three_items_moves_the_leave_one_out_ceiling_by_no_more_than_002() -> None:
    base = numeric_set(60, seed=3)
    # Three items rated against the grain: as an equal slot it would drag the mean far down.
    stray = with_rater(base, "dee", {k: 6.0 - base[k].ratings["q"].scores[0] for k in (0, 1, 2)})
    before, after = human_ceiling(base, "q", n_boot=0), human_ceiling(stray, "q", n_boot=0)
    for method in ("pearson", "spearman", "kendall"):
        assert abs(after.coefficient(method) - before.coefficient(method)) <= 0.02, method
    assert after.loo_basis.raters == NAMES and after.loo_basis.n_items == 60
    assert after.rests_on() == "3 raters, 60 items"
    assert any("leave-one-out ceiling: 1 rater with fewer than 10 items" in r for r in after.reasons)


def sparse_third(shared: int) -> list[Example]:
    """ann and bob rate 30 items; cat rates the first ``shared`` of them."""
    examples = numeric_set(30, seed=5)
    out = []
    for k, ex in enumerate(examples):
        scores = list(ex.ratings["q"].scores)
        if k >= shared:
            scores[2] = None
        out.append(Example(ex.id, ex.group_id, (), "", ratings={"q": Rating(tuple(scores), LIKERT, NAMES)}))
    return out


def spearman_of(examples: list[Example], a: int, b: int) -> tuple[float, int]:
    pairs = [(ex.ratings["q"].scores[a], ex.ratings["q"].scores[b]) for ex in examples]
    x, y = zip(*((u, v) for u, v in pairs if u is not None and v is not None))
    return float(stats.spearmanr(x, y).statistic), len(x)


@pytest.mark.parametrize("shared", [MIN_SHARED_ITEMS - 1, MIN_SHARED_ITEMS])
def test_the_minimum_of_shared_items_at_9_and_10(shared: int) -> None:
    assert MIN_SHARED_ITEMS == 10  # JUDGE-BENCH's own analysis
    examples = sparse_third(shared)
    ceiling = human_ceiling(examples, "q", n_boot=0)
    spearman = ceiling.pairwise_spearman
    assert spearman is not None
    by_hand = [spearman_of(examples, a, b) for a, b in ((0, 1), (0, 2), (1, 2))]
    if shared < MIN_SHARED_ITEMS:
        # cat shares 9 items with each: its pairs and its slot are left out, said so.
        assert [(p.first, p.second) for p in spearman.pairs] == [("ann", "bob")]
        assert spearman.value == pytest.approx(by_hand[0][0], abs=1e-12)
        assert spearman.pooled.n_left_out == 2 and spearman.pooled.counts() == "1 / 2 / 30"
        assert ceiling.loo_basis.raters == ("ann", "bob")
        assert any("pairwise Spearman: 2 annotator pairs sharing fewer than 10 items" in r for r in ceiling.reasons)
        assert any("leave-one-out ceiling: 1 rater" in r for r in ceiling.reasons)
    else:
        assert [p.n for p in spearman.pairs] == [30, 10, 10]
        assert spearman.value == pytest.approx(np.average([r for r, _ in by_hand], weights=[n for _, n in by_hand]),
                                               abs=1e-12)
        assert spearman.pooled.counts() == "3 / 3 / 30" and spearman.pooled.n_left_out == 0
        assert ceiling.loo_basis.raters == NAMES
        # Slots weighted by their items: ann and bob 30 (cat's votes join the others' mean on 10), cat 10.
        per = {a.annotator: a for a in ceiling.per_annotator}
        assert [per[n].n_items for n in NAMES] == [30, 30, 10]
        assert ceiling.spearman == pytest.approx(
            sum(per[n].spearman * per[n].n_items for n in NAMES) / 70, abs=1e-12)


@pytest.mark.parametrize("shared", [MIN_SHARED_ITEMS - 1, MIN_SHARED_ITEMS])
def test_the_minimum_for_label_pairs_and_the_majority_slots(shared: int) -> None:
    base = label_set(30, seed=6)
    examples = [Example(ex.id, ex.group_id, (), "", ratings={"q": Rating(
        tuple(v if a < 2 or k < shared else None for a, v in enumerate(ex.ratings["q"].scores)), BINARY_01, NAMES)})
        for k, ex in enumerate(base)]
    ceiling = label_ceiling(examples, "q")
    expected_pairs = 1 if shared < MIN_SHARED_ITEMS else 3
    assert ceiling.n_pairs == expected_pairs == ceiling.agreement_basis.n_units
    assert len(ceiling.per_annotator) == (2 if shared < MIN_SHARED_ITEMS else 3)
    assert [a.annotator for a in ceiling.per_annotator] == list(NAMES[:len(ceiling.per_annotator)])


def test_each_pairs_spearman_is_scipys_and_the_ci_is_a_context_bootstrap() -> None:
    examples = numeric_set(45, seed=7)
    ceiling = human_ceiling(examples, "q", n_boot=400, seed=2)
    spearman = ceiling.pairwise_spearman
    assert spearman is not None
    for pair in spearman.pairs:
        a, b = NAMES.index(pair.first), NAMES.index(pair.second)
        assert pair.value == pytest.approx(spearman_of(examples, a, b)[0], abs=1e-12)
    low, high = spearman.ci()
    assert low < spearman.value < high and spearman.interval is not None
    assert spearman.interval.n_units == 15 and spearman.interval.by_group
    assert ceiling.pairwise_text().startswith(f"{spearman.value:.3f} [")
    assert ceiling.to_dict()["pairwise_spearman"]["n_items"] == 45


def test_usr_pairwise_spearman_equals_scipy_on_every_pair(shared_data) -> None:
    """USR Topical-Chat: five annotators in rotating triples; every pair's ρ from the raw file by scipy."""
    import json

    from dialjudge.core.loaders import read_usr

    path = require_file(shared_data_dir(), "usr/usr_topical_chat.json")
    raw = json.loads(path.read_text("utf-8"))
    votes: dict[str, dict[int, float]] = {}
    item = 0
    for context in raw:
        for response in context["responses"]:
            for name, score in zip(context["annotators"], response["Overall"], strict=True):
                votes.setdefault(name, {})[item] = float(score)
            item += 1
    ceiling = human_ceiling(read_usr(path).examples, "Overall", n_boot=0)
    assert ceiling.pairwise_spearman is not None
    checked = 0
    weights, values = [], []
    for pair in ceiling.pairwise_spearman.pairs:
        shared = sorted(set(votes[pair.first]) & set(votes[pair.second]))
        rho = stats.spearmanr([votes[pair.first][i] for i in shared], [votes[pair.second][i] for i in shared])
        assert pair.n == len(shared) and pair.value == pytest.approx(float(rho.statistic), abs=1e-12)
        weights.append(len(shared))
        values.append(float(rho.statistic))
        checked += 1
    assert checked == math.comb(len(votes), 2)
    assert ceiling.pairwise_spearman.value == pytest.approx(np.average(values, weights=weights), abs=1e-12)
