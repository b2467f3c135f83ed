"""Pair tests, Holm's adjustment, the greedy cluster rule and the floor, against hand and brute-force
computations."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dialjudge.core.stats.meta_levels import ContextLevel, GlobalLevel, Items
from dialjudge.core.stats.significance_clusters import (
    cluster_evaluators,
    greedy_clusters,
    holm,
    pair_test,
    permutations_for,
)


def test_holm_against_a_hand_computation():
    # Sorted p: 0.01 (x4 = 0.04), 0.02 (x3 = 0.06), 0.03 (x2 = 0.06), 0.5 (x1 = 0.5).
    assert holm([0.03, 0.01, 0.5, 0.02]) == pytest.approx([0.06, 0.04, 0.5, 0.06])
    adjusted = holm([0.2, math.nan])
    assert adjusted[0] == pytest.approx(0.4) and math.isnan(adjusted[1])


def test_greedy_rule_is_not_fooled_by_a_non_transitive_chain():
    # 0 > 1 > 2 in the ranking; only 2 is significantly worse than 0 (not than 1).
    assert greedy_clusters([0, 1, 2], {(0, 2)}) == {0: 1, 1: 1, 2: 2}
    # The next cluster starts at 2; 3 is worse than 1 only, who is no longer in the current cluster.
    assert greedy_clusters([0, 1, 2, 3], {(0, 2), (1, 3)}) == {0: 1, 1: 1, 2: 2, 3: 2}
    assert greedy_clusters([4, 5], set()) == {4: 1, 5: 1}


def test_permutations_grow_with_the_family():
    assert permutations_for(1) == 1000
    assert permutations_for(190) == 38_000


def test_pair_test_p_is_the_enumerated_share_of_extreme_swaps():
    rng = np.random.default_rng(0)
    contexts = np.repeat(np.arange(5), 3)
    human = rng.normal(size=15)
    items = Items.build(human, [str(c) for c in contexts])
    xa, xb = human + rng.normal(0, 2, 15), human + rng.normal(0, 0.5, 15)
    xa[4] = np.nan  # scored by one side only: out of the pair's items
    result = pair_test(GlobalLevel(), xa, xb, items, permutations=1000)
    keep = np.isfinite(xa)

    def r(x, y):
        return np.corrcoef(x, y)[0, 1]

    observed = r(xb[keep], human[keep]) - r(xa[keep], human[keep])
    extreme = 0
    # Each side z-scored on the shared items before swapping (module doc).
    za, zb = ((x[keep] - x[keep].mean()) / x[keep].std() for x in (xa, xb))
    for signs in itertools.product((False, True), repeat=5):
        swapped = np.array(signs)[contexts][keep]
        a = np.where(swapped, zb, za)
        b = np.where(swapped, za, zb)
        extreme += abs(r(b, human[keep]) - r(a, human[keep])) >= abs(observed) - 1e-12
    assert result.exact and result.n_items == 14 and result.n_contexts == 5
    assert result.delta == pytest.approx(observed)
    assert result.p_value == pytest.approx(extreme / 32)


def test_below_the_floor_there_are_no_clusters_and_the_reason_says_why():
    rng = np.random.default_rng(1)
    contexts = np.repeat(np.arange(6), 4)
    human = rng.normal(size=24)
    items = Items.build(human, [str(c) for c in contexts])
    columns = [human + rng.normal(0, s, 24) for s in (0.1, 1.0, 5.0)]
    level = GlobalLevel()
    stats = [level.value(c, items) for c in columns]
    result = cluster_evaluators(level, columns, stats, items)
    assert result.clusters == (None, None, None)
    assert result.reason is not None and "0.0312" in result.reason and "0.0167" in result.reason


def test_a_strong_evaluator_and_a_weak_one_fall_in_different_clusters_twins_in_one():
    rng = np.random.default_rng(2)
    contexts = np.repeat(np.arange(40), 5)
    human = rng.normal(size=200)
    items = Items.build(human, [str(c) for c in contexts])
    strong = human + rng.normal(0, 0.3, 200)
    twin = human + rng.normal(0, 0.3, 200)
    noise = rng.normal(size=200)
    level = ContextLevel()
    columns = [noise, strong, twin]
    result = cluster_evaluators(level, columns, [level.value(c, items) for c in columns], items)
    assert result.reason is None
    assert result.clusters[1] == result.clusters[2] == 1
    assert result.clusters[0] == 2
    assert result.permutations == permutations_for(3)


def test_random_swaps_drawn_in_blocks_give_the_p_of_one_draw(monkeypatch: pytest.MonkeyPatch) -> None:
    from dialjudge.core.stats import significance_clusters

    rng = np.random.default_rng(3)
    contexts = np.repeat(np.arange(20), 3)
    human = rng.normal(size=60)
    items = Items.build(human, [str(c) for c in contexts])
    xa, xb = human + rng.normal(0, 1, 60), human + rng.normal(0, 1.3, 60)
    whole = pair_test(GlobalLevel(), xa, xb, items, permutations=3000, seed=5)
    monkeypatch.setattr(significance_clusters, "CHUNK_CELLS", 20 * 7)  # blocks of 7 rows
    blocks = pair_test(GlobalLevel(), xa, xb, items, permutations=3000, seed=5)
    assert not whole.exact and whole.n_assignments == 3000
    assert blocks.p_value == whole.p_value
    # And the p of one explicit draw of all 3,000 rows, computed here.
    draws = np.random.default_rng(5).random((3000, 20)) < 0.5
    deltas = GlobalLevel().swap_deltas(xa, xb, items, draws)
    extreme = int((np.abs(deltas) >= abs(whole.delta) - 1e-12).sum())
    assert whole.p_value == pytest.approx((extreme + 1) / 3001)
