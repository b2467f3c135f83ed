"""The Runs screen's question before rescoring a run: the new top-K, mode, parser template and answer mapping."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Label, Select, Static

from ..controllers.history import RescoreRequest
from .form_dialog import FormDialog

if TYPE_CHECKING:
    from dialjudge.core.api import RunRecord

#: The probability modes a stored distribution can be scored in again.
MODES = ("logprob", "yesno")


class RescoreDialog(FormDialog[RescoreRequest | None]):
    """Asks what a rescoring changes; every field left blank keeps the run's setting."""

    CSS_PATH = ["dialogs.tcss", "rescore_dialog.tcss"]
    AUTO_FOCUS = "#rescore-top-k"
    CONFIRM_BUTTON = "rescore"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", key_display="Esc", tooltip="Close without rescoring"),
        Binding("ctrl+s", "rescore", "Rescore", tooltip="Score the stored answers again into a new run"),
    ]

    def __init__(self, record: RunRecord) -> None:
        super().__init__()
        self.record = record

    def compose(self) -> ComposeResult:
        config = self.record.run_config
        probability = config.mode.value in MODES
        with Vertical(classes="dialog"):
            yield Label(f"Rescore run {self.record.id} without the model", classes="dialog-title")
            yield Static(f"The stored answers are scored again into a new run that names run {self.record.id} "
                         f"as its source. Now: mode {config.mode.value}, top-K {config.top_k}, template "
                         f"{config.template}. Blank fields keep the run's setting.", classes="dialog-text")
            with Horizontal(classes="field-row"):
                yield Label("Top-K", classes="field-label")
                yield Input(placeholder=f"{config.top_k} (0: expected value over all answers)", type="integer",
                            id="rescore-top-k", compact=True, disabled=not probability)
            with Horizontal(classes="field-row"):
                yield Label("Mode", classes="field-label")
                yield Select[str]([(m, m) for m in MODES], prompt=f"keep {config.mode.value}", allow_blank=True,
                                  id="rescore-mode", compact=True, disabled=not probability)
            with Horizontal(classes="field-row"):
                yield Label("Parser", classes="field-label")
                yield Input(placeholder="a template name or .toml file whose output section reads the answers",
                            id="rescore-template", compact=True)
            with Horizontal(classes="field-row"):
                yield Label("Mapping", classes="field-label")
                yield Input(placeholder="ANSWER=VALUE,… e.g. 1=0,2=0,3=0,4=1,5=1", id="rescore-mapping",
                            compact=True)
            with Horizontal(classes="field-row"):
                yield Label("Name", classes="field-label")
                yield Input(placeholder="the new run's name", id="rescore-name", compact=True)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Rescore (ctrl+s)", id="rescore", variant="primary")
                yield Button("Cancel (Esc)", id="cancel")

    def request(self) -> RescoreRequest:
        """What the fields ask for."""
        top_k = self.query_one("#rescore-top-k", Input).value.strip()
        mode = self.query_one("#rescore-mode", Select).value

        def text(field: str) -> str | None:
            return self.query_one(f"#rescore-{field}", Input).value.strip() or None

        return RescoreRequest(top_k=int(top_k) if top_k else None,
                              mode=mode if isinstance(mode, str) and mode != self.record.run_config.mode.value
                              else None,
                              template=text("template"), mapping=text("mapping"), name=text("name") or "")

    def submit(self) -> None:
        self.action_rescore()

    def action_rescore(self) -> None:
        """Rescore with these settings."""
        request = self.request()
        if request.empty:
            self.notify("Change at least one of top-K, mode, parser or mapping", severity="warning")
            return
        self.dismiss(request)
