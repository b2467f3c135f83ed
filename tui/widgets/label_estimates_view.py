"""The alternative annotator test and the few-label estimates as Rich tables and sentences.

The rows, titles and sentences are core's (:mod:`dialjudge.core.api.labels_estimates`),
the ones ``dialjudge runs alt-test`` and ``runs estimate`` print, so the app and the
CLI show the same numbers in the same order.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from dialjudge.core.api import (
    AltTestReport,
    EstimateReport,
    LabelPlan,
)
from dialjudge.core.api.labels_estimates import (
    ALT_TEST_COLUMNS,
    ESTIMATE_COLUMNS,
    alt_test_lines,
    alt_test_rows,
    alt_test_title,
    estimate_lines,
    estimate_rows,
    estimate_title,
)


def _table(title: str, columns: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[str]) -> Table:
    # Numbers never get cut (a cut "0.8…" would read as another number) and headers wrap by whole words:
    # each column is at least as wide as its widest cell and its longest header word. No box and one
    # space between columns leave room for every column at 80 columns.
    table = Table(title=title, title_justify="left", expand=False, box=None, pad_edge=False,
                  padding=(0, 1, 0, 0), header_style="bold underline")
    for k, column in enumerate(columns):
        longest_word = max(len(word) for word in column.split())
        widest = max((len(row[k]) for row in rows), default=1)
        table.add_column(column, justify="right" if column in right else "left",
                         min_width=max(widest if column in right else min(widest, longest_word), longest_word))
    for row in rows:
        # Text, not markup: annotator names and judge names come from data.
        table.add_row(*(Text(cell) for cell in row))
    return table


def _notes(lines: Sequence[str]) -> list[RenderableType]:
    return [Text(f"• {line}", style="dim") for line in lines]


def alt_test_renderable(reports: Sequence[AltTestReport], problem: str | None) -> RenderableType:
    """Each judge's per-annotator rows, then its winning rate, verdict, margin and the human ceiling."""
    if problem is not None:
        return Text(f"Alternative annotator test: {problem}", style="italic")
    parts: list[RenderableType] = []
    for report in reports:
        parts.append(_table(alt_test_title(report), ALT_TEST_COLUMNS, alt_test_rows(report),
                            ALT_TEST_COLUMNS[1:-1]))
        parts.extend(_notes(alt_test_lines(report)))
    return Group(*parts)


def estimate_renderable(reports: Sequence[EstimateReport], problem: str | None) -> RenderableType:
    """Each judge's labels-only and judge-assisted estimates (and Rogan–Gladen for pass/fail), then notes."""
    if problem is not None:
        return Text(f"Estimates from a few labels: {problem}", style="italic")
    parts: list[RenderableType] = []
    for report in reports:
        parts.append(_table(estimate_title(report), ESTIMATE_COLUMNS, estimate_rows(report),
                            ESTIMATE_COLUMNS[1:]))
        parts.extend(_notes(estimate_lines(report)))
    return Group(*parts)


def review_estimate_text(plan: LabelPlan, report: EstimateReport | None, problem: str | None) -> Text:
    """The Review screen's line in the label-next order: what is left to rate, then each estimate with its CI
    (the rows ``runs estimate N --reviews --active-budget B --seed S`` prints)."""
    text = Text(f"Label next (judge {plan.judge}, budget {plan.budget}, seed {plan.seed}): ", style="bold")
    if report is None:
        text.append(f"{len(plan.to_label())} items proposed; give own ratings (e) — {problem}", style="dim")
        return text
    for k, row in enumerate(estimate_rows(report)):
        name, value, interval = row[0], row[1], row[2]
        text.append(" · " if k else "")
        text.append(f"{name} {value} {interval}")
    pending = [line for line in estimate_lines(report) if line.startswith("active: ") and "no label yet" in line]
    if pending:
        text.append(f"\n{pending[0]}", style="dim")
    return text
