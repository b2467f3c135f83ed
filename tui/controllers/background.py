"""Background threads yield the CPU and the interpreter to the UI thread.

On a machine whose cores are shared (two cores, a load of 6 to 9 where the app's stalls were
measured), the UI thread lost its turn to the app's own work threads: a 10 ms timer went
unserved for 200-800 ms while the UI thread used almost no CPU (it was runnable and waiting).
A work thread therefore lowers its own scheduling priority (a nice value, per thread on Linux)
before it starts, so that when both want a core the UI thread gets it. Throughput of the
background work is unchanged on an idle machine. Where per-thread priorities do not exist
(macOS, Windows: ``setpriority`` there would change the whole process) nothing is done.

A nice value cannot stop a full garbage collection, which holds the interpreter lock while it
walks every object: triggered by a work thread's allocations at 100,000 items, each froze the UI
for 150-380 ms. While any background work runs, automatic collection is paused
(``core.api.gc_paused``), the UI thread collects the young generations between frames
(:data:`YOUNG_COLLECTION_INTERVAL_S`), and the long-lived results of the heavy work (a dataset,
its metric scores and statistics, a run) are frozen out of later collections when it ends (the
trade-off is explained in core's ``gc_pause``).

A thread that only follows work done in another process (a judge run's, a run's statistics refresh)
keeps the UI thread's priority (``controllers.base.start_following_work``): it holds the interpreter
lock in many short moments, and lowered, the kernel took the core from it inside such a moment beside
a busy process and gave it back tens of ms later, while the UI thread waited for the lock (ARCHITECTURE.md
gives the figures).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from typing import TypeVar

from dialjudge.core.api.background import gc_paused

ResultType = TypeVar("ResultType")

#: The nice value a work thread takes (0 is the default, 19 the lowest priority).
BACKGROUND_NICENESS = 10

#: How often the UI thread collects the young generations while background work pauses automatic
#: collection: often enough that short-lived garbage cycles stay few (each collection then takes
#: a few ms), rarely enough to cost nothing noticeable.
YOUNG_COLLECTION_INTERVAL_S = 0.5


def lower_thread_priority(niceness: int = BACKGROUND_NICENESS) -> bool:
    """Give the calling thread (never the process) at least ``niceness``; False where that is not
    possible. A thread already lower is left as it is: an unprivileged thread cannot raise it again."""
    if not sys.platform.startswith("linux"):
        return False
    thread = threading.get_native_id()
    try:
        if os.getpriority(os.PRIO_PROCESS, thread) < niceness:
            os.setpriority(os.PRIO_PROCESS, thread, niceness)
    except OSError:
        return False
    return True


def in_background(work: Callable[[], ResultType], *, settle: bool = False,
                  lower_priority: bool = True) -> Callable[[], ResultType]:
    """``work``, run at the background priority by whichever thread calls it, with automatic garbage
    collection paused meanwhile; ``settle``: what is alive when it ends is frozen (see the module).
    Only for work whose results live long: each freeze also keeps for good the reference cycles
    alive at that moment that die later (a dialog open then, closed after). ``lower_priority=False``
    leaves the thread's priority as it is (a thread that follows another process's work: see the module)."""

    def run() -> ResultType:
        if lower_priority:
            lower_thread_priority()
        with gc_paused(settle=settle):
            return work()

    return run
