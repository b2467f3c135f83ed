"""The running keeper computes the judge columns' running correlations on its own thread, equal to the batch
computation (core.stats.correlation.correlate, the independent check), and never shows an older view's."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from dialjudge.core.stats.correlation import correlate
from dialjudge.core.stats.running import RunningCorrelations
from dialjudge.tui.running_keeper import RunningKeeper

WAIT_S = 30.0


def stream(seed: int = 0):
    rng = np.random.default_rng(seed)
    ids = [f"ex{i}" for i in range(200)]
    human = {i: float(rng.integers(1, 6)) for i in ids}
    scores = [("judge", i, None if rng.random() < 0.1 else round(human[i] / 5 + rng.normal(0, 0.2), 2)) for i in ids]
    return human, scores


def batch(human, scores):
    paired = [(s, human[i]) for _, i, s in scores if s is not None]
    return correlate([s for s, _ in paired], [h for _, h in paired], n_boot=0)


def test_numbers_asked_for_arrive_on_the_keepers_thread_and_equal_the_batch_computation() -> None:
    human, scores = stream()
    keeper = RunningKeeper()
    threads: set[str] = set()
    computed = threading.Event()
    keeper.computed = lambda: (threads.add(threading.current_thread().name), computed.set())

    def build() -> RunningCorrelations:
        threads.add(threading.current_thread().name)
        return RunningCorrelations(human)

    keeper.reset(build)
    for evaluator, item_id, score in scores[:120]:
        keeper.add(evaluator, item_id, score)
    keeper.ask()
    assert computed.wait(WAIT_S)
    first = keeper.latest()["judge"]
    expected = batch(human, scores[:120])
    assert first.n == expected.n
    for method in ("pearson", "spearman", "kendall"):
        assert getattr(first, method) == pytest.approx(expected.coefficient(method).value, abs=1e-12)
    assert threads and threading.current_thread().name not in threads

    for evaluator, item_id, score in scores[120:]:
        keeper.add(evaluator, item_id, score)
    assert keeper.latest()["judge"].n == expected.n  # the last numbers computed, until asked again
    now = keeper.now()["judge"]
    assert now.n == batch(human, scores).n
    assert now.spearman == pytest.approx(batch(human, scores).spearman.value, abs=1e-12)


def test_a_new_view_shows_none_of_the_old_ones_numbers() -> None:
    human, scores = stream(1)
    keeper = RunningKeeper()
    keeper.reset(lambda: RunningCorrelations(human))
    for evaluator, item_id, score in scores:
        keeper.add(evaluator, item_id, score)
    assert keeper.now()["judge"].n > 0
    computed = threading.Event()
    keeper.computed = computed.set
    keeper.ask()
    assert computed.wait(WAIT_S) and keeper.latest()

    half = dict(list(human.items())[:100])
    keeper.reset(lambda: RunningCorrelations(half))
    assert keeper.latest() == {}  # not the whole view's numbers
    assert keeper.now() == {}  # the new view has no scores yet
    keeper.add("judge", "ex0", 0.5)
    assert keeper.now()["judge"].n == 1


def test_a_failure_on_the_keepers_thread_is_raised_on_the_ui_thread() -> None:
    keeper = RunningKeeper()

    def broken() -> RunningCorrelations:
        raise ValueError("the build broke")

    keeper.reset(broken)
    keeper.add("judge", "ex0", 0.5)
    computed = threading.Event()
    keeper.computed = computed.set
    keeper.ask()
    assert computed.wait(WAIT_S)
    with pytest.raises(ValueError, match="the build broke"):
        keeper.latest()
    with pytest.raises(ValueError, match="the build broke"):
        keeper.now()


def test_a_column_added_at_once_counts_only_its_items_in_scope_and_equals_the_batch_computation() -> None:
    human, scores = stream(3)
    keeper = RunningKeeper()
    keeper.reset(lambda: RunningCorrelations(human))
    in_scope = {i for k, (_, i, _) in enumerate(scores) if k % 4}
    keeper.add_column("judge", {i: s for _, i, s in scores}, in_scope)
    keeper.add("judge", scores[1][1], 0.5)  # after the column: replaces its score
    kept = [("judge", i, 0.5 if k == 1 else s) for k, (_, i, s) in enumerate(scores) if i in in_scope]
    expected = batch(human, kept)
    now = keeper.now()["judge"]
    assert now.n == expected.n
    for method in ("pearson", "spearman", "kendall"):
        assert getattr(now, method) == pytest.approx(expected.coefficient(method).value, abs=1e-12)
