"""The summary of a pairwise run: per judge and for the humans, position flips, first-position
wins, ties, length preference and accuracy (core.judges.post_run.pairwise_report's rows and notes)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from dialjudge.core.api.formatting import (
    SUMMARY_COLUMNS,
    summary_notes,
    summary_rows,
)

if TYPE_CHECKING:
    from dialjudge.core.api import PairwiseReport


class PairwiseReportView(Static):
    """Hidden until a pairwise run's report is shown."""

    DEFAULT_CSS = """
    PairwiseReportView { height: auto; display: none; }
    PairwiseReportView.-shown { display: block; }
    """

    def show(self, report: PairwiseReport | None, run_id: int | None = None) -> None:
        self.set_class(report is not None, "-shown")
        if report is None:
            self.update("")
            return
        table = Table(title=f"Pairwise verdicts{'' if run_id is None else f' — run {run_id}'}",
                      title_justify="left", pad_edge=False, expand=False)
        for index, name in enumerate(SUMMARY_COLUMNS):
            table.add_column(name, justify="left" if index == 0 else "right")
        for row in summary_rows(report):
            table.add_row(*row)
        notes = Text("\n".join(f"• {note}" for note in summary_notes(report)), style="dim")
        self.update(Group(table, notes))
