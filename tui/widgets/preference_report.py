"""A run on pre-paired preference data: the agreement table with the humans' votes, per-pair rows and the
pairs worth a look (core.api's rows and notes, the same the command line prints)."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from dialjudge.core.api import (
    AGREEMENT_COLUMNS,
    PAIR_COLUMNS,
    PreferenceReport,
    agreement_notes,
    agreement_rows,
    pair_rows,
    pairs_to_review,
)

#: Per-pair rows shown under the table (the rest are counted).
SHOWN_PAIRS = 20


class PreferenceReportView(Static):
    """Hidden until a report of a run on pre-paired items is shown."""

    DEFAULT_CSS = """
    PreferenceReportView { height: auto; display: none; }
    PreferenceReportView.-shown { display: block; }
    """

    def show(self, report: PreferenceReport | None, run_id: int | None = None) -> None:
        self.set_class(report is not None, "-shown")
        if report is None:
            self.update("")
            return
        table = _table(f"Judges vs the humans' preferences{'' if run_id is None else f' — run {run_id}'}",
                       AGREEMENT_COLUMNS, agreement_rows(report))
        parts: list[Table | Text] = [table, Text("\n".join(f"• {n}" for n in agreement_notes(report)), style="dim")]
        for judge in report.judges:
            rows = pair_rows(report, judge)
            parts.append(_table(f"Pairs — {judge}", PAIR_COLUMNS, rows[:SHOWN_PAIRS]))
            if len(rows) > SHOWN_PAIRS:
                parts.append(Text(f"… and {len(rows) - SHOWN_PAIRS} more pairs", style="dim"))
            flagged = pairs_to_review(report, judge)
            parts.append(Text(f"To review ({judge}): " + ("; ".join(f"{pair} ({why})" for pair, why in flagged)
                                                           if flagged else "none"), style="yellow"))
        self.update(Group(*parts))


def _table(title: str, columns: tuple[str, ...], rows: list[tuple[str, ...]]) -> Table:
    table = Table(title=title, title_justify="left", pad_edge=False, expand=False)
    for index, name in enumerate(columns):
        table.add_column(name, justify="left" if index == 0 else "right")
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))  # data and judge names are text, never markup
    return table
