"""The command line's :class:`RunDisplay`: a progress bar with the app's status line under it.

In a terminal the status line is drawn afresh at each refresh of the bar (several
times a second), not only when an event arrives: the time a judge's model has been
loading ticks, and the remaining time counts down (or grows) between judgments.
Where stderr is not a terminal (a log file, CI) nothing is redrawn; each wait the
run went through (preparing the prompts, loading a judge, its first answer) is
printed as one line with the time it took, when it ends.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any

from rich.console import Console, RenderableType
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TaskID, TextColumn
from rich.text import Text

from dialjudge.core.api.events import (
    RunEvent,
    RunPhase,
    StopRuleChecked,
)
from dialjudge.core.api.formatting import status_text
from dialjudge.core.api.types import RunState
from dialjudge.core.errors import DialjudgeError
from dialjudge.core.format import duration_text


class StatusProgress(Progress):
    """The bar, with the run's status line under it, made afresh at each refresh (so elapsed and
    remaining times move between events) and wrapped, never cut, on a narrow terminal."""

    def __init__(self, state: RunState, *columns: ProgressColumn | str, **options: Any) -> None:
        self.state = state  # before Progress starts asking for what to draw
        super().__init__(*columns, **options)

    def status(self) -> Text:
        return Text(status_text(self.state))

    def get_renderables(self) -> Iterable[RenderableType]:
        yield self.make_tasks_table(self.tasks)
        yield self.status()


class ProgressDisplay:
    """Follows one run's events (``with ProgressDisplay(con, "judging") as display: ...``)."""

    def __init__(self, con: Console, verb: str, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.state = RunState(clock=clock)
        # The bar, then the status line the app's Run screen shows (core/judges/store/status).
        self.progress = StatusProgress(self.state, TextColumn(f"[bold]{verb}"), BarColumn(),
                                       MofNCompleteColumn(), console=con, transient=False)
        self._task: TaskID = self.progress.add_task(verb, total=None)
        #: Without a terminal: each wait as one line when it ends.
        self._phase_lines = not con.is_terminal

    def on_event(self, event: RunEvent) -> None:
        state = self.state
        ended, lasted = state.phase, state.phase_elapsed_s()
        state.apply(event)
        if self._phase_lines and ended is not None and (isinstance(event, RunPhase) or state.phase is None):
            self.progress.console.print(f"{ended}: {duration_text(lasted)}", markup=False, highlight=False)
        total = state.total if state.status is not None and state.total else None
        self.progress.update(self._task, total=total, completed=state.done)
        if isinstance(event, StopRuleChecked):
            self.progress.console.print(f"stop rule, {event.state.n_items} items in {event.state.n_contexts} "
                                        f"contexts: {event.state.message}", markup=False)

    def __enter__(self) -> "ProgressDisplay":
        self.progress.__enter__()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if isinstance(exc, DialjudgeError):
            self.state.error = None  # the command prints it once, as its error, with exit code 2
        self.progress.__exit__(exc_type, exc, tb)
