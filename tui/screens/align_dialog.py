"""What `dialjudge align` found, shown from Review (key g): the winner beside the starting judge on
held-out contexts no correction touched, the paired verdict with its CI, and the overfitting gap. The
lines and the table are the CLI's (core.api.align), so both front ends print the same numbers."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from dialjudge.core.api.align import COLUMNS, AlignReport
from dialjudge.core.format import number_text


def report_text(report: AlignReport) -> str:
    """The report's lines, then one line per held-out row (variant, search split, held-out [CI], gap)."""
    lines = [f"• {line}" for line in report.summary_lines()]
    lines.append("")
    lines.append("  ".join(COLUMNS))
    for r in report.records():
        lines.append("  ".join(number_text(r[k], signed=k == "gap") if isinstance(r[k], float) or r[k] is None
                               else str(r[k]) for k in COLUMNS))
    return "\n".join(lines)


class AlignResultDialog(ModalScreen[None]):
    """The alignment's report; Esc (or Enter) closes it."""

    CSS_PATH = "dialogs.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,enter", "close", "Close", key_display="Esc"),
    ]

    def __init__(self, report: AlignReport) -> None:
        super().__init__()
        self.report = report

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog align-dialog"):
            yield Label(f"Run {self.report.run_id} aligned to your corrections: {self.report.verdict}",
                        classes="dialog-title", markup=False)
            yield Static(report_text(self.report), classes="dialog-text", id="align-text", markup=False)

    def action_close(self) -> None:
        """Close the report."""
        self.dismiss(None)
