"""Use case: judge scores made elsewhere become a stored run of kind "imported" (``runs import``,
the Runs screen's import action). The engine is :mod:`dialjudge.core.imports`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..config import Config, load_config
from ..dataset_catalogue import open_dataset
from ..imports import FORMATS, ImportOptions, ImportRefused, ImportReport, ImportResult, ScaleRule, import_run
from ..imports.importer import DEFAULT_TEMPLATE
from ..judges.store.run_store import RunStore
from ..model import Dataset

#: Import format name -> what it reads, for help texts and the app's file dialog.
IMPORT_FORMATS: dict[str, str] = {name: module.DESCRIPTION for name, module in FORMATS.items()}

__all__ = ["IMPORT_FORMATS", "ImportRefused", "ImportReport", "ImportRequest", "ImportResult", "import_scores"]


@dataclass(frozen=True)
class ImportRequest:
    """A file of judge scores to store as a run, as a user typed it."""

    file: Path
    #: The dataset's name or path; None: the ``current`` one.
    dataset: str | None = None
    template: str = DEFAULT_TEMPLATE
    quality: str | None = None
    judge_name: str | None = None
    name: str = ""
    strict: bool = False
    #: The scores' own scale, "LOW-HIGH" (mapped linearly onto the template's).
    scale: str | None = None
    #: A name of :data:`IMPORT_FORMATS`; None detects it.
    format: str | None = None


def import_scores(store: RunStore, request: ImportRequest, app_config: Config | None = None, *,
                  current: Dataset | None = None) -> ImportResult:
    """Read, match and store ``request.file``; raises :class:`ImportRefused` (with its report) when refused."""
    app_config = app_config or load_config()
    if request.dataset is None and current is None:
        raise ValueError("an import needs a dataset: name one, or pass the open one as current")
    dataset = current if request.dataset is None or (current is not None and current.name == request.dataset) \
        else open_dataset(request.dataset, app_config, remember=False)
    assert dataset is not None
    options = ImportOptions(template=request.template, quality=request.quality, judge_name=request.judge_name,
                            name=request.name, strict=request.strict, format=request.format,
                            scale=ScaleRule.parse(request.scale) if request.scale else None,
                            template_dirs=app_config.template_dirs)
    return import_run(store, Path(request.file).expanduser(), dataset, options)
