"""Pausing Python's cyclic garbage collector around bulk work that builds many acyclic objects.

Why: loaders building hundreds of thousands of records and the metric engine caching every
text's tokens and n-gram counts create objects that form no cycles, yet each collection they
trigger walks every object the process holds (NLTK's WordNet included). Measured: a third of
a loader's time, a third to half of the metric engine's on 2,500 distinct pairs. Reference
counting still frees everything as usual.

The pause is process-wide, so pauses are counted: several threads may pause at once and the
collector runs again only when the last of them ends (a plain disable/enable pair in two
threads would switch it back on under the other one).

In the app a full collection is also a stall: it holds the interpreter lock while it walks the
whole heap (at 100,000 items 150-380 ms each, measured in the app's own work threads, during
which the UI thread cannot draw). The app therefore pauses collection while its background work
runs, collects the young generations itself between frames (:func:`collect_young`, a few ms),
and when a piece of work ends moves what is alive out of the collector's reach
(``settle=True``, or :func:`freeze_survivors` where the work hands over a result and goes on:
``gc.freeze``): a dataset, its metric caches, a run's results are long-lived, so later
collections walk only what was made since. The cost: a reference cycle that was alive at that
moment and dies later is never collected (reference counting still frees everything that is not
in a cycle, so an old dataset's records go when it is closed).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_pauses = 0
_enable_after = False


@contextmanager
def gc_paused(*, settle: bool = False) -> Iterator[None]:
    """No automatic cyclic garbage collection inside the block, in any thread; the collector's
    previous state is restored when the last concurrent pause ends. ``settle``: when the block
    ends, what is alive is frozen (see the module)."""
    global _pauses, _enable_after
    with _lock:
        if _pauses == 0:
            _enable_after = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _lock:
            _pauses -= 1
            if settle:
                # Not after a collection of the young generations: at 100,000 items that walks the
                # work's millions of new objects while holding the interpreter (78 ms). The app's
                # UI thread collects them every half second, so few garbage cycles are young now.
                gc.freeze()
            if _pauses == 0 and _enable_after:
                gc.enable()


def freeze_survivors() -> None:
    """Move every object alive now out of the collector's reach (``gc.freeze``; see the module)."""
    gc.freeze()


def collection_paused() -> bool:
    """Whether a :func:`gc_paused` block is running in some thread."""
    return _pauses > 0


def collect_young() -> int:
    """While collection is paused, collect the two young generations (the garbage cycles a
    running app makes die young); nothing otherwise. Returns the objects collected."""
    if not collection_paused():
        return 0
    return gc.collect(1)
