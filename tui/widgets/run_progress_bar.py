"""Where the app's judge run stands: a bar of judgments done, and core's status line under it.

While a run is active the status line is redrawn on a timer, not only when an event
arrives: the seconds a judge's model has been loading tick, and the remaining time
counts down between judgments (or grows when one takes longer than the others did).
The times come from the run state's clock (core.judges.store.status), so a test
drives them with its own.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.timer import Timer
from textual.widgets import ProgressBar, Static

from dialjudge.core.api.formatting import (
    problem_lines,
    status_line,
)
from dialjudge.core.api.types import (
    Part,
    RunState,
    RunStatus,
)

from ..state import STATUS_COLOURS

#: How each part of the status line looks; the status itself takes its colour from STATUS_STYLES.
PART_STYLES = {Part.STATUS: "", Part.COUNT: "", Part.FAILURES: "red", Part.NOTE: "dim", Part.ERROR: "red"}
STATUS_STYLES: dict[RunStatus | None, str] = {None: "yellow",
                                              **{status: f"bold {colour}" for status, colour in STATUS_COLOURS.items()}}


def progress_text(state: RunState | None, *, show_timings: bool, one_line: bool = False) -> Text:
    """Core's :func:`status_line` with colours and the keys that act on the run (timings can be left
    out, for snapshots; ``one_line``: an error follows on the same line)."""
    if state is None:
        return Text("No run yet: choose the settings and start one (ctrl+r).", style="dim")
    text = Text()
    pieces = status_line(state, show_timings=show_timings)
    error = pieces.pop() if pieces[-1][1] is Part.ERROR else None
    for piece, part in pieces:
        text.append(piece, style=STATUS_STYLES[state.status] if part is Part.STATUS else PART_STYLES[part])
    if state.status is not None and state.active:
        text.append(" · Esc cancels", style="dim")
    elif state.status in (RunStatus.CANCELLED, RunStatus.INTERRUPTED):
        text.append(" · stored judgments kept; start the same settings again to resume", style="dim")
    if error is not None:
        text.append(error[0].replace("\n", " · ") if one_line else error[0], style="red")
    if state.summary is not None and not state.active and not one_line:
        for line, part in problem_lines(state.summary):  # paused judges, cut dialogues, failure reasons
            text.append("\n" + line, style=PART_STYLES[part] or "red")
    return text


#: Seconds between redraws of an active run's status line (elapsed and remaining times move by the second).
TICK_S = 0.5


class RunProgressBar(Vertical):
    """A progress bar with a status line under it; :meth:`show` redraws both from a RunState."""

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._state: RunState | None = None
        self._show_timings = False
        self._ticker: Timer | None = None

    def compose(self) -> ComposeResult:
        yield ProgressBar(total=None, show_eta=False, id="run-progress-bar")
        yield Static(progress_text(None, show_timings=False), id="run-progress-text")

    def on_mount(self) -> None:
        self._ticker = self.set_interval(TICK_S, self._tick, pause=True, name="run status clock")
        self._follow_clock()

    def _follow_clock(self) -> None:
        """Tick while a run is active and times are shown; otherwise nothing moves between events."""
        if self._ticker is None:
            return
        if self._state is not None and self._state.active and self._show_timings:
            self._ticker.resume()
        else:
            self._ticker.pause()

    def _tick(self) -> None:
        if self._state is not None and self._state.active:
            self.query_one("#run-progress-text", Static).update(
                progress_text(self._state, show_timings=self._show_timings))

    def show(self, state: RunState | None, *, show_timings: bool) -> None:
        self._state, self._show_timings = state, show_timings
        self._follow_clock()
        bar = self.query_one(ProgressBar)
        bar.display = state is not None
        if state is None or state.total == 0:
            bar.update(total=None, progress=0)  # indeterminate while the judges load
        else:
            bar.update(total=state.total, progress=state.done)
        self.query_one("#run-progress-text", Static).update(progress_text(state, show_timings=show_timings))
