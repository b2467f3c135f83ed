"""Saving an edited shipped template: under a new name (the default), or, explicitly, in its place."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static


@dataclass(frozen=True)
class SaveChoice:
    """Save under ``name``; ``override``: in place of the shipped template of that name."""

    name: str
    override: bool = False


class SaveTemplateDialog(ModalScreen["SaveChoice | None"]):
    """The edited template carries a shipped template's name: save a copy under a new name, or override."""

    CSS_PATH = "dialogs.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", key_display="Esc"),
        Binding("ctrl+o", "override", "Override the shipped one"),
    ]

    def __init__(self, shipped_name: str, suggested: str) -> None:
        super().__init__()
        self.shipped_name = shipped_name
        self.suggested = suggested

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(f"Save your edit of {self.shipped_name} as…", classes="dialog-title")
            yield Static(
                f"{self.shipped_name} ships with dialjudge. Saved under a new name, your edit is a template of "
                "its own and runs of either stay told apart. Overriding makes every run and tuning search that "
                f"asks for {self.shipped_name} use your edit instead (marked \"your override\" in every picker; "
                "f4 in the Prompt lab reverts it).", classes="dialog-text")
            yield Label("New name (lowercase letters, digits, - and _)", classes="dialog-text")
            yield Input(self.suggested, id="save-as-name")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Save as new (Enter)", id="save-as", variant="primary")
                yield Button("Override (ctrl+o)", id="override", variant="warning")
                yield Button("Cancel (Esc)", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#save-as-name", Input).focus()

    def action_save_as(self) -> None:
        """Save under the new name."""
        name = self.query_one("#save-as-name", Input).value.strip()
        if not name:
            self.notify("Type the new template's name", severity="warning")
            return
        if name == self.shipped_name:
            self.notify("That is the shipped template's name: use Override to replace it", severity="warning")
            return
        self.dismiss(SaveChoice(name))

    def action_override(self) -> None:
        """Save in place of the shipped template (explicit)."""
        self.dismiss(SaveChoice(self.shipped_name, override=True))

    def action_cancel(self) -> None:
        """Close without saving."""
        self.dismiss(None)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_save_as()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        {"save-as": self.action_save_as, "override": self.action_override}.get(
            event.button.id or "", self.action_cancel)()
