"""Rich rendering of core's plain tables for the terminal, fitted to its width (core.table_fit)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from rich import box as boxes
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from dialjudge.core.api.formatting import (
    SYMBOLS,
    WideRow,
    WideTable,
    interval_text,
    sparkline,
    verdict_line,
)
from dialjudge.core.api.reports import discernment
from dialjudge.core.api.types import PairedComparison
from dialjudge.core.errors import DialjudgeError
from dialjudge.core.format import interval_text as range_text
from dialjudge.core.format import number_text
from dialjudge.core.model import Dataset
from dialjudge.core.table_fit import ColumnKind, FitColumn, TableLayout, distinct_abbreviations, fit_table

#: Piped or redirected output with no width given (COLUMNS, --width): tables are kept whole.
PIPED_WIDTH = 240
#: The global --width option (cli/main.py); None: COLUMNS, else the terminal's.
_width_option: int | None = None


def set_width(width: int | None) -> None:
    """The width every console of this process renders at (the global --width option); None: the default."""
    global _width_option
    if width is not None and width < 20:
        raise DialjudgeError(f"--width {width}: give 20 columns or more")
    _width_option = width


def output_width(stream: Any) -> int | None:
    """--width, else COLUMNS, else the terminal's width (None: Rich asks the terminal), else PIPED_WIDTH."""
    if _width_option is not None:
        return _width_option
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    return None if stream.isatty() else PIPED_WIDTH


def console(stderr: bool = False) -> Console:
    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr, highlight=False, soft_wrap=False, width=output_width(stream))


class FittedTable:
    """A table laid out for the width it is printed in: numbers whole, text wrapped, names shortened
    apart, low-priority columns dropped (said once, under it), else split into stacked parts."""

    def __init__(self, title: str, columns: Sequence[FitColumn], rows: Sequence[Sequence[Text]], *,
                 column_styles: Sequence[str | None] = (), row_styles: Sequence[str | None] = (),
                 show_header: bool = True, show_lines: bool = False, boxed: bool = True) -> None:
        self.title = title
        self.columns = list(columns)
        self.rows = [list(row) + [Text("")] * (len(self.columns) - len(row)) for row in rows]
        self.column_styles = list(column_styles) + [None] * (len(self.columns) - len(column_styles))
        self.row_styles = list(row_styles) + [None] * (len(self.rows) - len(row_styles))
        self.show_header = show_header
        self.show_lines = show_lines
        self.box = boxes.HEAVY_HEAD if boxed else None

    def overhead(self, n_columns: int) -> int:
        """Borders and padding of ``n_columns`` beside their contents (Rich: padding 1 a side but not
        at the table's edges; with a box, its two edges and a rule between columns)."""
        padding = max(0, 2 * n_columns - 2)
        return padding + (2 + n_columns - 1 if self.box is not None else 0)

    def layout(self, width: int) -> TableLayout:
        return fit_table(self.columns, [[cell.plain for cell in row] for row in self.rows], width, self.overhead)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        layout = self.layout(options.max_width)
        for k, part in enumerate(layout.parts):
            title = self.title if k == 0 else f"{self.title} (continued)" if self.title else ""
            yield self._part(title, part.columns, part.widths)
        if layout.dropped:
            yield Text(f"not shown at {options.max_width} columns: {', '.join(layout.dropped)} "
                       "(a wider terminal, COLUMNS or --width N shows them)", style="dim")

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(1, options.max_width)

    def _part(self, title: str, shown: Sequence[int], widths: Sequence[int]) -> Table:
        out = Table(title=Text(title) if title else None, title_justify="left", pad_edge=False, box=self.box,
                    show_header=self.show_header, show_lines=self.show_lines)
        short: dict[int, dict[str, str]] = {}
        for i, width in zip(shown, widths):
            column = self.columns[i]
            out.add_column(Text(column.header), justify="right" if column.kind is ColumnKind.NUMBER else "left",
                           width=width, overflow="fold", style=self.column_styles[i])
            if column.kind is ColumnKind.NAME:
                short[i] = distinct_abbreviations([row[i].plain for row in self.rows], width)
        for row, style in zip(self.rows, self.row_styles):
            cells = []
            for i in shown:
                cell = row[i]
                if i in short and short[i][cell.plain] != cell.plain:
                    cell = Text(short[i][cell.plain], style=cell.style)
                cells.append(cell)
            out.add_row(*cells, style=style)
        return out


def wide_table(table: WideTable, *, with_ci: bool = True) -> FittedTable:
    """Coefficients with their CI on a second line, so many qualities still fit a terminal."""
    # Titles and names are data (a subset spec such as [tag:kpi:x]), never rich markup: cells are Text.
    header = table.header()
    columns = [FitColumn(header[0], ColumnKind.NAME, pinned=True),
               *(FitColumn(name, ColumnKind.NUMBER) for name in header[1:])]
    rows, styles = [], []
    for row in table.rows:
        cells = [Text(row.evaluator)]
        for q in table.qualities:
            for c in table.coefficients:
                cell = row.cells.get((q, c))
                if cell is None:
                    cells.append(Text("–"))
                    continue
                value = cell.text(with_ci=False)
                # [.41,.58] as `datasets stats` writes it: "0.41…0.58" read like a number cut short.
                ci = range_text(cell.low, cell.high)
                text = Text(value)
                if with_ci and ci:
                    text.append("\n" + ci, style="dim")
                cells.append(text)
        cells.extend(Text(v) for v in _counts(row))
        rows.append(cells)
        styles.append("italic" if row.is_ceiling else None)
    return FittedTable(table.title, columns, rows, column_styles=["bold"], row_styles=styles,
                       show_lines=with_ci)


def _counts(row: WideRow) -> tuple[str, str, str]:
    def span(values: Iterable[int]) -> str:
        vals = sorted(set(values))
        return "–" if not vals else str(vals[0]) if len(vals) == 1 else f"{vals[0]}–{vals[-1]}"

    return span(row.n.values()), span(row.excluded.values()), span(row.failed.values())


def plain_table(title: str, columns: Sequence[str], rows: Iterable[Sequence[Any]],
                right: Sequence[str] = (), *, drop: Sequence[str] = (), names: Sequence[str] = (),
                numbers: Sequence[str] = ()) -> FittedTable:
    """A table of plain values fitted to the width it is printed in. ``right``: numeric columns,
    right-aligned; ``numbers``: other columns whose cells must stay whole (a date, a hash, an interval);
    ``names``: columns of names, on one line, shortened apart; ``drop``: the columns that may be left
    out when the table does not fit, the first given first; every other column wraps its text."""
    fit_columns = [FitColumn(name, _kind(name, right, names, numbers),
                             drop_rank=drop.index(name) if name in drop else None, pinned=i == 0)
                   for i, name in enumerate(columns)]
    cells = [[Text("–" if v is None else str(v)) for v in row] for row in rows]
    return FittedTable(title, fit_columns, cells)


def _kind(name: str, right: Sequence[str], names: Sequence[str], numbers: Sequence[str]) -> ColumnKind:
    if name in right or name in numbers:
        return ColumnKind.NUMBER
    return ColumnKind.NAME if name in names else ColumnKind.TEXT


def key_values(title: str, items: Mapping[str, Any]) -> FittedTable:
    rows = [[Text(str(k)), Text(str(v))] for k, v in items.items()]
    return FittedTable(title, [FitColumn("key", ColumnKind.TEXT, pinned=True), FitColumn("value")], rows,
                       column_styles=["bold"], show_header=False, boxed=False)


def print_notes(con: Console, notes: Iterable[str]) -> None:
    for note in notes:
        con.print(f"[dim]• {escape(note)}[/dim]")


def write_output(path: Path, text: str) -> None:
    """Write an --output file; a bad path is the user's error, not a traceback."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise DialjudgeError(f"{path}: cannot write: {exc.strerror}") from None


def print_discernment(con: Console, dataset: Dataset, subset: str,
                      scores: Mapping[str, Mapping[str, float | None]]) -> None:
    rows = []
    for row in discernment(dataset, subset, scores):
        rows.append((row.evaluator, row.comparison, f"{row.n_positive}/{row.n_adversarial}", _f(row.auc),
                     _f(row.mean_positive), _f(row.mean_adversarial), _f(row.gap, signed=True),
                     "–" if row.share_at_or_above is None else f"{100 * row.share_at_or_above:.0f}%",
                     sparkline(row.hist_positive), sparkline(row.hist_adversarial)))
    con.print(plain_table(
        f"Discernment — {dataset.name}: originals vs adversarial candidates",
        ["evaluator", "compares", "n +/adv", "ROC-AUC", "mean +", "mean adv", "gap", "adv ≥ orig",
         "scores + (0→1)", "scores adv (0→1)"], rows,
        right=("n +/adv", "ROC-AUC", "mean +", "mean adv", "gap", "adv ≥ orig"),
        numbers=("scores + (0→1)", "scores adv (0→1)"), names=("evaluator",)))
    con.print("[dim]ROC-AUC: P(original scored above adversarial), 0.5 = chance; adv ≥ orig: adversarial "
              "candidates scored at or above their own original; adversarial-only: the metric could not score the "
              "original (it is the reference).[/dim]")


def _f(x: Any, signed: bool = False) -> str:
    return number_text(x, signed=signed)


def print_paired(con: Console, comparisons: Sequence[PairedComparison], coefficient: str = "spearman") -> None:
    """Paired comparisons (core.stats.paired): a Δ table with CIs and p-values, then the verdict lines."""
    rows = []
    for c in comparisons:
        for method, d in c.deltas.items():
            williams = c.williams if method == "pearson" else None
            interval = interval_text(d)
            rows.append((c.quality, c.subset, f"Δ{SYMBOLS[method]}", number_text(d.a), number_text(d.b),
                         number_text(d.delta, signed=True), interval, number_text(d.p_value),
                         "–" if williams is None else f"t={williams.t:.2f}, p={williams.p_value:.3f}",
                         f"{c.n_items}/{c.n_groups}", c.n_excluded))
    con.print(plain_table(
        f"Paired comparison (CI: {comparisons[0].n_boot} bootstrap resamples of contexts, same resamples for both; "
        "p: randomization test, A and B swapped within contexts)",
        ["quality", "subset", "Δ", "A", "B", "B − A", "95% CI", "p (randomization)", "Williams", "items/contexts",
         "left out"],
        rows, right=("A", "B", "B − A", "p (randomization)", "items/contexts", "left out"),
        numbers=("95% CI", "Williams")))
    for c in comparisons:
        con.print(escape(verdict_line(c, coefficient)))
