"""What the app tells its screens when the workspace changes, the statistics of the current view, and the
order its evaluator columns are shown in (screens and controllers both follow it)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dialjudge.core.api.types import POOL, RunStatus

if TYPE_CHECKING:
    from dialjudge.core.api.types import (
        AgreementCell,
        AgreementTable,
        HumanCeiling,
    )

    from .scores_view_model import Workspace


class Change(str, enum.Enum):
    DATASET = "dataset"  # a new dataset: everything else was reset
    SUMMARY = "summary"  # the dataset's summary and human ceilings arrived (after DATASET)
    METRICS = "metrics"  # reference-based metric scores arrived (or progressed)
    JUDGES = "judges"  # judge scores changed; ``item_ids`` says which items
    SELECTION = "selection"  # the quality or the subset changed
    STATS = "stats"  # a new agreement table
    RUN = "run"  # a run started, progressed or stopped
    ITEM = "item"  # one item's metric scores arrived; ``item_ids`` holds its id
    LIVE = "live"  # newer running correlations of the judge columns were computed (tui/running_keeper.py)


@dataclass(frozen=True)
class WorkspaceChange:
    kind: Change
    item_ids: frozenset[str] = frozenset()


@dataclass
class StatsState:
    """The agreement statistics (with CIs) of the current view, gathered from one or more
    tables: a refresh while judgments arrive recomputes only the evaluators that changed."""

    selection_version: int
    quality: str
    #: evaluator -> its cell on the chosen quality
    cells: dict[str, AgreementCell] = field(default_factory=dict)
    #: evaluator -> the workspace version its cell was computed from
    versions: dict[str, int] = field(default_factory=dict)
    ceiling: HumanCeiling | None = None

    def merge(self, table: AgreementTable, versions: dict[str, int]) -> None:
        for name in table.evaluators:
            self.cells[name] = table.cell(name, self.quality)
            self.versions[name] = versions[name]
        self.ceiling = table.ceiling.get((self.quality, "turn"), self.ceiling)

    def is_current(self, evaluator: str, version: int) -> bool:
        return evaluator in self.cells and self.versions.get(evaluator) == version


def column_order(workspace: Workspace) -> list[str]:
    """Judges (and their pool) first: they are what a run changes; then the metrics."""
    return [*workspace.judge_names, *([POOL] if workspace.has_pool else []), *workspace.metric_names]


#: One colour per run status, wherever a run's status is drawn (the Runs table, the run's status line).
STATUS_COLOURS: dict[RunStatus, str] = {
    RunStatus.RUNNING: "cyan", RunStatus.FINISHED: "green", RunStatus.CANCELLED: "yellow", RunStatus.FAILED: "red",
    RunStatus.AWAITING_ANSWERS: "magenta", RunStatus.INTERRUPTED: "magenta"}
