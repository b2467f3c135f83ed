"""Writing a stored run to files: its agreement tables and its per-item judgments.

The tables are what the headless ``judge`` command prints (core/evaluation's
records laid out by core/report), one file per format; the judgments are the
run store's export rows. Called from a worker: it reads the store and writes
files, and touches no widget.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from dialjudge.core import diagnostics_report as dr
from dialjudge.core.errors import DialjudgeError
from dialjudge.core.evaluation import evaluate, split_subsets
from dialjudge.core.judge_diagnostics import run_diagnostics
from dialjudge.core.judges.store.run_store import EXPORT_COLUMNS, RunStore
from dialjudge.core.model import Dataset
from dialjudge.core.report import neutralize_formula, render
from dialjudge.core.run_columns import run_scores

#: Agreement-table formats (core/report) and judgment formats, with their file endings.
TABLE_FORMATS: dict[str, str] = {"csv": "csv", "json": "json", "markdown": "md", "latex": "tex"}
JUDGMENT_FORMATS: dict[str, str] = {"judgments-csv": "csv", "judgments-jsonl": "jsonl"}
FORMAT_LABELS: dict[str, str] = {
    "csv": "Agreement table, CSV",
    "json": "Agreement table, JSON",
    "markdown": "Agreement table, Markdown",
    "latex": "Agreement table, LaTeX",
    "judgments-csv": "Per-item judgments, CSV",
    "judgments-jsonl": "Per-item judgments, JSONL",
    "html": "Report, one self-contained HTML file",
}
#: The format written by the HTML report's use case (core/api/html_report.py), not by export_run.
REPORT_FORMAT = "html"


class ExportError(DialjudgeError):
    """An export that cannot be written (a folder that is a file, no permission, nothing to write)."""


@dataclass(frozen=True)
class ExportResult:
    run_id: int
    paths: tuple[Path, ...]


def export_run(store: RunStore, run_id: int, dataset: Dataset, folder: Path, formats: Sequence[str], *,
               extra_scores: Mapping[str, Mapping[str, float | None]] | None = None,
               n_boot: int = 1000, seed: int = 0) -> ExportResult:
    """Write the chosen formats of run ``run_id`` into ``folder`` (created if missing).

    ``extra_scores`` (say, the reference-based metrics already computed for the
    open dataset) appear in the tables beside the run's judges.
    """

    unknown = [f for f in formats if f not in TABLE_FORMATS and f not in JUDGMENT_FORMATS]
    if unknown:
        raise ExportError(f"unknown export format {unknown[0]!r} (one of {', '.join(FORMAT_LABELS)})")
    if not formats:
        raise ExportError("choose at least one format to export")
    record = store.runs.get_run(run_id)
    config = record.run_config
    folder = _writable_folder(folder)
    written: list[Path] = []

    tables = [f for f in formats if f in TABLE_FORMATS]
    if tables:
        scores, failures = run_scores(store, run_id)
        if not scores:
            raise ExportError(f"run {run_id} has no judgments yet; nothing to tabulate")
        qualities = [config.quality] if config.quality else None
        # Only the items the run asked about (its subset, limit, item list): an item never asked is
        # no "not scored" exclusion. A pairwise run's items are pair orders, read against the candidates.
        asked = dataset if config.pairs is not None else dataset.subset(config.select_items(dataset))
        subsets = split_subsets(asked, config.subset)
        # The human ceiling on the items the run's judges are compared on, as everywhere else.
        report = evaluate(asked, qualities=qualities, subset=subsets[0], extra_subsets=subsets[1:],
                          extra_scores=extra_scores, judge_scores=scores, failures=failures, include_metrics=False,
                          n_boot=n_boot, seed=seed)
        title = f"Run {run_id}: {config.label}"
        meta = {"run_id": run_id, "dataset": dataset.name, "template": config.template,
                "mode": config.mode.value, "fingerprint": record.fingerprint}
        for fmt in tables:
            if fmt in ("csv", "json"):
                text = render(report.records, fmt, title=title, notes=report.notes, meta=meta)
            else:
                # Markdown and LaTeX hold one table per subset, as the papers print them.
                text = "\n".join(
                    render(report.records, fmt, title=f"{title} — subset {subset}", level=report.item_level,
                           subset=subset, notes=report.notes)
                    for subset in report.subsets)
            written.append(_write(folder / f"run-{run_id}-agreement.{TABLE_FORMATS[fmt]}", text))
        written += _write_diagnostics(store, run_id, dataset, folder, tables, title=title, meta=meta)

    judgment_formats = [f for f in formats if f in JUDGMENT_FORMATS]
    if judgment_formats:

        if not store.judgments.count_judgments(run_id):
            raise ExportError(f"run {run_id} has no judgments yet; nothing to export")
        for fmt in judgment_formats:
            ending = JUDGMENT_FORMATS[fmt]
            path = folder / f"run-{run_id}-judgments.{ending}"
            write_judgments(store, run_id, path, ending)
            written.append(path)
    return ExportResult(run_id, tuple(written))


def write_judgments(store: RunStore, run_id: int, path: Path, fmt: str) -> int:
    """Stream run ``run_id``'s judgments into ``path`` as CSV or JSON Lines (``fmt`` "csv" or
    "jsonl"); returns how many. The same bytes as :func:`core.report.to_csv` or ``to_jsonl`` of
    ``store.judgments.export_rows``, written row by row from the store: no list of 100,000 dicts and
    no whole file in memory. Written beside ``path`` and moved there once complete, so a failed
    export leaves no half file."""
    if fmt not in ("csv", "jsonl"):
        raise ExportError(f"unknown judgments format {fmt!r} (csv or jsonl)")
    rows = store.judgments.export_tuples(run_id)
    partial = path.with_name(path.name + ".part")
    try:
        # Text mode with the platform's line ends, as Path.write_text writes the other exports.
        with partial.open("w", encoding="utf-8") as handle:
            count = _write_csv(rows, handle) if fmt == "csv" else _write_jsonl(rows, handle)
        partial.replace(path)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise ExportError(f"{path}: cannot write: {exc.strerror}") from None
    return count


def _write_csv(rows: Iterable[tuple[Any, ...]], handle: TextIO) -> int:
    writer = csv.writer(handle, lineterminator="\n")
    # Column names are ours, but neutralised as to_csv neutralises every header.
    writer.writerow([neutralize_formula(c) for c in EXPORT_COLUMNS])
    count = 0
    for row in rows:
        # As core.report.to_csv writes a cell: no value is empty; text is neutralised (a formula to a
        # spreadsheet gets a leading quote) with its line ends made "\n", so the writer quotes it. Numbers
        # pass as they are: SQLite keeps no NaN (it stores NULL), the one float to_csv empties.
        writer.writerow(["" if v is None else _csv_text(v) if v.__class__ is str and
                         (v[:1] in _FORMULA_STARTS or "\r" in v) else v for v in row])
        count += 1
    return count


#: First characters that may make a cell a formula (core.report's list; a number such as -0.25 is kept).
_FORMULA_STARTS = frozenset("=+-@\t\r")


def _csv_text(text: str) -> str:
    return neutralize_formula(text).replace("\r\n", "\n").replace("\r", "\n")


def _write_jsonl(rows: Iterable[tuple[Any, ...]], handle: TextIO) -> int:
    # What json.dumps(..., ensure_ascii=False) uses; infinities refused, so that a row holding one is
    # written as to_jsonl writes it (null), and every other row without a look at each value.
    encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode
    count = 0
    for row in rows:
        try:
            line = encode(dict(zip(EXPORT_COLUMNS, row)))
        except ValueError:
            line = encode({c: (None if isinstance(v, float) and not math.isfinite(v) else v)
                           for c, v in zip(EXPORT_COLUMNS, row)})
        handle.write(line + "\n")
        count += 1
    return count


def _write_diagnostics(store: RunStore, run_id: int, dataset: Dataset, folder: Path, formats: Sequence[str], *,
                       title: str, meta: Mapping[str, object]) -> list[Path]:
    """Beside the agreement table: the confusion matrices with plain and weighted κ, the reliability
    bins with ECE and Brier, the inter-judge matrix (whichever apply to the run's quality and judges)."""

    diagnostics = run_diagnostics(store, run_id, dataset)
    if diagnostics is None or diagnostics.empty:
        return []
    written = []
    if "csv" in formats:
        for part, text in dr.csv_tables(diagnostics).items():
            written.append(_write(folder / f"run-{run_id}-{part}.csv", text))
    if "json" in formats:
        written.append(_write(folder / f"run-{run_id}-diagnostics.json", dr.json_document(diagnostics, meta=meta)))
    if "markdown" in formats:
        written.append(_write(folder / f"run-{run_id}-diagnostics.md",
                              dr.markdown(diagnostics, title=f"{title} — labels, calibration, inter-judge")))
    return written


def _writable_folder(folder: Path) -> Path:
    folder = Path(folder).expanduser()
    if folder.exists() and not folder.is_dir():
        raise ExportError(f"{folder} is a file, not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ExportError(f"{folder}: cannot create the folder: {exc.strerror}") from None
    return folder


def _write(path: Path, text: str) -> Path:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ExportError(f"{path}: cannot write: {exc.strerror}") from None
    return path


def write_text_file(path: Path, text: str) -> Path:
    """Write one export file, creating its folder; errors name the file."""
    _writable_folder(path.parent)
    return _write(path, text)
