"""Background work gives the interpreter to a foreground thread that is running.

CPython runs one thread's Python at a time. A thread that wants the interpreter waits for the one
holding it to be asked to let go (every 5 ms, ``sys.getswitchinterval``), and then every thread
that wants it takes turns: with two busy work threads the app's UI thread got a third of the
interpreter, so 30 ms of drawing took 90-150 ms (measured at 100,000 items: the statistics, a
judge run and the open's preparation each in a thread of their own).

A front end with an event loop marks its thread *busy* while it runs and *idle* while it waits
for events (:func:`foreground_busy`, :func:`foreground_idle`). Long loops of background work
call :func:`give_way` between steps: while the foreground is busy the step waits, without the
interpreter, until it is idle again or ``MAX_WAIT_S`` has passed, so the foreground's work runs
almost uninterrupted and background work is never starved for long. With no foreground (the
command line, tests of core) :func:`give_way` returns at once.

Background threads also take *turns* among themselves (:class:`Turns`). Each wait for the
interpreter is a round of CPython's switching, and every thread that wants it is a contender: with
the open's summary, the metric scoring and the statistics computing side by side at 100,000 items,
the UI thread waited 200-340 ms for the interpreter while the three took it in turn (sampled with
py-spy). A thread that calls :func:`give_way` holds the turn until its next call, when it hands it
to the longest-waiting one, and waits for it again without the interpreter; so at most one such
thread contends with the UI thread, whose every wait is then one switch interval at most. A thread
that blocks while holding the turn (I/O, a model's answer) keeps the others waiting at most
``TURN_WAIT_S`` a step: then they go on without it. Work that waits on others (a judge run) gives
way without taking turns (``take_turn=False``).

A foreground that waits for events says until when at the latest (``foreground_idle(until)``: its
next timer). Past that moment it is awake but cannot mark itself busy before it has the interpreter,
and a background thread that lets go of the interpreter for a moment again and again (an event
loop polling its sockets after every judgment, a file read a line at a time) takes it straight back
each time: CPython asks the holder to let go only after a whole switch interval without any switch,
so the UI thread waited 100-350 ms while a fake-judge run streamed in. So :func:`give_way` also
steps aside, without the interpreter, while the foreground is overdue (``OVERDUE_S`` past its
moment), until it marks itself busy.
"""

from __future__ import annotations

import itertools
import math
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from typing import TypeVar

Item = TypeVar("Item")

#: The longest one step waits for a busy foreground: background work always moves on.
MAX_WAIT_S = 0.05

_idle = threading.Event()
_idle.set()
_busy = threading.Event()
#: When the idle foreground wakes at the latest (time.monotonic; infinity: only on an event).
_wakes_by = math.inf
#: How late past that moment a foreground that has not marked itself busy counts as waiting for the
#: interpreter (its wake-up itself takes a fraction of a millisecond).
OVERDUE_S = 0.002
#: The foreground thread's identity (None: no foreground): it never waits for itself.
_foreground: int | None = None


def foreground_busy() -> None:
    """The calling thread is the foreground and runs (its event loop woke up)."""
    global _foreground
    _foreground = threading.get_ident()
    _idle.clear()
    _busy.set()


def foreground_idle(until: float | None = None) -> None:
    """The foreground thread waits for events, until ``until`` (time.monotonic) at the latest
    (None: however long it takes)."""
    global _wakes_by
    _wakes_by = math.inf if until is None else until
    _busy.clear()
    _idle.set()


def foreground_gone() -> None:
    """There is no foreground any more (the app ended)."""
    global _foreground, _wakes_by
    _foreground = None
    _wakes_by = math.inf
    _idle.set()
    _busy.set()
    holder = _turns.holder  # work that outlives its app must not keep a later app's work waiting
    if holder is not None:
        _turns.release(holder)


#: The longest a step waits for its turn: a holder that blocks (I/O) never stops the others for long.
TURN_WAIT_S = 0.2


class Turns:
    """One background thread at a time runs between its :func:`give_way` calls, the others waiting
    in line (first come, first served) without the interpreter."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._line: deque[int] = deque()
        self.holder: int | None = None

    def take(self, me: int, timeout: float) -> bool:
        """Wait (at most ``timeout``) until ``me`` is first in line and nobody holds the turn; then
        hold it. False: the wait timed out, and ``me`` goes on without the turn."""
        with self._cond:
            if self.holder == me:
                return True
            if self.holder is not None and not _alive(self.holder):
                self.holder = None  # a thread that ended without end_turn (its work was not in_background)
            if self.holder is None and not self._line:
                self.holder = me
                return True
            self._line.append(me)
            try:
                taken = self._cond.wait_for(lambda: self.holder is None and self._line[0] == me, timeout)
            finally:
                self._line.remove(me)
                self._cond.notify_all()  # the next in line may be free to go now
            if taken:
                self.holder = me
            return taken

    def release(self, me: int) -> None:
        """``me`` gives the turn up (nothing where ``me`` does not hold it)."""
        with self._cond:
            if self.holder == me:
                self.holder = None
                self._cond.notify_all()


def _alive(thread_id: int) -> bool:
    return any(thread.ident == thread_id for thread in threading.enumerate())


_turns = Turns()


def give_way(*, take_turn: bool = True) -> None:
    """Called by background work between steps (each a few ms at most): wait while the foreground
    runs, at most :data:`MAX_WAIT_S`, then for this thread's turn among the background threads
    (``take_turn``; see the module). On the foreground thread itself, and with no foreground,
    nothing."""
    foreground = _foreground
    me = threading.get_ident()
    if foreground is None or me == foreground:
        return
    _turns.release(me)
    if _idle.is_set() and time.monotonic() > _wakes_by + OVERDUE_S:
        _busy.wait(MAX_WAIT_S)  # the foreground is awake and waits for the interpreter: let it have it
    if not _idle.is_set():
        _idle.wait(MAX_WAIT_S)
    if take_turn:
        _turns.take(me, TURN_WAIT_S)


def end_turn() -> None:
    """The calling thread's background work ended: the turn it may hold goes to the next in line."""
    _turns.release(threading.get_ident())


def giving_way(items: Iterable[Item], every: int = 256) -> Iterable[Item]:
    """``items``, with :func:`give_way` before the first and after every ``every`` of them: for loops
    over 100,000 examples that an app runs in the background. With no foreground, and on the
    foreground thread itself, ``items`` as they are (a loop there pays nothing for it)."""
    foreground = _foreground
    if foreground is None or threading.get_ident() == foreground:
        return items
    return _giving_way(items, every)


def _giving_way(items: Iterable[Item], every: int) -> Iterator[Item]:
    remaining = iter(items)
    while chunk := list(itertools.islice(remaining, every)):
        give_way()
        yield from chunk
