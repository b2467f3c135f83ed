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
from collections.abc import Callable
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, Progress, ProgressColumn, Task, TaskID, TextColumn
from rich.text import Text

from dialjudge.core.api import RunEvent, RunPhase, RunState, StopRuleChecked, status_text
from dialjudge.core.format import duration_text


class StatusColumn(ProgressColumn):
    """The run's status line, made when the bar is drawn (so elapsed and remaining times move)."""

    def __init__(self, state: RunState) -> None:
        super().__init__()
        self.state = state

    def render(self, task: Task) -> Text:
        return Text(status_text(self.state))


class ProgressDisplay:
    """Follows one run's events (``with ProgressDisplay(con, "judging") as display: ...``)."""

    def __init__(self, con: Console, verb: str, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.state = RunState(clock=clock)
        # The bar, then the status line the app's Run screen shows (core/judges/store/status).
        self.status = StatusColumn(self.state)
        self.progress = Progress(TextColumn(f"[bold]{verb}"), BarColumn(), self.status, console=con,
                                 transient=False)
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
        self.progress.__exit__(exc_type, exc, tb)
