"""A run on pre-paired preference data: the agreement table with the humans' votes, per-pair rows and the
pairs worth a look (core.api's rows and notes, the same the command line prints)."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from dialjudge.core.api import PreferenceReport
from dialjudge.core.api.preferences import (
    AGREEMENT_COLUMNS,
    PAIR_COLUMNS,
    PAIR_VOTE_COLUMNS,
    agreement_notes,
    agreement_rows,
    pair_rows,
    pair_vote_rows,
    pairs_to_review,
)
from dialjudge.core.model import Dataset

#: Per-pair rows shown under the table (the rest are counted).
SHOWN_PAIRS = 20


class PreferenceReportView(Static):
    """Hidden until a report of a run on pre-paired items is shown."""

    DEFAULT_CSS = """
    PreferenceReportView { height: auto; display: none; }
    PreferenceReportView.-shown { display: block; }
    """

    def show(self, report: PreferenceReport | None, run_id: int | None = None,
             dataset: Dataset | None = None) -> None:
        """Show ``report``; with the pairs' ``dataset``, each pair's row counts its votes too."""
        self.set_class(report is not None, "-shown")
        if report is None:
            self.update("")
            return
        table = _table(f"Judges vs the humans' preferences{'' if run_id is None else f' — run {run_id}'}",
                       AGREEMENT_COLUMNS, agreement_rows(report))
        parts: list[Table | Text] = [table, Text("\n".join(f"• {n}" for n in agreement_notes(report)), style="dim")]
        for judge in report.judges:
            rows = pair_rows(report, judge) if dataset is None else pair_vote_rows(report, judge, dataset)
            columns = PAIR_COLUMNS if dataset is None else PAIR_VOTE_COLUMNS
            parts.append(_table(f"Pairs — {judge}", columns, rows[:SHOWN_PAIRS]))
            if len(rows) > SHOWN_PAIRS:
                parts.append(Text(f"… and {len(rows) - SHOWN_PAIRS} more pairs", style="dim"))
            flagged = pairs_to_review(report, judge)
            parts.append(Text(f"To review ({judge}): " + ("; ".join(f"{pair} ({why})" for pair, why in flagged)
                                                           if flagged else "none"), style="yellow"))
        self.update(Group(*parts))


class PreferencePanel(VerticalScroll):
    """A scrolling :class:`PreferenceReportView` for screens with other content (the Scores screen):
    hidden while there is no report, and redrawn only when the report changes."""

    DEFAULT_CSS = """
    PreferencePanel { height: auto; max-height: 60%; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._shown: tuple[PreferenceReport | None, int | None] = (None, None)
        self.display = False

    def compose(self) -> ComposeResult:
        yield PreferenceReportView()

    def show(self, report: PreferenceReport | None, run_id: int | None = None,
             dataset: Dataset | None = None) -> None:
        if report is self._shown[0] and run_id == self._shown[1] and (report is None) != self.display:
            return  # on show already: no render, no layout
        self._shown = (report, run_id)
        self.display = report is not None
        self.query_one(PreferenceReportView).show(report, run_id, dataset)


def _table(title: str, columns: tuple[str, ...], rows: list[tuple[str, ...]]) -> Table:
    table = Table(title=title, title_justify="left", pad_edge=False, expand=False)
    for index, name in enumerate(columns):
        table.add_column(name, justify="left" if index == 0 else "right")
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))  # data and judge names are text, never markup
    return table
