"""The Scores table's cells, built from the workspace one at a time when the table draws a row.

The Scores screen shows every item (10,000 and more) with a column per evaluator. Building
every cell up front cost seconds on the UI thread each time a run added its judge's column;
this source lets the virtual table build only the rows on screen, sort from the scores
themselves, and fit column widths from the values' range.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.cells import cell_len

from dialjudge.core.api.view import on_judge_scale

from ..format import disagreement_style, number_text, widest_cells, widest_number
from ..widgets.virtual_table import RowKey, TableCell

if TYPE_CHECKING:
    from ..controllers.datasets import TextWidths
    from ..scores_view_model import Workspace

ID_COLUMN = "id"
SYSTEM_COLUMN = "system"
HUMAN_COLUMN = "human"
#: What a score cell shows for an item the evaluator has not scored (yet), and for a failure.
NOT_SCORED = "·"
FAILED = "fail"


class ScoreCells:
    """A ``CellSource`` for the Scores table: item id, system, the human label, then one column
    per evaluator (any other column key is an evaluator's name). It reads the workspace when
    asked, so a cell built after a change shows the change."""

    def __init__(self, workspace: Workspace, widths: TextWidths | None = None) -> None:
        if workspace.dataset is None:
            raise ValueError("the Scores table needs a dataset")
        self.workspace = workspace
        self.dataset = workspace.dataset
        #: The dataset's widest id and system name where the open measured them (on its worker).
        self.widths = widths if widths is not None and widths.dataset is workspace.dataset else None

    def cell(self, key: RowKey, column: str) -> TableCell:
        example = self.dataset.get(str(key))
        if column == ID_COLUMN:
            return TableCell.of(example.id)
        if column == SYSTEM_COLUMN:
            return TableCell.of(example.system or "")
        ws = self.workspace
        if column == HUMAN_COLUMN:
            human = ws.human_label(example)
            return TableCell(number_text(human, 2), "bold", human)
        scores = ws.scores_of(column)
        if example.id not in scores:
            return TableCell(NOT_SCORED, "dim", None)
        value = scores[example.id]
        if value is None:
            return TableCell(FAILED, "red", None)
        human_unit = ws.human_unit(example)
        difference = None if human_unit is None else abs(value - human_unit)
        scale = ws.judge_scale(column)
        if scale is not None:  # the judge's own scale, as it answered and as its judgments CSV says (score)
            return TableCell(number_text(on_judge_scale(value, scale), 2), disagreement_style(difference), value)
        return TableCell(number_text(value), disagreement_style(difference), value)

    def sort_key(self, key: RowKey, column: str) -> Any:
        example_id = str(key)
        if column == ID_COLUMN:
            return example_id.lower()
        if column == SYSTEM_COLUMN:
            return (self.dataset.get(example_id).system or "").lower()
        if column == HUMAN_COLUMN:
            return self.workspace.human_label(self.dataset.get(example_id))
        return self.workspace.scores_of(column).get(example_id)  # None: not scored or failed

    def sort_keys(self, keys: Sequence[RowKey], column: str) -> list[Any]:
        """``sort_key`` of every key at once (the table sorts on a thread worker: only lookups)."""
        if column == ID_COLUMN:
            return [str(key).lower() for key in keys]
        get = self.dataset.get
        if column == SYSTEM_COLUMN:
            return [(get(str(key)).system or "").lower() for key in keys]
        if column == HUMAN_COLUMN:
            labels = self.workspace.pooled_labels()
            return [labels.get(str(key)) for key in keys]
        scores = self.workspace.scores_of(column)
        return [scores.get(str(key)) for key in keys]

    def widest_text(self, column: str) -> int:
        examples = self.dataset.examples
        if column == ID_COLUMN:
            return self.widths.item_id if self.widths is not None else widest_cells(list(self.dataset.ids()))
        if column == SYSTEM_COLUMN:
            return self.widths.system if self.widths is not None else widest_cells([ex.system or "" for ex in examples])
        ws = self.workspace
        if column == HUMAN_COLUMN:
            labels = ws.pooled_labels()
            return widest_number([labels.get(ex.id) for ex in examples], 2)
        scores = ws.scores_of(column)
        scale = ws.judge_scale(column)
        widest = (widest_number([None if v is None else on_judge_scale(v, scale) for v in scores.values()], 2)
                  if scale is not None else widest_number(scores.values(), 3))
        if any(value is None for value in scores.values()):
            widest = max(widest, cell_len(FAILED))
        if len(scores) < len(examples):
            widest = max(widest, cell_len(NOT_SCORED))
        return widest
