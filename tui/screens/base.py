"""What every workspace screen shares: following the app's workspace changes, and the view keys."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.screen import Screen

from ..host import DialjudgeHost, dialjudge_app
from ..state import Change, WorkspaceChange

SUBSET_KEYS = Binding.Group("Subset", compact=True)
QUALITY_KEYS = Binding.Group("Quality", compact=True)

#: Keys that change the quality and subset, for screens that show them.
VIEW_BINDINGS: list[BindingType] = [
    Binding("left_square_bracket", "app.cycle_subset(-1)", "Previous subset", key_display="[", group=SUBSET_KEYS),
    Binding("right_square_bracket", "app.cycle_subset(1)", "Next subset", key_display="]", group=SUBSET_KEYS),
    Binding("left_curly_bracket", "app.cycle_quality(-1)", "Previous quality", key_display="{",
            group=QUALITY_KEYS),
    Binding("right_curly_bracket", "app.cycle_quality(1)", "Next quality", key_display="}", group=QUALITY_KEYS),
]


def no_dataset_text(dj: DialjudgeHost, *, short: bool = False, tiny: bool = False,
                    on_datasets_screen: bool = False) -> Text:
    """What a screen shows while no dataset is open: that one is opening, or why the open failed and
    where to go next (``short``: one line, without the reason; ``tiny``: a plot's title)."""
    error = dj.datasets.open_error
    if error is None:
        return Text("Opening the dataset…", style="dim")
    if tiny:
        return Text("No dataset (press d)", style="bold yellow")
    where = ("pick one in the list, or open a file (f)" if on_datasets_screen
             else "press d for the Datasets screen")
    if short:
        return Text(f"No dataset open: {where}", style="bold yellow")
    return Text.assemble(("No dataset open. ", "bold yellow"), (f"The dataset could not be opened: {error}", "red"),
                         f"\nNext: {where}.")


class WorkspaceScreen(Screen[None]):
    """A screen that shows part of the workspace.

    Subclasses implement :meth:`workspace_changed`. While the screen is not on
    top, changes are only remembered; the screen catches up when it is shown.
    """

    BINDINGS: ClassVar[list[BindingType]] = []

    @property
    def dj(self) -> DialjudgeHost:
        """The app, typed: its controllers are ``dj.datasets``, ``dj.runs``, ``dj.lab``, ..."""
        return dialjudge_app(self)

    def on_mount(self) -> None:
        # Textual calls every class's on_mount along the MRO, so a subclass's super().on_mount() runs
        # this a second time: the screen follows the workspace once whoever calls it (subscribed
        # twice, it drew every change twice: 60 ms at 100,000 items).
        if getattr(self, "_missed", None) is not None:
            return
        self._missed: set[Change] = set()
        self.dj.datasets.workspace_changed.subscribe(self, self._on_change)
        self.workspace_changed(WorkspaceChange(Change.DATASET))

    def _on_change(self, change: WorkspaceChange) -> None:
        if self.is_current:
            self.workspace_changed(change)
        else:
            self._missed.add(change.kind)

    def on_screen_resume(self) -> None:
        if getattr(self, "_missed", None):
            missed, self._missed = self._missed, set()
            # A new dataset redraws everything; otherwise catch up on each kind once
            # (no item ids: whatever may have changed is redrawn).
            for kind in ([Change.DATASET] if Change.DATASET in missed else [k for k in Change if k in missed]):
                self.workspace_changed(WorkspaceChange(kind))

    def workspace_changed(self, change: WorkspaceChange) -> None:
        """Redraw what ``change`` affects."""
