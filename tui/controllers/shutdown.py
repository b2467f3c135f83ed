"""Quitting never loses work: a run or tuning search in progress is cancelled the way Esc does, then the app exits.

``q`` asks first (also when the Prompt lab holds unsaved edits); Ctrl+C, SIGTERM, SIGINT and SIGHUP (the terminal closed) do not.
Cancelling keeps every stored judgment and marks the run cancelled with its wall
time, so the next launch offers to resume it; requests in flight finish or are
dropped, never stored as failures. The app waits a few seconds at most for
that, then exits. :func:`end_process_promptly` then makes sure a model still
loading in llama.cpp (which cannot be interrupted) does not keep the process alive.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.worker import Worker, WorkerCancelled, WorkerFailed

if TYPE_CHECKING:
    from .runs import RunController
    from .tune import TuneController

QUIT_GROUP = "quit"
#: Signals that end the app the way Ctrl+C does (SIGHUP: the terminal was closed).
QUIT_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, name))


class ShutdownController:
    """Ends the app without losing work: cancels what runs, waits a bounded while, exits."""

    def __init__(self, app: App[Any], runs: RunController, tune: TuneController, *,
                 grace_s: float = 8.0,
                 ask: Callable[[str | None, str | None, Callable[[bool | None], None]], None] | None = None,
                 unsaved: Callable[[], str | None] = lambda: None) -> None:
        """``ask(what_runs, what_is_unsaved, answered)`` puts the question "quit anyway?" (the App shows
        its QuitDialog); ``unsaved()`` says what edits a quit would lose, in words (None: none)."""
        self.app = app
        self.runs = runs
        self.tune = tune
        self._unsaved = unsaved
        #: Seconds to wait for a cancelled run to store its end before exiting anyway.
        self.grace_s = grace_s
        self._ask = ask
        #: Seconds after the app closed before the process ends, whatever still runs (real app only).
        self.exit_watchdog_s = 4.0
        #: The app is on its way out (a second quit does nothing more).
        self.quitting = False
        self._signals: list[int] = []

    def busy(self) -> str | None:
        """What a quit would cancel, in words (None: nothing runs)."""
        parts = []
        state = self.runs.state
        if self.runs.active and state is not None:
            run = f"run {state.run_id}" if state.run_id else "the judge run"
            parts.append(f"{run} ({state.done} of {state.total} judged)" if state.total else run)
        if self.tune.running:
            parts.append("the tuning search")
        return " and ".join(parts) or None

    def request_quit(self, *, ask: bool) -> None:
        """Quit; with a run in progress or unsaved edits ask first (``ask``), or cancel the run at once."""
        if self.quitting:
            return
        what = self.busy()
        unsaved = self._unsaved() if ask else None
        if what is None and unsaved is None:
            self._exit_now()
            return
        if not ask or self._ask is None:  # not to be asked, or nobody to ask: quit as asked
            self._quit_confirmed()
            return
        self._ask(what, unsaved, self._answered)

    def _answered(self, confirmed: bool | None) -> None:
        if confirmed:
            self._quit_confirmed()

    def _quit_confirmed(self) -> None:
        # What ran when the question was put may have ended while it waited for the answer.
        if self.busy() is None:
            self._exit_now()
        else:
            self.cancel_then_exit()

    def _exit_now(self) -> None:
        self.quitting = True
        self.app.exit()

    def cancel_all(self) -> None:
        """Cancel the run and the tuning search, if any (stored work stays, both can be resumed)."""
        self.runs.cancel()
        self.tune.cancel()

    def cancel_then_exit(self) -> Worker[None]:
        """Cancel what runs, wait until it has stored its end (at most :attr:`grace_s`), then exit."""
        self.quitting = True
        tune_worker = self.tune.worker if self.tune.running else None
        self.cancel_all()
        self.app.notify("Stopping the run, then quitting…", timeout=self.grace_s)

        async def exit_when_stopped() -> None:
            # The run has stored its end (cancelled, with its wall time) when its RunFinished event
            # arrives; closing its judge may take longer (a request in flight), and need not be waited for.
            deadline = time.monotonic() + self.grace_s
            while self.runs.active and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            if tune_worker is not None:
                with contextlib.suppress(WorkerCancelled, WorkerFailed, asyncio.TimeoutError):
                    await asyncio.wait_for(tune_worker.wait(), max(0.1, deadline - time.monotonic()))
            if self.runs.active or self.tune.running:
                self.app.log.warning(f"quitting before the run stopped (waited {self.grace_s:g} s)")
            self._arm_exit_watchdog()
            self.app.exit()

        return self.app.run_worker(exit_when_stopped(), name=QUIT_GROUP, group=QUIT_GROUP,
                                   description="Stopping the run before quitting", exit_on_error=False)

    def _arm_exit_watchdog(self) -> None:
        """The real app only: end the process a few seconds after the app closed, whatever still runs.

        After a cancel the run's thread still closes its judge. A local model's evaluation in flight
        is aborted by the cancel (core.judges.types.InterruptibleBackend), but another backend may
        still wait for a request. The run's end is stored by then, and the app has restored the
        terminal; nothing is lost by not waiting.
        """
        if self.app.is_headless:
            return
        timer = threading.Timer(self.exit_watchdog_s, _end_process_now, args=(0,))
        timer.daemon = True
        timer.start()

    # -- signals ---------------------------------------------------------------------------

    def install_signal_handlers(self) -> None:
        """SIGTERM, SIGINT and SIGHUP quit without asking, cancelling a run first (the real app only:
        a test's app must leave its process's signals alone)."""
        loop = asyncio.get_running_loop()
        for signum in QUIT_SIGNALS:
            try:
                loop.add_signal_handler(signum, self.signal_received, signum)
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no such support
                continue
            self._signals.append(signum)

    def remove_signal_handlers(self) -> None:
        with contextlib.suppress(RuntimeError):
            loop = asyncio.get_running_loop()
            for signum in self._signals:
                loop.remove_signal_handler(signum)
        self._signals.clear()

    def signal_received(self, signum: int) -> None:
        """A quit signal: cancel what runs and exit (a second one while quitting changes nothing)."""
        self.app.log.info(f"signal {signum}: quitting")
        self.request_quit(ask=False)


def end_process_promptly(code: int, grace_s: float = 3.0) -> None:
    """After the app has closed: wait at most ``grace_s`` for leftover threads, then end the process.

    The run itself stored its end before the app closed. What can be left is a
    model still loading in llama.cpp's thread (a load cannot be interrupted and
    takes up to a minute); Python would wait for it at exit. Nothing of the run
    depends on it, so the process ends without it.
    """
    deadline = time.monotonic() + grace_s
    for thread in threading.enumerate():
        if thread is threading.main_thread() or thread.daemon:
            continue
        thread.join(max(0.0, deadline - time.monotonic()))
    if any(t.is_alive() and not t.daemon and t is not threading.main_thread() for t in threading.enumerate()):
        _end_process_now(code)
    # Python's exit runs full cyclic collections over everything the app still holds (datasets,
    # metric caches, NLTK's WordNet): measured 5-8 s on a busy 2-core machine after a quit whose
    # run had stopped within 0.5 s. Frozen objects are left out of those collections; memory is
    # the OS's to reclaim, and the exit handlers still run.
    gc.freeze()


def _end_process_now(code: int) -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)
