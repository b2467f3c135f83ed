"""Starting background work the way every controller does: a thread worker owned by the app."""

from __future__ import annotations

from collections.abc import Callable
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
