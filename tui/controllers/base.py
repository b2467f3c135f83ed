"""Starting background work the way every controller does: a thread worker owned by the app."""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from textual.app import App
from textual.worker import Worker

from .background import in_background

ResultType = TypeVar("ResultType")


def start_thread_work(app: App[Any], work: Callable[[], ResultType], *, group: str, description: str,
                      exclusive: bool = True, long_lived_result: bool = False) -> Worker[ResultType]:
    """Run ``work`` on a thread worker of ``app``.

    The worker belongs to the app, so a failure reaches the app's one
    ``on_worker_state_changed`` handler (``exit_on_error=False``: a failure is a
    notification, never an exit); ``exclusive`` cancels the group's previous worker.
    ``work`` never touches a widget: it posts a message. It runs at a lower OS priority than the
    UI thread (:mod:`.background`). ``long_lived_result``: what the work leaves alive (a dataset,
    its metric scores, a run's results) is frozen out of later garbage collections when it ends.
    """
    return app.run_worker(in_background(work, settle=long_lived_result), name=group, group=group,
                          description=description, exclusive=exclusive, exit_on_error=False, thread=True)


def start_following_work(app: App[Any], work: Callable[[], ResultType], *, group: str, description: str,
                         long_lived_result: bool = False) -> Worker[ResultType]:
    """Run ``work``, which follows work done in another process, on a new thread of its own at the UI thread's
    priority, as a worker of ``app`` (failures reach the app as for :func:`start_thread_work`).

    Not a thread worker: those run on the event loop's shared threads, and a thread once lowered for other
    work stays lowered (an unprivileged thread cannot raise its priority again). A lowered thread that holds
    the interpreter lock in many short moments is preempted inside one, and the UI thread waits for the lock
    meanwhile (:mod:`.background`). A new thread takes the priority of the UI thread that starts it.
    """

    async def on_a_thread_of_its_own() -> ResultType:
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=group)
        try:
            run = in_background(work, settle=long_lived_result, lower_priority=False)
            # In this worker's context, as a thread worker's work is: get_current_worker() answers there.
            in_context = functools.partial(contextvars.copy_context().run, run)
            return await asyncio.get_running_loop().run_in_executor(executor, in_context)
        finally:
            executor.shutdown(wait=False)

    return app.run_worker(on_a_thread_of_its_own(), name=group, group=group, description=description,
                          exclusive=True, exit_on_error=False)
