"""What the run store hands out and takes: its records, keys, pages and columns, and its errors."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ...errors import DialjudgeError
from ..run.config import RunConfig
from ..run.events import RunStatus
from ..types import BackendResult, Judgment


class StoreError(DialjudgeError):
    """The run store file cannot be opened or was written by an incompatible version."""


class RunLocked(StoreError):
    """Another live process is executing the same run."""

    def __init__(self, message: str, *, pid: int, host: str) -> None:
        super().__init__(message)
        self.pid = pid
        self.host = host


@dataclass(frozen=True)
class RunRecord:
    """One row of the runs table with its judgment counts."""

    id: int
    created: str
    updated: str
    name: str
    status: RunStatus
    config: dict[str, Any]
    fingerprint: str
    total: int
    error: str | None
    judgments: int
    failures: int
    #: The run this one was rescored from, without calling the model (None: judged by a model).
    source_run: int | None = None
    #: Seconds the engine spent on the run, over all its sessions.
    wall_s: float = 0.0

    @property
    def kind(self) -> str:
        """How the run's judgments were made: "judged" (by a model here), "rescored" (from another
        run's stored answers) or "imported" (read from a file, core.imports)."""
        if self.source_run is not None:
            return "rescored"
        return "imported" if self.config.get("imported") else "judged"

    @property
    def run_config(self) -> RunConfig:
        """The stored configuration, read (never reach into ``config`` by key)."""
        return RunConfig.from_dict(self.config)


@dataclass(frozen=True)
class Review:
    run_id: int
    item_id: str
    verdict: str
    note: str
    own_rating: float | None
    updated: str


@dataclass(frozen=True)
class JudgmentKey:
    """What makes a judgment unique within a run."""

    item_id: str
    judge: str
    repeat: int


class JudgmentWrite(NamedTuple):
    """One judgment to store, with what :meth:`.judgments.Judgments.add_judgment` takes beside it."""

    judgment: Judgment
    cache_key: str | None = None
    #: The backend itself failed (no answer at all): such rows are retried on resume.
    request_failed: bool = False
    #: The backend's answer, kept in the response cache under ``cache_key``.
    response: BackendResult | None = None
    model_identity: str = ""


@dataclass(frozen=True)
class JudgmentPage:
    """Judgments ``offset`` to ``offset + len(judgments)`` of ``total``, ordered by item, judge, repeat."""

    offset: int
    total: int
    judgments: list[Judgment]


@dataclass(frozen=True)
class ScoreColumns:
    """One judge's judgments of one repeat as arrays, in item-id order (NaN: failed, no score)."""

    judge: str
    item_ids: list[str]
    #: On the template's scale.
    score: np.ndarray
    #: 0-1, what the agreement statistics take.
    normalized: np.ndarray

    @property
    def failed(self) -> np.ndarray:
        return np.isnan(self.score)

    def __len__(self) -> int:
        return len(self.item_ids)

    def normalized_for(self, item_ids: Sequence[str]) -> np.ndarray:
        """The 0-1 scores in the order of ``item_ids`` (a dataset's, a table's rows); NaN for an item
        this judge has no score of, failed or never judged."""
        position = {item: k for k, item in enumerate(self.item_ids)}
        picks = np.fromiter((position.get(item, -1) for item in item_ids), dtype=np.int64, count=len(item_ids))
        out = np.full(len(item_ids), np.nan)
        found = picks >= 0
        out[found] = self.normalized[picks[found]]
        return out

    def normalized_by_item(self) -> dict[str, float | None]:
        """``{item_id: 0-1 score}`` with None for a failed judgment (an evaluator column)."""
        return {item: (None if value != value else value)
                for item, value in zip(self.item_ids, self.normalized.tolist())}

