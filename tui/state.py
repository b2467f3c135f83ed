"""What the app tells its screens when the workspace changes, and where a run stands."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dialjudge.core.judges.events import RunProgress, RunSummary


class Change(str, enum.Enum):
    DATASET = "dataset"  # a new dataset: everything else was reset
    METRICS = "metrics"  # reference-based metric scores arrived (or progressed)
    JUDGES = "judges"  # judge scores changed; ``item_ids`` says which items
    SELECTION = "selection"  # the quality or the subset changed
    STATS = "stats"  # a new agreement table
    RUN = "run"  # a run started, progressed or stopped
    ITEM = "item"  # one item's metric scores arrived; ``item_ids`` holds its id


@dataclass(frozen=True)
class WorkspaceChange:
    kind: Change
    item_ids: frozenset[str] = frozenset()


@dataclass
class RunState:
    """The run the app is driving (one at a time)."""

    run_id: int | None = None
    status: str = "starting"  # starting | running | finished | cancelled | failed
    total: int = 0
    done: int = 0
    failures: int = 0
    progress: "RunProgress | None" = None
    summary: "RunSummary | None" = None
    error: str | None = None
    judges: list[str] = field(default_factory=list)

    @property
    def active(self) -> bool:
        return self.status in ("starting", "running")
