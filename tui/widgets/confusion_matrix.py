"""Judge label × human label, with Cohen's κ beside its linear and quadratic weighted forms.

Renders :class:`~dialjudge.core.judge_diagnostics.ConfusionView` (one per judge
column of a binary or ordinal quality; rows the judge's label, columns the
humans'), and the inter-judge matrix to read before pooling the judges. The
diagonal (agreement) is bold; the further a cell is from it, the worse a miss on
an ordinal scale, which is what the weighted κ counts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import Static

from dialjudge.core.format import number_text

from .text_table import Column, joined, table_lines

if TYPE_CHECKING:
    from dialjudge.core.api.types import (
        ConfusionView,
        InterJudgeMatrix,
    )


def label_text(value: object) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def kappa_line(view: ConfusionView) -> str:
    agreement = "–" if math.isnan(view.agreement) else f"{100 * view.agreement:.1f}%"
    left_out = f" ({view.excluded} left out)" if view.excluded else ""
    return (f"n {view.n}{left_out} · agreement {agreement} · κ {number_text(view.kappa)} · "
            f"linear κ {number_text(view.kappa_linear)} · quadratic κ {number_text(view.kappa_quadratic)}")


def confusion_lines(view: ConfusionView) -> list[Text]:
    """The matrix as lines (a :mod:`.text_table`: it redraws at every refresh of a run that streams in)."""
    labels = [label_text(v) for v in view.matrix.labels]
    # The titles are lines of their own: a table's title wraps at the (narrow) table's width.
    title = Text(f"{view.evaluator} on {view.quality}: rows judge, columns human", style="bold")
    columns = [Column("judge \\ human"), *(Column(label, justify="right") for label in labels)]
    rows: list[list[Text | str]] = [
        [label, *(Text(str(count), style="bold" if i == j else ("dim" if not count else ""))
                  for j, count in enumerate(row))]
        for i, (label, row) in enumerate(zip(labels, view.matrix.counts, strict=True))]
    return [title, *table_lines(columns, rows), Text(kappa_line(view))]


def render_inter_judge(matrix: InterJudgeMatrix) -> Text:
    measure = "Spearman ρ" if matrix.measure == "spearman" else f"Cohen's {matrix.measure.replace('kappa', 'κ')}"
    title = Text(f"Inter-judge agreement ({measure} on items both scored): before pooling the judges", style="bold")
    columns = [Column("judge × judge"), *(Column(name, justify="right") for name in matrix.judges)]
    rows: list[list[Text | str]] = [
        [name, *(f"{number_text(matrix.values[i][j])} (n {matrix.n[i][j]})" if i != j else "·"
                 for j in range(len(matrix.judges)))]
        for i, name in enumerate(matrix.judges)]
    return joined([title, *table_lines(columns, rows)])


class ConfusionMatrix(Static):
    """One or more judges' confusion matrices; ``show`` replaces them."""

    DEFAULT_CSS = "ConfusionMatrix { height: auto; }"
    views: Sequence[ConfusionView] = ()

    #: What the height depends on: each view's labels, and the notes (None: nothing shown yet).
    _shape: tuple[object, ...] | None = None

    def show(self, views: Sequence[ConfusionView], *, notes: Sequence[str] = ()) -> None:
        self.views = list(views)
        lines: list[Text] = []
        for view in self.views:
            lines += [*confusion_lines(view), Text("")]
        lines += [Text(note, style="dim") for note in notes]
        # While a run streams in, the counts change at every refresh but the matrices keep their lines; a
        # layout pass re-measures the whole screen (30-90 ms at 100,000 items), so only a new shape asks for one.
        shape = (tuple((view.evaluator, tuple(view.matrix.labels)) for view in self.views), tuple(notes))
        self.update(joined(lines), layout=shape != self._shape)
        self._shape = shape
