"""The Runs screen's question before importing judge scores made elsewhere: the file, its scale, the judge's
name and whether any problem refuses the import. The scores are matched to the open dataset."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Checkbox, Input, Label, Static

from dialjudge.core.api import ImportRequest
from dialjudge.core.api.imports import IMPORT_FORMATS

from ..widgets.path_suggester import PathSuggester
from ..widgets.toggles import StateCheckbox
from .form_dialog import FormDialog


class ImportDialog(FormDialog[ImportRequest | None]):
    """Asks for a file of judge scores (CSV/JSONL, a dialjudge export, Inspect AI, promptfoo) to store as a run."""

    CSS_PATH = ["dialogs.tcss", "import_dialog.tcss"]
    AUTO_FOCUS = "#import-file"
    CONFIRM_BUTTON = "import"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", key_display="Esc", tooltip="Close without importing"),
        Binding("ctrl+s", "import_file", "Import", tooltip="Read the file and store its scores as a run"),
    ]

    def __init__(self, dataset: str) -> None:
        super().__init__()
        self.dataset = dataset

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(f"Import judge scores for {self.dataset}", classes="dialog-title")
            yield Static("Formats: " + ", ".join(IMPORT_FORMATS) + ". Rows are matched to the open dataset's "
                         "items; what does not match is counted and named.", classes="dialog-text")
            with Horizontal(classes="field-row"):
                yield Label("File", classes="field-label")
                yield Input(placeholder="path (→ completes)", id="import-file", suggester=PathSuggester(),
                            compact=True)
            with Horizontal(classes="field-row"):
                yield Label("Scale", classes="field-label")
                yield Input(placeholder="the scores' own scale, e.g. 1-10 (blank: the template's 1-5)",
                            id="import-scale", compact=True)
            with Horizontal(classes="field-row"):
                yield Label("Judge", classes="field-label")
                yield Input(placeholder="the judge's name (a file with one judge)", id="import-judge", compact=True)
            yield StateCheckbox("Refuse the import on any problem (strict)", id="import-strict", compact=True)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Import (ctrl+s)", id="import", variant="primary")
                yield Button("Cancel (Esc)", id="cancel")

    def request(self) -> ImportRequest | None:
        """What the fields ask for; None while no file is named."""
        path = self.query_one("#import-file", Input).value.strip()
        if not path:
            return None
        scale = self.query_one("#import-scale", Input).value.strip() or None
        judge = self.query_one("#import-judge", Input).value.strip() or None
        return ImportRequest(file=Path(path).expanduser(), dataset=self.dataset, scale=scale, judge_name=judge,
                             strict=self.query_one("#import-strict", Checkbox).value)

    def submit(self) -> None:
        self.action_import_file()

    def action_import_file(self) -> None:
        """Import the named file."""
        request = self.request()
        if request is None:
            self.notify("Name the file to import", severity="warning")
            return
        self.dismiss(request)
