"""Stored runs as a list of runs shows them: the runs of one tuning search folded under one entry.

A tuning search stores every variant it judges as an ordinary run (20 and more per search); its
record (``save_search_record``, in the data folder's ``searches/``) names them. Listed one by one
they bury the runs a user started; folded, the search reads as one line with its winner.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import user_data_dir
from ..format import number_text
from ..judges.store.run_store import RunRecord, RunStore
from .stored import list_runs


@dataclass(frozen=True)
class SearchEntry:
    """One stored tuning search and the runs it made that are still in the store, newest first."""

    number: int  # 1 for the search whose first run is oldest
    record: Path
    dataset: str
    quality: str
    coefficient: str
    winner: str | None
    held_out: float | None  # the winner's coefficient with the humans on the held-out contexts
    runs: tuple[RunRecord, ...]

    @property
    def newest(self) -> RunRecord:
        return self.runs[0]

    @property
    def id_range(self) -> str:
        ids = sorted(r.id for r in self.runs)
        return str(ids[0]) if len(ids) == 1 else f"{ids[0]}–{ids[-1]}"

    @property
    def summary(self) -> str:
        """``tuning search 2: 20 runs, best 'v3' (held-out spearman 0.412)``."""
        best = "no winner" if self.winner is None else (
            f"best {self.winner!r} (held-out {self.coefficient} {number_text(self.held_out)})")
        return f"tuning search {self.number}: {len(self.runs)} runs, {best}"


@dataclass(frozen=True)
class RunList:
    entries: tuple[RunRecord | SearchEntry, ...]  # newest first; a search where its newest run is
    notes: tuple[str, ...]  # search records that could not be read (their runs are listed one by one)


def searches_folder() -> Path:
    """Where ``save_search_record`` keeps the records of tuning searches."""
    return user_data_dir() / "searches"


def run_list(store: RunStore, *, fold_searches: bool = True, folder: Path | None = None) -> RunList:
    """Every stored run, newest first, each tuning search's runs folded into one entry unless
    ``fold_searches`` is False."""
    runs = list_runs(store)
    if not fold_searches:
        return RunList(tuple(runs), ())
    by_id = {r.id: r for r in runs}
    searches, notes = _read_searches(folder or searches_folder(), set(by_id))
    taken: set[int] = set()
    groups: list[tuple[Path, Mapping[str, Any], list[int]]] = []
    for path, record, ids in searches:
        mine = [i for i in ids if i not in taken]
        taken.update(mine)
        if mine:
            groups.append((path, record, mine))
    groups.sort(key=lambda g: min(g[2]))
    position = {r.id: k for k, r in enumerate(runs)}
    folded: dict[int, SearchEntry] = {}
    for number, (path, record, ids) in enumerate(groups, start=1):
        entry = _entry(number, path, record, [by_id[i] for i in sorted(ids, key=position.__getitem__)])
        folded[entry.newest.id] = entry
    entries: list[RunRecord | SearchEntry] = []
    for run in runs:
        if run.id in folded:
            entries.append(folded[run.id])
        elif run.id not in taken:
            entries.append(run)
    return RunList(tuple(entries), tuple(notes))


def _read_searches(folder: Path, known: set[int]) -> tuple[list[tuple[Path, Mapping[str, Any], list[int]]], list[str]]:
    """Each readable search record with the ids of its runs in the store; a note per unreadable one."""
    out, notes = [], []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            ids = _run_ids(record)
        except (OSError, ValueError, TypeError, AttributeError) as exc:
            notes.append(f"{path}: not read as a tuning search record ({exc}); its runs are listed one by one")
            continue
        out.append((path, record, [i for i in ids if i in known]))
    return out, notes


def _run_ids(record: Any) -> list[int]:
    run_ids = record["run_ids"] if isinstance(record, dict) and "run_ids" in record else None
    if not isinstance(run_ids, dict):
        raise ValueError("field run_ids: expected an object of variant -> run ids")
    ids: list[int] = []
    for variant, values in run_ids.items():
        if not isinstance(values, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            raise ValueError(f"field run_ids.{variant}: expected a list of run ids")
        ids.extend(v for v in values if v not in ids)
    return ids


def _entry(number: int, path: Path, record: Mapping[str, Any], runs: Sequence[RunRecord]) -> SearchEntry:
    winner = record.get("winner")
    held_out = None
    for row in record.get("heldout") or ():
        if isinstance(row, dict) and row.get("variant") == winner and isinstance(row.get("held_out"), (int, float)):
            held_out = float(row["held_out"])
    return SearchEntry(number=number, record=path, dataset=str(record.get("dataset", "")),
                       quality=str(record.get("quality", "")), coefficient=str(record.get("coefficient", "")),
                       winner=str(winner) if isinstance(winner, str) else None, held_out=held_out,
                       runs=tuple(runs))
