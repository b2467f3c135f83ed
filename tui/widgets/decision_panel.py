"""The Scores screen's decision area: two picked evaluators compared, then the judges read as labels.

From top to bottom: the paired verdict of the two columns picked with "c"
(:class:`PairedVerdict`, with Williams's test for Δr); with two or more judge
columns, their inter-judge agreement, to read before the pooled column; each
judge's confusion matrix with plain and weighted κ (binary and ordinal
qualities); the reliability diagram of judges that answered with probabilities
(binary qualities). Hidden while it has nothing to show.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from .confusion_matrix import ConfusionMatrix, render_inter_judge
from .paired_verdict import PairedVerdict
from .reliability_plot import ReliabilityPlot

if TYPE_CHECKING:
    from dialjudge.core.api.types import (
        JudgeDiagnostics,
        PairedComparison,
    )


class DecisionPanel(VerticalScroll):
    """A scrolling view of one paired comparison and one set of judge diagnostics."""

    DEFAULT_CSS = """
    DecisionPanel { height: auto; max-height: 50%; padding: 0 1; border-top: solid $primary-darken-2; }
    DecisionPanel > .decision-part { margin-bottom: 1; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.display = False  # until there is something to show

    def compose(self) -> ComposeResult:
        yield PairedVerdict(id="paired-verdict", classes="decision-part")
        yield Static(id="inter-judge", classes="decision-part")
        yield ConfusionMatrix(id="confusion-matrix", classes="decision-part")
        yield ReliabilityPlot(id="reliability-plot", classes="decision-part")

    def show(self, comparison: PairedComparison | None, diagnostics: JudgeDiagnostics | None) -> None:
        verdict = self.query_one(PairedVerdict)
        verdict.display = comparison is not None
        if comparison is not None:
            verdict.show([comparison], williams=True)
        inter = self.query_one("#inter-judge", Static)
        matrix = diagnostics.inter_judge if diagnostics is not None else None
        inter.display = matrix is not None
        if matrix is not None:
            inter.update(render_inter_judge(matrix))
        confusion = self.query_one(ConfusionMatrix)
        confusion.display = bool(diagnostics and diagnostics.confusion)
        if diagnostics is not None and diagnostics.confusion:
            confusion.show(diagnostics.confusion, notes=diagnostics.notes)
        plot = self.query_one(ReliabilityPlot)
        plot.display = bool(diagnostics and diagnostics.calibration)
        if diagnostics is not None and diagnostics.calibration:
            plot.show_many([(view.calibration, f"Reliability of {view.evaluator}: p({_label(view.positive)})")
                            for view in diagnostics.calibration])
        self.display = comparison is not None or (diagnostics is not None and not diagnostics.empty)


def _label(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)
