"""Reviewing a run: the items worth a human look, and the reviewed labels written out.

The queue is :mod:`dialjudge.core.review_queue`'s; here it is read together
with what it needs from the run store, so a front end makes one call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..judges.post_run.preference_report import PreferenceReport, is_preference_run, preference_report
from ..judges.run.config import RunConfig
from ..judges.run.probability import mass_thresholds
from ..judges.store.run_store import Review, RunRecord, RunStore
from ..judges.types import Judgment
from ..model import Dataset
from ..report import to_csv, to_jsonl
from ..review_queue import ReviewCase, build_queue, review_rows
from ..run_export import ExportError, write_text_file

#: Review export formats and their file endings.
REVIEW_FORMATS: dict[str, str] = {"reviews-csv": "csv", "reviews-jsonl": "jsonl"}
REVIEW_FORMAT_LABELS: dict[str, str] = {"reviews-csv": "Reviewed labels, CSV", "reviews-jsonl": "Reviewed labels, JSONL"}


@dataclass(frozen=True)
class ReviewData:
    run: RunRecord
    config: RunConfig
    dataset: Dataset
    judgments: dict[str, dict[str, Judgment]]
    queue: list[ReviewCase]
    reviews: dict[str, Review]


def review_data(store: RunStore, run_id: int, dataset_of: Callable[[RunConfig], Dataset]) -> ReviewData:
    """Run ``run_id``'s judgments, reviews and review queue; ``dataset_of`` gives the run's dataset."""
    record = store.runs.get_run(run_id)
    config = record.run_config
    judgments = store.judgments.load_judgments(run_id)
    reviews = store.reviews.reviews(run_id)
    dataset = dataset_of(config)
    preferences = _preferences(config, dataset, judgments)
    queue = build_queue(dataset, judgments, config.quality, preferences=preferences,
                        mass_thresholds=mass_thresholds(config))
    return ReviewData(record, config, dataset, judgments, queue, reviews)


def _preferences(config: RunConfig, dataset: Dataset,
                 judgments: dict[str, dict[str, Judgment]]) -> PreferenceReport | None:
    """A pairwise run on pre-paired items: its verdicts against the humans' votes, for the queue's flags
    (no intervals: the queue needs only each pair's verdicts)."""
    if not is_preference_run(config, dataset):
        return None
    return preference_report(config, dataset, judgments, n_boot=0)


def check_review_formats(formats: Sequence[str]) -> None:
    """ExportError unless ``formats`` names at least one review format and only those."""
    if not formats:
        raise ExportError("choose at least one format to export")
    unknown = [fmt for fmt in formats if fmt not in REVIEW_FORMATS]
    if unknown:
        raise ExportError(f"unknown review export format {unknown[0]!r} (one of {', '.join(REVIEW_FORMATS)})")


def export_reviews(data: ReviewData, folder: Path, formats: Sequence[str]) -> tuple[Path, ...]:
    """Write every judged item's label (manual ones marked) with its review, one file per format."""
    check_review_formats(formats)
    run_id = data.run.id
    rows = review_rows(data.dataset, run_id, data.config.quality, data.judgments, data.reviews, data.queue)
    paths = []
    for fmt in formats:
        text = to_csv(rows) if fmt == "reviews-csv" else to_jsonl(rows)
        paths.append(write_text_file(Path(folder).expanduser() / f"run-{run_id}-reviews.{REVIEW_FORMATS[fmt]}", text))
    return tuple(paths)
