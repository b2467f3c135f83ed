"""An import's entry point: read the file, then hand it to the importer of what it holds (scores,
:mod:`.importer`; pairwise verdicts on pre-paired items, :mod:`.pairwise`)."""

from __future__ import annotations

from pathlib import Path

from ..judges.store.run_store import RunStore
from ..model import Dataset
from .importer import (
    ImportOptions,
    ImportPlan,
    ImportResult,
    existing_import,
    prepare_scores,
    read_file,
    write_import,
)
from .pairwise import prepare_verdict_import


def prepare_import(path: Path, dataset: Dataset, options: ImportOptions | None = None) -> ImportPlan:
    """Read ``path`` and match it to ``dataset``: the run to store and the report, nothing stored yet."""
    options = options or ImportOptions()
    path = Path(path)
    parsed, digest = read_file(path, options.format)
    if parsed.verdicts:
        return prepare_verdict_import(path, dataset, parsed, digest, options)
    return prepare_scores(path, dataset, parsed, digest, options)


def import_run(store: RunStore, path: Path, dataset: Dataset, options: ImportOptions | None = None
               ) -> ImportResult:
    """Read ``path``, match it to ``dataset`` and store it as a finished run of kind "imported"."""
    plan = prepare_import(path, dataset, options)
    existing = existing_import(store, plan)
    if existing is not None:  # imported before, byte for byte and with these settings: shown, not stored twice
        return ImportResult(existing, plan.report, shown_again=True)
    return ImportResult(write_import(store, plan), plan.report)
