"""Where the app's judge run stands: a bar of judgments done, failures, rate and time left."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import ProgressBar, Static

from ..format import duration_text

if TYPE_CHECKING:
    from ..state import RunState

STATUS_STYLES = {"starting": "yellow", "running": "bold cyan", "finished": "bold green",
                 "cancelled": "bold yellow", "failed": "bold red"}


def progress_text(state: "RunState | None", *, show_timings: bool) -> Text:
    """One line: status, done/total, failures, items/s and ETA (timings can be left out, for snapshots)."""
    if state is None:
        return Text("No run yet: choose the settings and start one (ctrl+r).", style="dim")
    text = Text()
    label = f"Run {state.run_id}" if state.run_id is not None else "Run"
    text.append(f"{label} {state.status}", style=STATUS_STYLES.get(state.status, ""))
    if state.status == "starting":
        text.append(" · loading the judges…", style="dim")
        return text
    text.append(f" · {state.done}/{state.total} judged")
    if state.failures:
        text.append(f" · {state.failures} failed", style="red")
    else:
        text.append(" · 0 failed", style="dim")
    progress = state.progress
    if progress is not None and progress.cached:
        text.append(f" · {progress.cached} from cache", style="dim")
    if state.active and progress is not None and show_timings:
        text.append(f" · {progress.items_per_s:.1f} items/s · ETA {duration_text(progress.eta_s)}")
    if state.active:
        text.append(" · Esc cancels", style="dim")
    elif state.status == "cancelled":
        text.append(" · stored judgments kept; start the same settings again to resume", style="dim")
    if state.error:
        text.append(f"\n{state.error}", style="red")
    return text


class RunProgress(Vertical):
    """A progress bar with a status line under it; :meth:`show` redraws both from a RunState."""

    def compose(self) -> ComposeResult:
        yield ProgressBar(total=None, show_eta=False, id="run-progress-bar")
        yield Static(progress_text(None, show_timings=False), id="run-progress-text")

    def show(self, state: "RunState | None", *, show_timings: bool) -> None:
        bar = self.query_one(ProgressBar)
        bar.display = state is not None
        if state is None or state.total == 0:
            bar.update(total=None, progress=0)  # indeterminate while the judges load
        else:
            bar.update(total=state.total, progress=state.done)
        self.query_one("#run-progress-text", Static).update(progress_text(state, show_timings=show_timings))
