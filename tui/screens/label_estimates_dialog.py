"""Can this run's judge replace an annotator, and what do 50 labels buy with and without it?

Opened from the Scores screen for the newest stored run shown there. It shows what
``dialjudge runs alt-test N`` and ``dialjudge runs estimate N --labelled 50 --seed 0``
print, computed on a worker (:class:`~..controllers.label_estimates.LabelEstimatesController`).
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from ..controllers.label_estimates import DEFAULT_LABELLED, DEFAULT_SEED, LabelEstimatesComputed
from ..host import dialjudge_app
from ..widgets.app_footer import AppFooter
from ..widgets.label_estimates_view import alt_test_renderable, estimate_renderable


class LabelEstimatesDialog(ModalScreen[None]):
    """The alternative annotator test and the few-label estimates of one stored run; scrolls at 80×24."""

    CSS_PATH = "label_estimates_dialog.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", key_display="Esc"),
    ]

    def __init__(self, run_id: int) -> None:
        super().__init__()
        self.run_id = run_id
        #: The last answer shown (tests and the snapshot read it).
        self.result: LabelEstimatesComputed | None = None

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(f"Run {self.run_id}: can the judge replace an annotator? What do a few labels buy?",
                        classes="dialog-title")
            with VerticalScroll(id="label-estimates-body"):
                yield Static(f"Testing run {self.run_id} (the alternative annotator test, Calderon et al. 2025) "
                             f"and estimating from {DEFAULT_LABELLED} labels drawn with seed {DEFAULT_SEED}…",
                             id="label-estimates-status", markup=False)
                yield Static(id="alt-test", markup=False)
                yield Static(id="estimates", markup=False)
        yield AppFooter()

    def on_mount(self) -> None:
        dialjudge_app(self).label_estimates.compute(self.run_id, self)
        self.query_one("#label-estimates-body").focus()

    def on_label_estimates_computed(self, message: LabelEstimatesComputed) -> None:
        message.stop()
        if message.run_id != self.run_id:
            return
        self.result = message
        self.query_one("#label-estimates-status", Static).update(
            f"As `dialjudge runs alt-test {self.run_id}` and `dialjudge runs estimate {self.run_id} "
            f"--labelled {DEFAULT_LABELLED} --seed {DEFAULT_SEED}` print them:")
        self.query_one("#alt-test", Static).update(alt_test_renderable(message.alt_tests, message.alt_test_problem))
        self.query_one("#estimates", Static).update(estimate_renderable(message.estimates, message.estimate_problem))

    def action_close(self) -> None:
        """Back to the Scores screen."""
        self.dismiss(None)
