"""How well each evaluator agrees with the humans: Pearson, Spearman, Kendall with 95% CIs.

One row per metric and judge (and the judges' pool), and the human-human
ceiling. A row comes from the last agreement table (with bootstrap CIs) while
that table is current for its evaluator; a judge whose scores changed since
shows its running correlations instead (point estimates, marked live) until
the next table arrives.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from ..format import interval_text, number_text
from .text_table import Column, joined, table_lines

if TYPE_CHECKING:
    from dialjudge.core.api.types import (
        AgreementCell,
        HumanCeiling,
        Snapshot,
    )

    from ..scores_view_model import Workspace
    from ..state import StatsState

METHODS = ("pearson", "spearman", "kendall")
SYMBOLS = {"pearson": "r", "spearman": "ρ", "kendall": "τ"}
CEILING = "human ceiling"
NAN = float("nan")


@dataclass(frozen=True)
class PanelRow:
    evaluator: str
    kind: str  # metric | judge | pool | ceiling
    pearson: float
    spearman: float
    kendall: float
    #: method -> (low, high); empty while the row is live or has no CIs.
    intervals: Mapping[str, tuple[float, float]]
    n: int | None
    failures: int | None
    #: True when the values are running correlations of scores still arriving.
    live: bool = False
    #: Why the coefficients are undefined, or a note.
    reason: str | None = None
    pending: bool = False

    def value(self, method: str) -> float:
        return getattr(self, method)


def row_from_cell(cell: AgreementCell, kind: str) -> PanelRow:
    result = cell.result
    intervals = {}
    for method in METHODS:
        c = result.coefficient(method)
        if not (math.isnan(c.ci_low) or math.isnan(c.ci_high)):
            intervals[method] = (c.ci_low, c.ci_high)
    return PanelRow(cell.evaluator, kind, result.pearson.value, result.spearman.value, result.kendall.value,
                    intervals, result.n, cell.exclusions.failed, reason=result.reason)


def row_from_snapshot(snapshot: Snapshot, kind: str) -> PanelRow:
    spearman = NAN if snapshot.spearman is None else snapshot.spearman
    kendall = NAN if snapshot.kendall is None else snapshot.kendall
    return PanelRow(snapshot.evaluator, kind, snapshot.pearson, spearman, kendall, {}, snapshot.n,
                    snapshot.failures, live=True, reason=snapshot.reason)


def row_from_ceiling(ceiling: HumanCeiling) -> PanelRow:
    note = None
    if ceiling.alpha is not None and not math.isnan(ceiling.alpha):
        note = f"α={ceiling.alpha:.2f} {ceiling.alpha_level}"
    elif ceiling.reasons:
        note = ceiling.reasons[0]
    if ceiling.ci_reason:
        note = ceiling.ci_reason if note is None else f"{note}; {ceiling.ci_reason}"
    intervals = {m: ceiling.ci(m) for m in METHODS if not math.isnan(ceiling.ci(m)[0])}
    return PanelRow(CEILING, "ceiling", ceiling.pearson, ceiling.spearman, ceiling.kendall, intervals,
                    ceiling.n_items, None, reason=note)


def pending_row(evaluator: str, kind: str) -> PanelRow:
    return PanelRow(evaluator, kind, NAN, NAN, NAN, {}, None, None, pending=True)


def panel_rows(workspace: Workspace, stats: StatsState | None, *, ask: bool = True) -> list[PanelRow]:
    """The panel's rows for the workspace's current view: computed cells where they are
    current, running correlations for judges whose scores changed since (the last computed on the
    running keeper's thread; ``ask``: newer ones are asked for where scores changed since)."""
    quality = workspace.quality
    if quality is None:
        return []
    if stats is not None and (stats.selection_version != workspace.selection_version or stats.quality != quality):
        stats = None
    live = workspace.live_snapshots(ask=ask)
    rows = []
    for name in workspace.evaluators:
        kind = workspace.kind(name).value
        if stats is not None and stats.is_current(name, workspace.version(name)):
            rows.append(row_from_cell(stats.cells[name], kind))
        elif name in live:
            rows.append(row_from_snapshot(live[name], kind))
        else:
            rows.append(pending_row(name, kind))
    if stats is not None and stats.ceiling is not None:
        rows.append(row_from_ceiling(stats.ceiling))
    else:
        rows.append(pending_row(CEILING, "ceiling"))
    return rows


class CorrelationPanel(VerticalScroll):
    """A scrolling table of PanelRows under a title line."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._rows: dict[str, PanelRow] = {}
        self._title = ""
        self._note = ""
        self._shape: tuple[object, ...] | None = None

    def compose(self):
        yield Static(id="correlation-body")

    @property
    def rows(self) -> dict[str, PanelRow]:
        """The rows on show, by evaluator (the ceiling under 'human ceiling')."""
        return dict(self._rows)

    def show(self, rows: list[PanelRow], *, title: str, note: str = "") -> None:
        shape = _shape(rows, title, note)
        if rows == list(self._rows.values()) and shape == self._shape:
            return  # nothing changed: no render, no layout
        # While a run streams in, the numbers change every refresh but the table keeps its
        # lines; a layout pass re-measures every auto-height widget on the screen (hundreds of
        # Rich tables), so it is only asked for when the panel's height may change.
        same_height = shape == self._shape
        self._rows = {row.evaluator: row for row in rows}
        self._title = title
        self._note = note
        self._shape = shape
        self.query_one("#correlation-body", Static).update(self._render_rows(rows), layout=not same_height)

    def _render_rows(self, rows: list[PanelRow]) -> Text:
        columns = [Column("evaluator", min_width=13, max_width=18),
                   *(Column(SYMBOLS[method], justify="right", min_width=11) for method in METHODS),
                   Column("n", justify="right"), Column("fail", justify="right")]
        cells: list[list[Text | str]] = []
        for row in rows:
            name = Text(row.evaluator, style=_NAME_STYLES.get(row.kind, ""))
            if row.live:
                name.append(" ●", style="bold green")
            values = [Text("…", style="dim") if row.pending else Text(number_text(row.value(m)))
                      for m in METHODS]
            n = "" if row.n is None else str(row.n)
            failures = "" if row.failures is None else str(row.failures)
            fail_text = Text(failures, style="red" if row.failures else "dim")
            cells.append([name, *values, Text(n, style="dim"), fail_text])
            detail = [Text(interval_text(*row.intervals[m]) if m in row.intervals else "", style="dim")
                      for m in METHODS]
            note = Text("  " + short_reason(row.reason), style="dim italic") if row.reason else Text("")
            if note.plain or any(d.plain for d in detail):
                cells.append([note, *detail, "", ""])
        lines = [Text("Agreement with humans", style="bold"), Text(self._title, style="dim"),
                 *table_lines(columns, cells)]
        if self._note:
            lines.append(Text(self._note, style="dim"))
        return joined(lines)


def _shape(rows: list[PanelRow], title: str, note: str) -> tuple[object, ...]:
    """What decides the panel's height: its text lines, and which rows take a second line."""
    return (title, note, tuple((row.kind == "ceiling", bool(row.reason) or bool(row.intervals)) for row in rows))


def short_reason(reason: str | None) -> str:
    """A few words for the panel; the full reason stays on the row."""
    if not reason:
        return ""
    if reason.startswith("only "):
        return "too few items"
    if "scores are constant" in reason:
        return "constant scores"
    if "labels are constant" in reason:
        return "constant labels"
    return reason if len(reason) <= 16 else reason[:15] + "…"


_NAME_STYLES = {"metric": "", "judge": "bold cyan", "pool": "bold magenta", "ceiling": "italic"}
