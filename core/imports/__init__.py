"""Importing judge scores made elsewhere (vLLM, a batch API, Inspect AI, promptfoo) as a run of kind
"imported", which every statistic, comparison, export and the review queue read like a native run."""

from __future__ import annotations

from .dispatch import import_run, prepare_import
from .formats import FORMATS
from .importer import (
    IMPORTER_VERSION,
    ImportOptions,
    ImportPlan,
    ImportRefused,
    ImportReport,
    ImportResult,
    write_import,
)
from .scale import ScaleRule

__all__ = ["FORMATS", "IMPORTER_VERSION", "ImportOptions", "ImportPlan", "ImportRefused", "ImportReport",
           "ImportResult", "ScaleRule", "import_run", "prepare_import", "write_import"]
