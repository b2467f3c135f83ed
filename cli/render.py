"""Rich rendering of core's plain tables for the terminal."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table

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
from dialjudge.core.format import number_text
from dialjudge.core.model import Dataset


def console(stderr: bool = False) -> Console:
    # Piped or redirected output has no width to fit; keep tables whole there.
    stream = sys.stderr if stderr else sys.stdout
    width = None if stream.isatty() else 240
    return Console(stderr=stderr, highlight=False, soft_wrap=False, width=width)


def wide_table(table: WideTable, *, with_ci: bool = True) -> Table:
    """Coefficients with their CI on a second line, so many qualities still fit a terminal."""
    # Titles and names are data (a subset spec such as [tag:kpi:x]), never rich markup.
    out = Table(title=escape(table.title), title_justify="left", show_lines=with_ci, pad_edge=False)
    for i, name in enumerate(table.header()):
        out.add_column(escape(name), justify="left" if i == 0 else "right", no_wrap=i == 0,
                       style="bold" if i == 0 else None, min_width=7 if i else None)
    for row in table.rows:
        cells = [escape(row.evaluator)]
        for q in table.qualities:
            for c in table.coefficients:
                cell = row.cells.get((q, c))
                if cell is None:
                    cells.append("–")
                    continue
                value = cell.text(with_ci=False)
                has_ci = cell.low is not None and cell.high is not None and cell.low == cell.low
                ci = f"{cell.low:.2f}…{cell.high:.2f}" if has_ci else ""
                cells.append(f"{value}\n[dim]{ci}[/dim]" if with_ci and ci else value)
        cells.extend(str(v) for v in _counts(row))
        out.add_row(*cells, style="italic" if row.is_ceiling else None)
    return out


def _counts(row: WideRow) -> tuple[str, str, str]:
    def span(values: Iterable[int]) -> str:
        vals = sorted(set(values))
        return "–" if not vals else str(vals[0]) if len(vals) == 1 else f"{vals[0]}–{vals[-1]}"

    return span(row.n.values()), span(row.excluded.values()), span(row.failed.values())


def plain_table(title: str, columns: Sequence[str], rows: Iterable[Sequence[Any]],
                right: Sequence[str] = ()) -> Table:
    out = Table(title=escape(title), title_justify="left", pad_edge=False)
    for name in columns:
        out.add_column(escape(name), justify="right" if name in right else "left")
    for row in rows:
        out.add_row(*("–" if v is None else escape(str(v)) for v in row))
    return out


def key_values(title: str, items: Mapping[str, Any]) -> Table:
    out = Table(title=escape(title), title_justify="left", show_header=False, pad_edge=False, box=None)
    out.add_column(style="bold")
    out.add_column()
    for k, v in items.items():
        out.add_row(escape(k), escape(str(v)))
    return out


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
        right=("n +/adv", "ROC-AUC", "mean +", "mean adv", "gap", "adv ≥ orig")))
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
        rows, right=("A", "B", "B − A", "p (randomization)", "items/contexts", "left out")))
    for c in comparisons:
        con.print(escape(verdict_line(c, coefficient)))
