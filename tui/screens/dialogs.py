"""Small modal questions the judge screens ask: resume a run, where to export, a persona to edit."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Static, TextArea

from dialjudge.core.api import check_persona_name
from dialjudge.core.api.types import Persona, RunStatus
from dialjudge.core.errors import TemplateError

from ..widgets.path_suggester import PathSuggester
from ..widgets.toggles import StateCheckbox

if TYPE_CHECKING:
    from dialjudge.core.api import RunRecord
    from dialjudge.core.api.types import Persona

RESUME = "resume"
FRESH = "fresh"


class ResumeDialog(ModalScreen[str | None]):
    """An unfinished run has the same configuration: continue it, or start a new one?"""

    CSS_PATH = "dialogs.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "choose('resume')", "Resume it"),
        Binding("n", "choose('fresh')", "New run"),
        Binding("escape", "choose(None)", "Back", key_display="Esc"),
    ]

    def __init__(self, record: RunRecord) -> None:
        super().__init__()
        self.record = record

    def compose(self) -> ComposeResult:
        r = self.record
        with Vertical(classes="dialog"):
            yield Label("Resume the earlier run?", classes="dialog-title")
            yield Static(_resume_text(r), classes="dialog-text")
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"Resume run {r.id} (r)", id="resume", variant="primary")
                yield Button("New run (n)", id="fresh")
                yield Button("Back (Esc)", id="back")

    def action_choose(self, choice: str | None) -> None:
        """Answer the question."""
        self.dismiss(choice)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss({"resume": RESUME, "fresh": FRESH}.get(event.button.id or ""))


def _resume_text(r: RunRecord) -> str:
    made = (f"Run {r.id} ({r.status}, created {r.created[:19].replace('T', ' ')}) was made with exactly these "
            f"settings and holds {r.judgments} of {r.total} judgments" + (f", {r.failures} failed" if r.failures else ""))
    if r.status is RunStatus.AWAITING_ANSWERS:
        return (made + ": it was written to a batch file and awaits the rest of its answers.\n"
                "Resuming judges its unanswered judgments here, live (as `dialjudge judge --continue-live` does); "
                "an answer file can still be imported for the ones left; a new run judges everything again.")
    return (made + ".\nResuming asks only for the judgments still missing (failed requests are tried again); "
            "a new run judges everything again.")


@dataclass(frozen=True)
class ExportChoice:
    folder: Path
    formats: tuple[str, ...]


class ExportDialog(ModalScreen[ExportChoice | None]):
    """Which files to write, and into which folder."""

    CSS_PATH = "dialogs.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", key_display="Esc"),
        Binding("ctrl+s", "export", "Export"),
    ]

    def __init__(self, title: str, formats: Sequence[tuple[str, str, bool]], folder: Path) -> None:
        """``formats``: (key, label, checked at first)."""
        super().__init__()
        self.title_text = title
        self.formats = list(formats)
        self.folder = folder

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.title_text, classes="dialog-title")
            yield Label("Folder (→ completes the path; created if missing)", classes="dialog-text")
            yield Input(str(self.folder), id="export-folder", suggester=PathSuggester())
            for key, label, checked in self.formats:
                yield StateCheckbox(label, checked, id=f"format-{key}", compact=True)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Export (ctrl+s)", id="export", variant="primary")
                yield Button("Cancel (Esc)", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#export-folder", Input).focus()

    def chosen_formats(self) -> tuple[str, ...]:
        return tuple(key for key, _, _ in self.formats if self.query_one(f"#format-{key}", Checkbox).value)

    def action_export(self) -> None:
        """Write the files."""
        folder = self.query_one("#export-folder", Input).value.strip()
        formats = self.chosen_formats()
        if not folder:
            self.notify("Type the folder to write into", severity="warning")
            return
        if not formats:
            self.notify("Tick at least one format", severity="warning")
            return
        self.dismiss(ExportChoice(Path(folder).expanduser(), formats))

    def action_cancel(self) -> None:
        """Close without writing anything."""
        self.dismiss(None)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_export()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "export":
            self.action_export()
        else:
            self.action_cancel()


class PersonaEditor(ModalScreen["Persona | None"]):
    """Edit a persona, or write a new one (it is saved in the user's persona folder)."""

    CSS_PATH = "dialogs.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", key_display="Esc"),
        Binding("ctrl+s", "save", "Save persona"),
    ]

    def __init__(self, persona: Persona | None) -> None:
        super().__init__()
        self.persona = persona

    def compose(self) -> ComposeResult:
        p = self.persona
        with Vertical(classes="dialog persona-dialog"):
            yield Label("Edit persona" if p else "New persona", classes="dialog-title")
            yield Label("Name (lowercase letters, digits, - and _; saving under a new name makes a copy)",
                        classes="dialog-text")
            yield Input(p.name if p else "", placeholder="e.g. strict-teacher", id="persona-name")
            yield Label("Description", classes="dialog-text")
            yield Input(p.description if p else "", placeholder="one line: whose viewpoint this is",
                        id="persona-description")
            yield Label("Text (inserted in the prompt's {persona} slot, literally)", classes="dialog-text")
            yield TextArea(p.text if p else "", id="persona-text", soft_wrap=True)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Save (ctrl+s)", id="save", variant="primary")
                yield Button("Cancel (Esc)", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#persona-text" if self.persona else "#persona-name").focus()

    def action_save(self) -> None:
        """Save the persona to your persona folder."""
        name = self.query_one("#persona-name", Input).value.strip()
        try:
            check_persona_name(name)
        except TemplateError as exc:
            self.notify(str(exc), severity="warning")
            return
        self.dismiss(Persona(name=name, description=self.query_one("#persona-description", Input).value.strip(),
                             text=self.query_one("#persona-text", TextArea).text.strip()))

    def action_cancel(self) -> None:
        """Close without saving."""
        self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "save":
            self.action_save()
        else:
            self.action_cancel()
