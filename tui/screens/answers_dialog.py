"""The Runs screen's question before importing a batch engine's answers: which answer file."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Label, Static

from ..widgets.path_suggester import PathSuggester
from .form_dialog import FormDialog


class AnswersDialog(FormDialog[Path | None]):
    """Asks for an answer file (OpenAI Batch API output or error file, vLLM run-batch output) for a batch run."""

    CSS_PATH = ["dialogs.tcss", "import_dialog.tcss"]
    AUTO_FOCUS = "#answers-file"
    CONFIRM_BUTTON = "import"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", key_display="Esc", tooltip="Close without importing"),
        Binding("ctrl+s", "import_file", "Import", tooltip="Match the file's answers to the run and score them"),
    ]

    def __init__(self, run_id: int, state: str) -> None:
        super().__init__()
        self.run_id = run_id
        self.state = state

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(f"Import batch answers into run {self.run_id} ({self.state})", classes="dialog-title")
            yield Static("An OpenAI Batch API output or error file, or vLLM run-batch's output. Answers are "
                         "matched by custom_id and scored as a live run's; a file imported again is harmless; "
                         "lines that cannot be used are counted and named.", classes="dialog-text")
            with Horizontal(classes="field-row"):
                yield Label("File", classes="field-label")
                yield Input(placeholder="path (→ completes)", id="answers-file", suggester=PathSuggester(),
                            compact=True)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Import (ctrl+s)", id="import", variant="primary")
                yield Button("Cancel (Esc)", id="cancel")

    def submit(self) -> None:
        self.action_import_file()

    def action_import_file(self) -> None:
        """Import the named file."""
        path = self.query_one("#answers-file", Input).value.strip()
        if not path:
            self.notify("Name the answer file to import", severity="warning")
            return
        self.dismiss(Path(path).expanduser())
