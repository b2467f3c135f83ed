"""The command line's :class:`RunDisplay`: a progress bar with the app's status line under it."""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn

from dialjudge.core.api import RunEvent, RunState, StopRuleChecked, status_text


class ProgressDisplay:
    """Follows one run's events (``with ProgressDisplay(con, "judging") as display: ...``)."""

    def __init__(self, con: Console, verb: str) -> None:
        # The bar, then the status line the app's Run screen shows (core/judges/status).
        self.progress = Progress(TextColumn(f"[bold]{verb}"), BarColumn(),
                                 TextColumn("{task.fields[detail]}", markup=False), console=con, transient=False)
        self.state = RunState()
        self._task: TaskID = self.progress.add_task(verb, total=None, detail=status_text(self.state))

    def on_event(self, event: RunEvent) -> None:
        state = self.state
        state.apply(event)
        total = state.total if state.status is not None and state.total else None
        self.progress.update(self._task, total=total, completed=state.done, detail=status_text(state))
        if isinstance(event, StopRuleChecked):
            self.progress.console.print(f"stop rule, {event.state.n_items} items in {event.state.n_contexts} "
                                        f"contexts: {event.state.message}", markup=False)

    def __enter__(self) -> "ProgressDisplay":
        self.progress.__enter__()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.progress.__exit__(exc_type, exc, tb)
