"""Which two evaluator columns to compare on the Scores screen: A (the reference) and B."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Select


class CompareDialog(ModalScreen[tuple[str, str] | None]):
    """Two pickers over the evaluator columns; dismisses with (A, B) or None."""

    CSS_PATH = "compare_dialog.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", key_display="Esc"),
        Binding("ctrl+s", "compare", "Compare"),
    ]

    def __init__(self, choices: Sequence[str], *, a: str | None = None, b: str | None = None,
                 view: str = "") -> None:
        super().__init__()
        self.choices = list(choices)
        self.initial_a = a if a in self.choices else (self.choices[0] if self.choices else None)
        others = [c for c in self.choices if c != self.initial_a]
        self.initial_b = b if b in others else (others[0] if others else None)
        self.view = view

    def compose(self) -> ComposeResult:
        options = [(name, name) for name in self.choices]
        with Vertical(classes="dialog"):
            yield Label("Compare two evaluators", classes="dialog-title")
            yield Label(f"Paired over the same items and contexts{f' ({self.view})' if self.view else ''}: "
                        "does B agree better with the humans than A?", classes="dialog-text")
            yield Label("A", classes="dialog-text")
            yield Select(options, value=self.initial_a or Select.BLANK, id="compare-a", allow_blank=False)
            yield Label("B", classes="dialog-text")
            yield Select(options, value=self.initial_b or Select.BLANK, id="compare-b", allow_blank=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Compare (ctrl+s)", id="compare", variant="primary")
                yield Button("Cancel (Esc)", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#compare-b", Select).focus()

    def chosen(self) -> tuple[str, str] | None:
        a, b = self.query_one("#compare-a", Select).value, self.query_one("#compare-b", Select).value
        if not isinstance(a, str) or not isinstance(b, str):
            return None
        return a, b

    def action_compare(self) -> None:
        """Compare B with A."""
        pair = self.chosen()
        if pair is None or pair[0] == pair[1]:
            self.notify("Pick two different evaluators", severity="warning")
            return
        self.dismiss(pair)

    def action_cancel(self) -> None:
        """Close without comparing."""
        self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "compare":
            self.action_compare()
        else:
            self.action_cancel()
