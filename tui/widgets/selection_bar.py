"""The quality picker and the subset toggles that the Scores and Plots screens share."""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Label, Select


class SelectionBar(Horizontal):
    """Two pickers; choosing posts :class:`SelectionBar.Chosen` (the app changes the view)."""

    @dataclass
    class Chosen(Message):
        """The user picked a quality or a subset (None: that one is unchanged)."""

        quality: str | None = None
        subset: str | None = None

    def compose(self) -> ComposeResult:
        yield Label("Quality", classes="selection-label")
        yield Select[str]([], prompt="quality", allow_blank=True, id="quality-select")
        yield Label("Subset", classes="selection-label")
        yield Select[str]([], prompt="subset", allow_blank=True, id="subset-select")

    def sync(self, qualities: list[str], quality: str | None, subsets: list[str], subset: str) -> None:
        """Show these choices and values, without announcing them as the user's."""
        quality_select = self.query_one("#quality-select", Select)
        subset_select = self.query_one("#subset-select", Select)
        with self.prevent(Select.Changed):
            quality_select.set_options([(q, q) for q in qualities])
            if quality is not None:
                quality_select.value = quality
            subset_select.set_options([(s, s) for s in subsets])
            subset_select.value = subset

    def on_select_changed(self, event: Select.Changed) -> None:
        event.stop()
        if event.select.is_blank():
            return
        if event.select.id == "quality-select":
            self.post_message(self.Chosen(quality=str(event.value)))
        else:
            self.post_message(self.Chosen(subset=str(event.value)))
