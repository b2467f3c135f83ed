"""Every interval, p-value and verdict of the correlation and the paired comparison, against a
simulation with a known truth (a reduced, seeded version of ``python -m bench.calibration``)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from bench.calibration import COVERAGE_FLOOR, EFFECT, NOMINAL_FALSE, NULL, run_cell

from dialjudge.core.simulation import SimulationDesign, simulate
from dialjudge.core.stats.paired import paired_comparison, verdict_line
from dialjudge.core.stats.small_samples import MIN_CONTEXTS, MIN_ITEMS_RANK_DELTA_CI
from shared_data import require_file, shared_data_dir

N_DATASETS = 160


@pytest.mark.parametrize(("k", "m"), [(MIN_CONTEXTS, 1), (MIN_CONTEXTS, 6), (10, 4), (20, 1)])
def test_null_design_is_calibrated_where_a_verdict_is_shown(k: int, m: int) -> None:
    cell = run_cell("null", replace(NULL, n_contexts=k, n_candidates=m), N_DATASETS, seed=100 + k + m,
                    n_boot=400, paired_boot=400)
    for name, rate in cell.rates.items():
        if name.endswith("old rule"):
            continue  # no longer shown: measured to document what it did
        if name.endswith("Williams") and m > 1:
            assert rate.trials == 0, name  # not given with several candidates per context
            continue
        if name in ("cover Δρ", "cover Δτ") and k * m < MIN_ITEMS_RANK_DELTA_CI:
            assert rate.trials == 0, name  # too few items for a rank difference's CI
            continue
        assert rate.trials > N_DATASETS * 0.9, name  # shown on (almost) every dataset at this k
        if name.startswith("false Δ"):
            assert not rate.exceeds(NOMINAL_FALSE), f"{name} at k={k}, m={m}: {rate}"
        elif name.startswith("cover"):
            assert not rate.falls_below(COVERAGE_FLOOR), f"{name} at k={k}, m={m}: {rate}"


@pytest.mark.parametrize(("k", "m"), [(MIN_CONTEXTS, 4), (20, 6)])
def test_effect_design_intervals_cover_the_true_difference(k: int, m: int) -> None:
    cell = run_cell("effect", replace(EFFECT, n_contexts=k, n_candidates=m), N_DATASETS, seed=7 + k + m,
                    n_boot=400, paired_boot=400)
    for name, rate in cell.rates.items():
        if name.startswith("cover"):
            assert not rate.falls_below(COVERAGE_FLOOR), f"{name} at k={k}, m={m}: {rate}"
    if k >= 20:  # a true Δρ of 0.2 over 120 items is found more often than not
        assert cell.rates["power Δρ"].value > 0.5


@pytest.mark.parametrize("k", [2, 3, MIN_CONTEXTS - 1])
def test_below_the_floor_nothing_is_shown(k: int) -> None:
    cell = run_cell("null", replace(NULL, n_contexts=k, n_candidates=6), 40, seed=k, n_boot=100, paired_boot=100)
    for name, rate in cell.rates.items():
        if not name.endswith(("old rule", "Williams")):
            assert rate.trials == 0, name


def test_the_old_rule_was_miscalibrated_at_three_contexts() -> None:
    """The bug this guards against: a percentile CI over 3 contexts excluding 0 claimed a difference
    between equally good judges far more often than 5%."""
    cell = run_cell("null", replace(NULL, n_contexts=3, n_candidates=6), 200, seed=3, n_boot=400, paired_boot=400)
    assert cell.rates["false Δρ, old rule"].exceeds(NOMINAL_FALSE)


def unrelated_null_counts(human: dict[str, float], groups: dict[str, object], draws: int, seed: int,
                          same_scale: bool = False) -> tuple[int, int]:
    """Two fake judges whose scores have nothing to do with the humans (new scores each draw): how many
    draws claim a difference, and how many print p < 0.001. ``same_scale``: both on one 1-5 scale
    (exchangeable, the null the randomization test is exact for); else a 1-5 rating and a p(yes)."""
    rng = np.random.default_rng(seed)
    claimed = tiny_p = 0
    for _ in range(draws):
        a = {item: float(rng.uniform(1, 6)) for item in human}
        b = {item: float(rng.uniform(1, 6)) if same_scale else float(rng.random()) for item in human}
        comparison = paired_comparison(a, b, human, groups, n_boot=300, seed=int(rng.integers(1 << 30)))
        claimed += comparison.decided("spearman")
        line = verdict_line(comparison)
        tiny_p += "p = < 0.001" in line or "p < 0.001" in line
    return claimed, tiny_p


@pytest.mark.parametrize("k", [3, 10])
def test_null_comparisons_of_unrelated_fake_judges_on_simulated_labels(k: int) -> None:
    batch = simulate(SimulationDesign(k, 6, rating_points=5), 1, seed=k)
    _, _, human, groups = batch.dataset(0)
    claimed, tiny_p = unrelated_null_counts(human, groups, 200, seed=k)
    assert claimed <= 200 * NOMINAL_FALSE + 2 * np.sqrt(200 * 0.05 * 0.95)
    assert tiny_p == 0 if k == 3 else True


@pytest.mark.parametrize(("n_items", "same_scale"), [(18, False), (60, False), (60, True)])
def test_null_comparisons_on_usr_topical_chat(shared_data, n_items: int, same_scale: bool) -> None:
    """The issue's check: the first 18 items (3 contexts) and 60 items (10 contexts) of USR Topical-Chat,
    two unrelated fake judges, new scores each draw."""
    from dialjudge.core.loaders import read_usr
    from dialjudge.core.model import Aggregation
    from dialjudge.core.stats.human import human_labels

    dataset = read_usr(require_file(shared_data_dir(), "usr/usr_topical_chat.json"))
    examples = dataset.examples[:n_items]
    labels = human_labels(examples, "Overall", Aggregation.MEAN).values
    human = {item: float(value) for item, value in labels.items() if value is not None}
    groups = {ex.id: ex.group_id for ex in examples}
    assert len({groups[i] for i in human}) == n_items // 6
    claimed, tiny_p = unrelated_null_counts(human, groups, 200, seed=n_items, same_scale=same_scale)
    assert claimed <= 200 * NOMINAL_FALSE + 2 * np.sqrt(200 * 0.05 * 0.95)
    if n_items == 18:
        assert claimed == 0 and tiny_p == 0
