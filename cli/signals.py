"""SIGTERM ends a command the way Ctrl-C does, so a run stopped by ``kill`` is marked interrupted."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """While inside, SIGTERM is handled by whatever handles SIGINT just then.

    Under asyncio.run that is the runner's handler: it cancels the main task, so
    the engine marks the run cancelled (resumable) and releases its lock, and
    asyncio.run raises KeyboardInterrupt, which the CLI reports as interrupted.
    Elsewhere it is Python's default, which raises KeyboardInterrupt at once.
    """

    def interrupt(signum: int, frame: FrameType | None) -> None:
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, frame)
        else:  # SIGINT ignored or left to the system: still stop
            raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread: leave signals to whoever owns them
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
