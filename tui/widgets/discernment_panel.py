"""Can each evaluator tell a reply from its adversarial perturbation? The discernment table.

The same columns as ``dialjudge adversarial`` reports print (cli/render.py):
which classes are compared, how many scores each has, ROC-AUC, the means and
their gap, the share of adversarial candidates scored at or above their own
original, and both classes' 10-bin histograms on 0-1 as sparklines.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from dialjudge.core.api.formatting import sparkline

from ..format import MISSING, number_text
from .fit import FirstThatFits

if TYPE_CHECKING:
    from dialjudge.core.api.types import DiscernmentRow

TITLE = "Discernment: originals vs adversarial candidates"
LEGEND = ("ROC-AUC: P(original scored above adversarial), 0.5 = chance; adv ≥ orig: adversarial candidates "
          "scored at or above their own original; adversarial-only: the metric could not score the original "
          "(it is the reference).")


def signed_text(value: float | None) -> str:
    return MISSING if value is None or value != value else f"{value:+.3f}"


def share_text(value: float | None) -> str:
    return MISSING if value is None else f"{100 * value:.0f}%"


class DiscernmentPanel(VerticalScroll):
    """A table of DiscernmentRows under a title line, or a one-line message."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._rows: dict[str, DiscernmentRow] = {}

    def compose(self):
        yield Static(id="discernment-body")

    @property
    def rows(self) -> dict[str, DiscernmentRow]:
        """The rows on show, by evaluator."""
        return dict(self._rows)

    def clear(self) -> None:
        self._rows = {}
        self.query_one("#discernment-body", Static).update("")

    def show_message(self, text: str) -> None:
        self._rows = {}
        self.query_one("#discernment-body", Static).update(
            Group(Text(TITLE, style="bold"), Text(text, style="dim")))

    def show(self, rows: list[DiscernmentRow], *, subtitle: str = "") -> None:
        self._rows = {row.evaluator: row for row in rows}
        head = Text(TITLE, style="bold")
        if subtitle:
            head.append(f"  {subtitle}", style="dim")
        # Narrow (80 columns): the sparklines go, then the comparison's name, before any number is cut.
        layouts = (lambda: _table(rows, sparklines=True), lambda: _table(rows, sparklines=False),
                   lambda: Group(Text("compares " + ", ".join(dict.fromkeys(r.comparison for r in rows)), style="dim"),
                                 _table(rows, sparklines=False, comparison=False)))
        self.query_one("#discernment-body", Static).update(
            Group(head, FirstThatFits(*layouts), Text(LEGEND, style="dim")))


def _table(rows: list[DiscernmentRow], *, sparklines: bool, comparison: bool = True) -> Table:
    table = Table(box=None, padding=(0, 1), show_edge=False, expand=False, header_style="bold")
    table.add_column("evaluator", no_wrap=True, max_width=18)
    if comparison:
        table.add_column("compares", no_wrap=True)
    for name in ("n +/adv", "ROC-AUC", "mean +", "mean adv", "gap", "adv ≥ orig"):
        table.add_column(name, justify="right", no_wrap=True)
    if sparklines:
        table.add_column("scores + (0→1)", no_wrap=True)
        table.add_column("scores adv (0→1)", no_wrap=True)
    for row in rows:
        cells: list[RenderableType] = [Text(row.evaluator)]
        if comparison:
            cells.append(Text(row.comparison, style="dim"))
        cells += [f"{row.n_positive}/{row.n_adversarial}", number_text(row.auc), number_text(row.mean_positive),
                  number_text(row.mean_adversarial), signed_text(row.gap), share_text(row.share_at_or_above)]
        if sparklines:
            cells += [Text(sparkline(row.hist_positive), style="green"),
                      Text(sparkline(row.hist_adversarial), style="red")]
        table.add_row(*cells)
    return table
