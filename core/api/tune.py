"""Tuning a judge: a search over variants on tuning contexts, reported on held-out ones.

``open_search`` reads a search space and builds the search (``await search.run()``
gives the :class:`TuningReport`; ``search.cancel()`` stops it); ``save_winner``
writes the winning variant's template with the same provenance from both front ends.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..config import Config
from ..format import number_text
from ..judges.store.run_store import RunStore
from ..model import Dataset
from ..tuning.report import FORMATS as REPORT_FORMATS
from ..tuning.report import HELDOUT_COLUMNS, LEADERBOARD_COLUMNS, TuningReport, render_report
from ..tuning.search import BackendFactory, SearchEvent, TuningSearch, save_search_record
from ..tuning.space import SearchSpace, load_space
from ..tuning.winner import save_winner as save_winner_file
from ..tuning.winner import variant_template

__all__ = ["REPORT_FORMATS", "read_space", "open_search", "save_winner", "render_report", "save_search_record",
           "TuningReport", "TuningSearch", "SearchSpace", "LEADERBOARD_COLUMNS", "HELDOUT_COLUMNS"]


def read_space(path: Path, *, quality: str | None = None, budget: int | None = None,
               seed: int | None = None) -> SearchSpace:
    """A search space TOML file, with the settings a user overrides (None: the file's)."""
    return load_space(path).with_settings(quality=quality, budget=budget, seed=seed)


def open_search(space: SearchSpace, dataset: Dataset, config: Config, store: RunStore, *,
                on_event: Callable[[SearchEvent], None] | None = None,
                make_backend: BackendFactory | None = None, close_backends: bool = True) -> TuningSearch:
    """The search over ``space``'s variants, checked against the dataset before anything is judged.
    ``close_backends``: False where the judges ``make_backend`` hands out stay open after the search (a judge
    process's, kept for its next run or trial)."""
    return TuningSearch(space, dataset, config, store, make_backend=make_backend, on_event=on_event,
                        close_backends=close_backends)


def save_winner(report: TuningReport, config: Config, name: str, *, folder: Path | None = None) -> Path:
    """Save the winning variant's template as ``name`` (default folder: the user's templates),
    with where it came from and how it did on tuning and held-out contexts."""
    variant = report.variant(report.winner)
    _template_name, text = variant_template(variant, config)
    win = report.heldout_of(report.winner)
    provenance = {"dataset": report.dataset, "quality": report.quality,
                  f"tuning {report.coefficient}": number_text(win.tuning if win else None),
                  f"held-out {report.coefficient}": number_text(win.heldout if win else None),
                  "split seed": report.split.seed}
    return save_winner_file(text, variant, name, provenance=provenance, folder=folder)
