"""The counted pause of the cyclic garbage collector (core.gc_pause): threads that pause at once,
the freeze of the survivors when the last pause ends, and the young collections meanwhile."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from dialjudge.core.gc_pause import collect_young, collection_paused, gc_paused


@pytest.fixture(autouse=True)
def collector_restored() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.enable()
    yield
    gc.unfreeze()
    # As it was before the test, whatever the test did (one switches the collector off).
    if was_enabled:
        gc.enable()
    else:
        gc.disable()


class Node:
    """An object in a reference cycle with itself: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


def test_the_collector_runs_again_only_after_the_last_of_two_threads_ends() -> None:
    first_in, second_out, first_may_end = threading.Event(), threading.Event(), threading.Event()
    seen: list[bool] = []

    def first() -> None:
        with gc_paused():
            first_in.set()
            first_may_end.wait(5)
            seen.append(gc.isenabled())

    def second() -> None:
        first_in.wait(5)
        with gc_paused():
            pass
        seen.append(gc.isenabled())  # the first pause still runs: still paused
        second_out.set()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    second_out.wait(5)
    first_may_end.set()
    for thread in threads:
        thread.join(5)
    assert seen == [False, False]
    assert gc.isenabled() and not collection_paused()


def test_a_collector_switched_off_before_stays_off() -> None:
    gc.disable()
    with gc_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_settle_freezes_what_is_alive_when_the_block_ends() -> None:
    frozen_before = gc.get_freeze_count()
    with gc_paused(settle=True):
        keep = [Node() for _ in range(100)]
        assert gc.get_freeze_count() == frozen_before
    assert gc.get_freeze_count() >= frozen_before + len(keep)
    assert not any(isinstance(obj, Node) for gen in range(3) for obj in gc.get_objects(gen))


def test_a_settling_block_freezes_at_its_own_end_while_another_pause_goes_on() -> None:
    frozen_before = gc.get_freeze_count()
    with gc_paused():
        with gc_paused(settle=True):
            keep = [Node() for _ in range(100)]
        assert gc.get_freeze_count() >= frozen_before + len(keep)
        assert not gc.isenabled()  # the outer pause still runs
    assert gc.isenabled()


def test_without_settle_nothing_is_frozen() -> None:
    frozen_before = gc.get_freeze_count()
    with gc_paused():
        _ = [Node() for _ in range(10)]
    assert gc.get_freeze_count() == frozen_before


def test_young_collections_happen_only_while_paused() -> None:
    for _ in range(20):
        Node()
    assert collect_young() == 0  # not paused: automatic collection does it
    gc.collect()
    with gc_paused():
        for _ in range(20):
            Node()
        assert collect_young() >= 20
