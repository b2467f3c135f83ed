"""Live correlations (dialjudge.core.stats.running) agree with the batch computation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dialjudge.core.stats.correlation import correlate
from dialjudge.core.stats.running import RunningCorrelations


def make_stream(seed: int = 0):
    rng = np.random.default_rng(seed)
    ids = [f"ex{i}" for i in range(120)]
    human = {i: float(rng.integers(1, 6)) for i in ids}
    human["ex5"] = None  # an example nobody labelled
    groups = {i: f"ctx{k // 4}" for k, i in enumerate(ids)}
    stream = []
    for i in ids:
        label = human[i] if human[i] is not None else 3.0
        stream.append(("judge", i, None if rng.random() < 0.1 else round(label / 5 + rng.normal(0, 0.2), 2)))
        stream.append(("metric", i, float(rng.random())))
    return human, groups, stream


def batch(human, latest: dict[str, float | None], groups=None, n_boot=0):
    paired = [i for i, s in latest.items() if s is not None and human.get(i) is not None]
    return correlate([latest[i] for i in paired], [human[i] for i in paired],
                     None if groups is None else [groups[i] for i in paired], n_boot=n_boot, seed=0)


def test_snapshots_equal_correlate_all_along_the_run() -> None:
    human, groups, stream = make_stream()
    running = RunningCorrelations(human, groups)
    latest: dict[str, dict[str, float | None]] = {"judge": {}, "metric": {}}
    for step, (evaluator, example_id, score) in enumerate(stream, start=1):
        running.add(evaluator, example_id, score)
        latest[evaluator][example_id] = score
        if step % 37 and step != len(stream):
            continue
        for name, snap in running.snapshot().items():
            expected = batch(human, latest[name])
            assert snap.n == expected.n
            for method in ("pearson", "spearman", "kendall"):
                want = expected.coefficient(method).value
                got = getattr(snap, method)
                assert (math.isnan(got) and math.isnan(want)) or got == pytest.approx(want, abs=1e-12), method
    judge = running.snapshot("judge")
    assert judge.failures == sum(1 for e, _, s in stream if e == "judge" and s is None)
    assert judge.excluded == (0 if latest["judge"]["ex5"] is None else 1)


def test_snapshot_with_ci_is_the_batch_result() -> None:
    human, groups, stream = make_stream(seed=3)
    running = RunningCorrelations(human, groups, n_boot=150)
    latest: dict[str, float | None] = {}
    for evaluator, example_id, score in stream:
        if evaluator == "judge":
            running.add(evaluator, example_id, score)
            latest[example_id] = score
    snap = running.snapshot("judge", ci=True)
    assert snap.result == batch(human, latest, groups, n_boot=150)
    assert snap.result.n_groups is not None


def test_a_retry_replaces_the_earlier_value() -> None:
    human = {"a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0}
    running = RunningCorrelations(human)
    for example_id, score in (("a", 0.1), ("b", None), ("c", 0.2), ("d", 0.9), ("b", 0.3), ("a", 0.5)):
        running.add("judge", example_id, score)
    snap = running.snapshot("judge")
    expected = correlate([0.5, 0.3, 0.2, 0.9], [1.0, 2.0, 3.0, 4.0], n_boot=0)
    assert snap.failures == 0 and snap.n == 4
    assert snap.pearson == pytest.approx(expected.pearson.value, abs=1e-12)
    assert snap.kendall == pytest.approx(expected.kendall.value, abs=1e-12)


def test_few_or_constant_values_give_nan_with_a_reason() -> None:
    running = RunningCorrelations({"a": 1.0, "b": 2.0, "c": 3.0})
    running.add("judge", "a", 0.5)
    running.add("judge", "b", None)
    snap = running.snapshot("judge")
    assert math.isnan(snap.pearson) and "only 1 paired" in (snap.reason or "")
    assert snap.failures == 1
    running.add("judge", "b", 0.5)
    running.add("judge", "c", 0.5)
    snap = running.snapshot("judge", ranks=False)
    assert math.isnan(snap.pearson) and "constant" in (snap.reason or "")
    assert snap.spearman is None and snap.kendall is None
    with pytest.raises(KeyError):
        running.snapshot("nobody")


def test_many_items_keep_exact_point_estimates_through_retries() -> None:
    """The numpy columns stay in step with the scores when retries replace values (rows move)."""
    from scipy import stats

    rng = np.random.default_rng(7)
    ids = [f"e{i}" for i in range(900)]
    human = {i: float(rng.integers(3, 16)) / 3 for i in ids}
    running = RunningCorrelations(human, {i: f"g{k // 5}" for k, i in enumerate(ids)}, live_ci_max_items=100)
    latest: dict[str, float] = {}
    for i in ids:
        latest[i] = float(rng.random())
        running.add("judge", i, latest[i])
    for _ in range(2000):
        i = ids[int(rng.integers(0, len(ids)))]
        value = None if rng.random() < 0.1 else float(rng.integers(0, 11)) / 10
        running.add("judge", i, value)
        if value is None:
            latest.pop(i, None)
        else:
            latest[i] = value
    snap = running.snapshot("judge", ci=True)
    x = [latest[i] for i in latest]
    y = [human[i] for i in latest]
    assert snap.n == len(latest)
    assert snap.pearson == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)
    assert snap.spearman == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert snap.kendall == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)
    assert snap.result is not None and snap.result.kendall.value == pytest.approx(snap.kendall, abs=1e-12)


def test_small_runs_get_the_full_bootstrap() -> None:
    human, groups, stream = make_stream(seed=5)
    running = RunningCorrelations(human, groups, n_boot=50)
    for evaluator, example_id, score in stream:
        running.add(evaluator, example_id, score)
    snap = running.snapshot("metric", ci=True)
    assert snap.ci_method == "bootstrap" and not snap.ci_approximate


def test_large_runs_get_a_labelled_m_out_of_n_ci_close_to_the_full_bootstrap() -> None:
    """Above live_ci_max_items the CI is an m-out-of-n bootstrap: exact point estimates and
    p-values, an interval around them whose width is that of the full bootstrap within 40%."""
    rng = np.random.default_rng(11)
    n = 1800
    ids = [f"e{i}" for i in range(n)]
    human = {i: float(rng.integers(3, 16)) / 3 for i in ids}
    groups = {i: f"ctx{k // 6}" for k, i in enumerate(ids)}
    running = RunningCorrelations(human, groups, n_boot=200, live_ci_max_items=300)
    scores = {i: human[i] / 5 + float(rng.normal(0, 0.3)) for i in ids}
    for i in ids:
        running.add("judge", i, scores[i])
    snap = running.snapshot("judge", ci=True)
    assert snap.ci_approximate and snap.ci_method is not None
    assert "m-out-of-n bootstrap" in snap.ci_method and f"of {n} items" in snap.ci_method
    assert "of 300 groups" in snap.ci_method
    exact = correlate([scores[i] for i in ids], [human[i] for i in ids], [groups[i] for i in ids],
                      n_boot=200, seed=0)
    assert snap.result is not None and snap.result.n == n and snap.result.n_groups == 300
    for method in ("pearson", "spearman", "kendall"):
        live, full = snap.result.coefficient(method), exact.coefficient(method)
        assert live.value == pytest.approx(full.value, abs=1e-12), method
        assert live.p_value == pytest.approx(full.p_value, rel=1e-9, abs=1e-300), method
        assert live.ci_low < live.value < live.ci_high, method
        width, full_width = live.ci_high - live.ci_low, full.ci_high - full.ci_low
        assert 0.6 < width / full_width < 1.4, (method, width, full_width)
    # The same state gives the same interval (a cached design, no fresh randomness).
    again = running.snapshot("judge", ci=True)
    assert again.result == snap.result


def test_the_live_panel_never_shows_a_ci_on_too_few_contexts_nor_a_zero_width_one() -> None:
    """The issue's case: r 0.873 [0.87, 0.87] on 6 items of one context. Every snapshot along a
    run of 6-candidate contexts either has no CI (fewer than MIN_CONTEXTS contexts so far) or a
    CI of positive width that holds the estimate."""
    from dialjudge.core.stats.small_samples import MIN_CONTEXTS

    rng = np.random.default_rng(0)
    ids = [f"c{k}-{j}" for k in range(10) for j in range(6)]
    human = {i: float(rng.integers(1, 6)) for i in ids}
    groups = {i: i.split("-")[0] for i in ids}
    running = RunningCorrelations(human, groups, n_boot=200)
    for n, item in enumerate(ids, start=1):
        running.add("judge", item, human[item] + float(rng.normal(0, 0.5)))
        snap = running.snapshot("judge", ci=True)
        assert snap.result is not None
        contexts = (n + 5) // 6
        for method in ("pearson", "spearman", "kendall"):
            c = snap.result.coefficient(method)
            if contexts < MIN_CONTEXTS:
                assert math.isnan(c.ci_low) and math.isnan(c.ci_high), (n, method)
            elif snap.reason is None:
                assert c.ci_high - c.ci_low > 0 and c.ci_low <= c.value <= c.ci_high, (n, method)
        if contexts < MIN_CONTEXTS and snap.reason is None:
            assert snap.result.ci_reason == f"too few contexts for a CI: {contexts} (at least {MIN_CONTEXTS} are needed)"
