"""The questions before a jury or a cascade is computed (Runs screen, keys y and e): the jury's pooling method,
the cascade's target agreement and delta. What they return is the request ``dialjudge jury --method`` and
``dialjudge cascade --target --delta`` make, so the numbers shown are the command's."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Label, Select, Static

from dialjudge.core.api.cascade import CascadeRequest
from dialjudge.core.api.jury import JuryMethod, JuryRequest
from dialjudge.core.errors import ConfigError

from .form_dialog import FormDialog

#: What each pooling method does, in a line (the dialog's help under the choice).
METHOD_HELP = {
    JuryMethod.MAJORITY: "majority vote on the scale's points; a failed judgment does not vote",
    JuryMethod.MEAN: "the mean of the members' scores",
    JuryMethod.LEARNED: "weights learned on the labelled items, cross-fitted by context",
}


class JurySettingsDialog(FormDialog[JuryRequest | None]):
    """Asks how the jury pools its members."""

    CSS_PATH = ["dialogs.tcss", "panel_settings_dialog.tcss"]
    AUTO_FOCUS = "#jury-method"
    CONFIRM_BUTTON = "jury-go"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", key_display="Esc", tooltip="Close without pooling"),
        Binding("ctrl+s", "go", "Pool", tooltip="Pool the judges with this method"),
    ]

    def __init__(self, request: JuryRequest) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(f"A jury of {len(self.request.members)} runs", classes="dialog-title")
            yield Static(f"Runs {', '.join(self.request.members)}: each judge of each run has a seat.",
                         classes="dialog-text")
            with Horizontal(classes="field-row"):
                yield Label("Method", classes="field-label")
                yield Select[str]([(f"{m.value}: {METHOD_HELP[m]}", m.value) for m in JuryMethod],
                                  value=self.request.method.value, allow_blank=False, id="jury-method",
                                  compact=True)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Pool (ctrl+s)", id="jury-go", variant="primary")
                yield Button("Cancel (Esc)", id="cancel")

    def chosen(self) -> JuryRequest:
        method = self.query_one("#jury-method", Select).value
        return dataclasses.replace(self.request, method=JuryMethod(str(method)))

    def submit(self) -> None:
        self.action_go()

    def action_go(self) -> None:
        """Pool the judges with the method chosen."""
        self.dismiss(self.chosen())


class CascadeSettingsDialog(FormDialog[CascadeRequest | None]):
    """Asks for the cascade's guarantee: the target agreement and the chance it fails."""

    CSS_PATH = ["dialogs.tcss", "panel_settings_dialog.tcss"]
    AUTO_FOCUS = "#cascade-target"
    CONFIRM_BUTTON = "cascade-go"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", key_display="Esc", tooltip="Close without computing the cascade"),
        Binding("ctrl+s", "go", "Compute", tooltip="Choose the thresholds for this guarantee"),
    ]

    def __init__(self, request: CascadeRequest) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        r = self.request
        with Vertical(classes="dialog"):
            yield Label(f"Cascade: run {r.cheap} first, then run {r.strong}", classes="dialog-title")
            yield Static("The thresholds keep the agreement with people on the items the cascade decides at or "
                         "above the target, except with probability delta (Trust or Escalate). Blank fields keep "
                         "the defaults.", classes="dialog-text")
            with Horizontal(classes="field-row"):
                yield Label("Target", classes="field-label")
                yield Input(placeholder=f"{r.target:g} (agreement, between 0 and 1)", type="number",
                            id="cascade-target", compact=True)
            with Horizontal(classes="field-row"):
                yield Label("Delta", classes="field-label")
                yield Input(placeholder=f"{r.delta:g} (the chance the guarantee fails)", type="number",
                            id="cascade-delta", compact=True)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Compute (ctrl+s)", id="cascade-go", variant="primary")
                yield Button("Cancel (Esc)", id="cancel")

    def chosen(self) -> CascadeRequest:
        """The request with the numbers typed; a :class:`ConfigError` names a bad one."""
        return dataclasses.replace(self.request, target=self._number("target", self.request.target),
                                   delta=self._number("delta", self.request.delta))

    def _number(self, name: str, default: float) -> float:
        text = self.query_one(f"#cascade-{name}", Input).value.strip()
        if not text:
            return default
        try:
            return float(text)
        except ValueError:
            raise ConfigError(f"the {name} is a number, not {text!r}") from None

    def submit(self) -> None:
        self.action_go()

    def action_go(self) -> None:
        """Compute the cascade with this guarantee."""
        try:
            request = self.chosen()
        except ConfigError as exc:  # out of range: said here, the dialog stays open
            self.notify(str(exc), severity="warning")
            return
        self.dismiss(request)
