"""Background work gives way to a busy foreground thread (core.foreground), never for long."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from dialjudge.core import foreground
from dialjudge.core.foreground import (
    MAX_WAIT_S,
    TURN_WAIT_S,
    end_turn,
    foreground_busy,
    foreground_gone,
    foreground_idle,
    give_way,
    giving_way,
)


@pytest.fixture(autouse=True)
def no_foreground_after() -> Iterator[None]:
    yield
    foreground_gone()


def _seconds_in_other_thread(call) -> float:  # type: ignore[no-untyped-def]
    took: list[float] = []

    def timed() -> None:
        started = time.perf_counter()
        call()
        took.append(time.perf_counter() - started)

    thread = threading.Thread(target=timed)
    thread.start()
    thread.join(5)
    return took[0]


def test_without_a_foreground_nothing_waits() -> None:
    foreground_gone()
    assert _seconds_in_other_thread(give_way) < MAX_WAIT_S / 2


def test_a_busy_foreground_holds_background_work_back_at_most_the_limit() -> None:
    foreground_busy()
    took = _seconds_in_other_thread(give_way)
    assert MAX_WAIT_S * 0.9 <= took < MAX_WAIT_S + 1.0


def test_background_work_goes_on_as_soon_as_the_foreground_waits() -> None:
    foreground_busy()
    waiting = threading.Event()
    idle_soon = threading.Timer(0.01, foreground_idle)

    def step() -> None:
        waiting.set()
        give_way()

    idle_soon.start()
    took = _seconds_in_other_thread(step)
    idle_soon.join()
    assert waiting.is_set()
    assert took < MAX_WAIT_S  # released by the idle mark, not by the time limit


def test_the_foreground_thread_never_waits_for_itself() -> None:
    foreground_busy()
    started = time.perf_counter()
    give_way()
    assert time.perf_counter() - started < MAX_WAIT_S / 2
    assert foreground._foreground == threading.get_ident()


# -- turns among background threads ---------------------------------------------------------


def _run_threads(*targets) -> None:  # type: ignore[no-untyped-def]
    threads = [threading.Thread(target=t) for t in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert not any(thread.is_alive() for thread in threads)


def test_background_threads_run_their_steps_one_at_a_time() -> None:
    foreground_idle()
    foreground._foreground = -1  # a foreground that is not any of these threads, idle
    inside = 0
    most_inside = 0
    steps = 0
    lock = threading.Lock()

    def work() -> None:
        nonlocal inside, most_inside, steps
        try:
            for _ in range(200):
                give_way()
                with lock:
                    inside += 1
                    most_inside = max(most_inside, inside)
                    steps += 1
                time.sleep(0.0002)  # a step that lets go of the interpreter: others could run now
                with lock:
                    inside -= 1
        finally:
            end_turn()

    _run_threads(work, work, work)
    assert steps == 600
    assert most_inside == 1


def test_the_turn_goes_to_the_longest_waiting_thread() -> None:
    foreground_idle()
    foreground._foreground = -1
    order: list[str] = []
    holder_has_it = threading.Event()
    release = threading.Event()

    def holder() -> None:
        give_way()
        holder_has_it.set()
        release.wait(5)
        give_way()  # hands over: waits behind the others now
        order.append("holder")
        end_turn()

    def waiter(name: str, after: float) -> None:
        holder_has_it.wait(5)
        time.sleep(after)
        give_way()
        order.append(name)
        end_turn()

    threads = [threading.Thread(target=holder), threading.Thread(target=waiter, args=("first", 0.01)),
               threading.Thread(target=waiter, args=("second", 0.05))]
    for thread in threads:
        thread.start()
    time.sleep(0.1)
    release.set()
    for thread in threads:
        thread.join(5)
    assert order == ["first", "second", "holder"]


@contextmanager
def _turn_held_by_a_blocked_thread() -> Iterator[None]:
    """Another thread takes the turn and then blocks (I/O, a model's answer) until the block ends."""
    foreground_idle()
    foreground._foreground = -1  # a foreground that is not any of these threads, idle
    taken = threading.Event()
    done = threading.Event()

    def blocking_holder() -> None:
        give_way()
        taken.set()
        done.wait(5)
        end_turn()

    thread = threading.Thread(target=blocking_holder)
    thread.start()
    taken.wait(5)
    try:
        yield
    finally:
        done.set()
        thread.join(5)


def test_a_holder_that_blocks_keeps_the_others_waiting_at_most_the_turn_limit() -> None:
    with _turn_held_by_a_blocked_thread():
        took = _seconds_in_other_thread(give_way)
    assert TURN_WAIT_S * 0.9 <= took < TURN_WAIT_S + 1.0


def test_work_that_takes_no_turn_never_waits_for_one() -> None:
    with _turn_held_by_a_blocked_thread():
        took = _seconds_in_other_thread(lambda: give_way(take_turn=False))
    assert took < TURN_WAIT_S / 2


def test_without_a_foreground_no_turn_is_taken() -> None:
    foreground_gone()
    holders: list[int | None] = []

    def step() -> None:
        give_way()
        holders.append(foreground._turns.holder)

    _run_threads(step, step)
    assert holders == [None, None]


def test_the_foreground_going_frees_a_turn_left_held() -> None:
    foreground_idle()
    foreground._foreground = -1
    _run_threads(give_way)  # a thread that ended without end_turn
    assert foreground._turns.holder is not None
    foreground_gone()
    assert foreground._turns.holder is None


def test_giving_way_yields_every_item_in_order() -> None:
    foreground_idle()
    foreground._foreground = -1
    out: list[list[int]] = []
    _run_threads(lambda: (out.append(list(giving_way(range(1000), every=7))), end_turn()))
    assert out == [list(range(1000))]


# -- a foreground that is overdue waits for the interpreter --------------------------------------


def test_background_work_steps_aside_while_the_foreground_is_overdue() -> None:
    """Idle until a moment now past (its timer is due): it is awake and wants the interpreter, so a
    step waits, without it, until the foreground marks itself busy; and then while it is busy."""
    foreground_busy()
    foreground_idle(until=time.monotonic() - 1.0)
    marks: list[str] = []

    def foreground_wakes() -> None:
        marks.append("busy")
        foreground_busy()
        threading.Timer(0.02, lambda: (marks.append("idle"), foreground_idle())).start()

    threading.Timer(0.02, foreground_wakes).start()
    took = _seconds_in_other_thread(lambda: give_way(take_turn=False))
    assert marks == ["busy", "idle"]  # the step went on only once the foreground was done
    assert 0.03 <= took < MAX_WAIT_S * 2 + 0.5


def test_a_foreground_waiting_for_a_later_moment_holds_nothing_back() -> None:
    foreground_busy()
    foreground_idle(until=time.monotonic() + 60.0)
    assert _seconds_in_other_thread(lambda: give_way(take_turn=False)) < MAX_WAIT_S / 2
    foreground_idle()  # no moment at all: only an event wakes it
    assert _seconds_in_other_thread(lambda: give_way(take_turn=False)) < MAX_WAIT_S / 2


def test_an_overdue_foreground_that_never_wakes_holds_a_step_back_at_most_the_limit() -> None:
    foreground_busy()
    foreground_idle(until=time.monotonic() - 1.0)
    took = _seconds_in_other_thread(lambda: give_way(take_turn=False))
    assert MAX_WAIT_S * 0.9 <= took < MAX_WAIT_S + 1.0


def test_a_turn_left_by_a_thread_that_ended_goes_to_the_next() -> None:
    foreground_idle()
    foreground._foreground = -1
    _run_threads(give_way)  # ended holding the turn, without end_turn
    took = _seconds_in_other_thread(give_way)
    assert took < TURN_WAIT_S / 2
