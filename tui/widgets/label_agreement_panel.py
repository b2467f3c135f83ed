"""A label quality's comparison: judges against the human majority label, and the human ceiling.

Shows a :class:`~dialjudge.core.judges.post_run.labels.LabelReport` (computed in core, the same
numbers the CLI prints): % agreement, Cohen's κ, Krippendorff's α with the judge as one
more rater and ROC-AUC, each with its bootstrap CI; the ceiling rows; each judge's
confusion matrix with per-label recall and precision; the tie count and the notes.
Hidden until it is given a report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from dialjudge.core.api.formatting import (
    LABEL_HEADER,
    confusion_rows,
    label_summary_rows,
    tie_lines,
)

if TYPE_CHECKING:
    from dialjudge.core.api import LabelReport


class LabelAgreementPanel(VerticalScroll):
    """A scrolling view of one LabelReport."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._report: LabelReport | None = None
        self.display = False  # until show() gets a report, whichever stylesheets the app loads

    def compose(self) -> ComposeResult:
        yield Static(id="label-agreement-body")

    @property
    def report(self) -> LabelReport | None:
        return self._report

    def show(self, report: LabelReport | None) -> None:
        """Display ``report``; None hides the panel (a numeric quality has no label comparison)."""
        if report is self._report and (report is None or self.display):
            return  # the same report is on show already: no render, no layout
        self._report = report
        self.display = report is not None
        if report is not None:
            self.query_one("#label-agreement-body", Static).update(render_report(report))


def render_report(report: LabelReport) -> Group:
    parts: list[RenderableType] = [Text(f"Labels vs the human majority — {report.quality}", style="bold")]
    if report.reason:
        parts.append(Text(f"No comparison: {report.reason}", style="yellow"))
    summary = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold")
    for k, name in enumerate(LABEL_HEADER):
        summary.add_column(name, justify="left" if k == 0 else "right", no_wrap=k == 0)
    rows = label_summary_rows(report)
    for k, row in enumerate(rows):
        if k == len(report.comparisons):
            summary.add_section()
        summary.add_row(*row, style="italic" if k >= len(report.comparisons) else None)
    parts.append(summary)
    for comparison in report.comparisons:
        if not comparison.n:
            continue
        matrix = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold",
                       title=f"{comparison.evaluator}: rows human, columns judge", title_justify="left")
        matrix.add_column("")
        for label in comparison.labels:
            matrix.add_column(f"judge {label}", justify="right")
        matrix.add_column("recall", justify="right")
        for row in confusion_rows(comparison):
            matrix.add_row(*row)
        parts.append(matrix)
    for note in [*report.notes, *tie_lines(report), *report.ceiling.reasons]:
        parts.append(Text(note, style="dim"))
    return Group(*parts)
