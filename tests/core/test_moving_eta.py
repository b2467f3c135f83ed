"""The moving remaining-time estimate (core.judges.run.eta) against runs whose true remaining time is known."""

from __future__ import annotations

import random

import pytest

from dialjudge.core.judges.run.eta import MovingEta


def test_a_steady_judge_gets_the_true_remaining_time_at_every_moment():
    # Every judgment takes exactly 3 s: between judgments the estimate must equal the time truly left.
    eta, per_item, total = MovingEta(), 3.0, 10
    eta.start(0.0, total=total, done=0)
    assert eta.eta_s(1.0) is None  # nothing asked yet: unknown, not a guess
    for done in range(1, total):
        finished_at = done * per_item
        eta.judged(finished_at, done=done, total=total, cached=False)
        for waited in (0.0, 0.5, 1.7, 2.9):
            truly_left = total * per_item - (finished_at + waited)
            assert eta.eta_s(finished_at + waited) == pytest.approx(truly_left)
    eta.judged(total * per_item, done=total, total=total, cached=False)
    assert eta.eta_s(31.0) == 0.0


def test_it_counts_down_then_grows_while_a_judgment_is_overdue_and_never_jumps():
    eta = MovingEta()
    eta.start(0.0, total=6, done=0)
    for done in (1, 2):
        eta.judged(2.0 * done, done=done, total=6, cached=False)  # 2 s each
    readings = [eta.eta_s(4.0 + t / 10) for t in range(0, 101)]  # the next 10 s with no judgment
    assert all(r is not None for r in readings)
    values = [r for r in readings if r is not None]
    assert values[0] == pytest.approx(8.0)  # 4 left x 2 s
    at_expected = values[20]  # 2 s later, when the next one was due: 3 left x 2 s
    assert at_expected == pytest.approx(6.0)
    assert all(b < a for a, b in zip(values[:20], values[1:21]))  # counting down
    assert all(b > a for a, b in zip(values[20:], values[21:]))  # then growing: the judge is slower than thought
    # The later value is what finishing that judgment at that moment would give: 3 left at (4 + 10) / 3 s each.
    assert values[-1] == pytest.approx(3 * 14.0 / 3)
    steps = [abs(b - a) for a, b in zip(values, values[1:])]
    assert max(steps) <= 0.1 + 1e-9  # continuous: at most the 0.1 s between readings


def test_answers_from_the_cache_do_not_make_the_judge_look_instant():
    eta = MovingEta()
    eta.start(0.0, total=12, done=0)
    for done in range(1, 5):  # four cache hits, all at once, 1 s after the start
        eta.judged(1.0, done=done, total=12, cached=True)
    assert eta.eta_s(1.0) is None
    eta.judged(4.0, done=5, total=12, cached=False)  # the first request took 3 s
    assert eta.eta_s(4.0) == pytest.approx(7 * 3.0)


def test_a_simulated_noisy_run_ends_close_to_its_estimate():
    # Random 1-3 s judgments (mean 2 s); halfway through, the estimate should be near the truth.
    rng = random.Random(7)
    times = [rng.uniform(1.0, 3.0) for _ in range(400)]
    eta, now = MovingEta(), 0.0
    eta.start(now, total=len(times), done=0)
    for done, took in enumerate(times[:200], start=1):
        now += took
        eta.judged(now, done=done, total=len(times), cached=False)
    estimate = eta.eta_s(now)
    truly_left = sum(times[200:])
    assert estimate is not None and abs(estimate - truly_left) / truly_left < 0.05


def test_a_judge_answering_in_bursts_counts_down_through_the_usual_gap():
    # Four requests at once, answered together every 2 s: 4 judgments per 2 s, 20 in all.
    eta, total = MovingEta(), 20
    eta.start(0.0, total=total, done=0)
    for burst in (1, 2):
        for k in range(4):
            eta.judged(2.0 * burst + k * 0.001, done=4 * (burst - 1) + k + 1, total=total, cached=False)
    last = 4.003
    readings = [eta.eta_s(last + t / 10) for t in range(0, 40)]
    values = [r for r in readings if r is not None]
    # 12 left at 0.5 s each when the burst landed, then down a second per second until the next is due...
    assert values[0] == pytest.approx(12 * 4.003 / 8)
    assert all(b < a for a, b in zip(values[:20], values[1:20]))
    # ...and growing only once the next burst is late; never a jump.
    assert all(b > a for a, b in zip(values[21:], values[22:]))
    assert max(abs(b - a) for a, b in zip(values, values[1:])) <= 0.1 + 1e-9
