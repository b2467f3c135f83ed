"""Background work gives way to a busy foreground thread (core.foreground), never for long."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from dialjudge.core import foreground
from dialjudge.core.foreground import MAX_WAIT_S, foreground_busy, foreground_gone, foreground_idle, give_way


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
