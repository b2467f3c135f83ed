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
"""

from __future__ import annotations

import threading

#: The longest one step waits for a busy foreground: background work always moves on.
MAX_WAIT_S = 0.05

_idle = threading.Event()
_idle.set()
#: The foreground thread's identity (None: no foreground): it never waits for itself.
_foreground: int | None = None


def foreground_busy() -> None:
    """The calling thread is the foreground and runs (its event loop woke up)."""
    global _foreground
    _foreground = threading.get_ident()
    _idle.clear()


def foreground_idle() -> None:
    """The foreground thread waits for events."""
    _idle.set()


def foreground_gone() -> None:
    """There is no foreground any more (the app ended)."""
    global _foreground
    _foreground = None
    _idle.set()


def give_way() -> None:
    """Called by background work between steps (each a few ms at most): wait while the foreground
    runs, at most :data:`MAX_WAIT_S`. On the foreground thread itself, nothing."""
    if not _idle.is_set() and threading.get_ident() != _foreground:
        _idle.wait(MAX_WAIT_S)
