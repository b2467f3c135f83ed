"""A self-contained HTML report of one or more stored runs: ``dialjudge report``, ``runs export --format
html`` and the app's export write it here.

Every figure in it comes from the use case that computes it for the terminal, with the same request:
the agreement tables with CIs, n and the human ceiling (:func:`.reports.run_reports`, as ``dialjudge
judge`` prints them), the leaderboard of several runs (:func:`.leaderboards.leaderboard`), the paired
verdict of two runs (:func:`.comparison.compare`), discernment on adversarial items
(:func:`.reports.discernment`) and the review queue's flags (:func:`.review.review_data`). This module
gathers them; :mod:`.html_report_sections` lays them out and :mod:`dialjudge.core.reports_html` writes
the page (escaping, charts, the item table's data and script, the Content Security Policy).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ... import __version__
from ..config import Config
from ..dataset_catalogue import open_dataset
from ..errors import ConfigError, DialjudgeError
from ..evaluation import resolve_quality
from ..judges.store.run_store import RunRecord, RunStore
from ..model import Dataset, Example
from ..planning import RunPlan, infer_quality
from ..reports_html import escape
from ..reports_html.items import ItemColumns, item_table
from ..reports_html.page import Section, page
from ..review_queue import human_unit
from ..run_columns import POOL
from ..run_export import FORMAT_LABELS, REPORT_FORMAT, ExportError, ExportResult
from . import comparison as _comparison
from . import html_report_sections as _sections
from . import leaderboards as _leaderboards
from . import reports as _reports
from . import review as _review
from . import stored as _stored
from .leaderboard_types import LeaderboardRequest
from .requests import AgreementRequest, CompareRequest, ExportRequest
from .session import Session

#: The export format key (core.run_export.FORMAT_LABELS).
HTML_FORMAT = REPORT_FORMAT


@dataclass(frozen=True)
class HtmlReportRequest:
    """Which runs (one dataset), where to write, against which quality and with what resampling."""

    run_ids: tuple[int, ...]
    #: The file to write (None: only the text, for a front end that prints it).
    output: Path | None = None
    #: The human-rated quality the judges are set against; None: the first run's quality, else the
    #: dataset's overall quality.
    quality: str | None = None
    #: The dataset's name or path, when the runs' recorded one is not where it was.
    dataset: str | None = None
    #: The reference-based metrics join the judges in the tables, as ``dialjudge judge`` shows them.
    metrics: bool = True
    n_boot: int = 1000
    seed: int = 0

    def __post_init__(self) -> None:
        if not self.run_ids:
            raise ConfigError("name at least one run to report on")
        repeated = sorted({r for r in self.run_ids if self.run_ids.count(r) > 1})
        if repeated:
            raise ConfigError(f"run {repeated[0]} is named twice")
        if self.n_boot < 0:
            raise ConfigError(f"--bootstrap must be at least 0, not {self.n_boot}")


@dataclass(frozen=True)
class HtmlReportResult:
    """What was written: the file, its size, the sections it holds, its items and its charts' weight."""

    path: Path | None
    bytes_written: int
    sections: tuple[str, ...]
    items: int
    chart_bytes: int
    text: str = dataclasses.field(default="", repr=False)


def write_html_report(session: Session, request: HtmlReportRequest, *, current: Dataset | None = None
                      ) -> HtmlReportResult:
    """Write the report to ``request.output`` (``current``: the runs' dataset, when already open)."""
    with session.store() as store:
        return report_on_store(store, request, session.config, current=current)


def report_on_store(store: RunStore, request: HtmlReportRequest, app_config: Config | None = None, *,
                    current: Dataset | None = None) -> HtmlReportResult:
    """The report of ``request`` on an open store; written to ``request.output`` when it names a file."""
    config = app_config or Config()
    records = [store.runs.get_run(run_id) for run_id in request.run_ids]
    first = records[0]
    for record in records[1:]:
        _stored.same_dataset(first.run_config, record.run_config, first.id, record.id)
    dataset = _dataset_of(request, first, config, current)
    quality = _quality_of(request, dataset, first)
    agreement_request = AgreementRequest(include_metrics=request.metrics, n_boot=request.n_boot, seed=request.seed)

    runs: list[_sections.RunPart] = []
    for record in records:
        run_config = dataclasses.replace(record.run_config, quality=quality)
        plan = RunPlan(run_config, quality, run_config.subset)
        reports = _reports.run_reports(store, plan, dataset, [record.id], agreement_request, for_file=True)
        queue = _review.review_data(store, record.id, lambda _config: dataset).queue
        runs.append(_sections.RunPart(record, reports, queue))

    # The findings first (agreement, ranking, verdict, charts), then the items, then how they were made.
    built: list[Section | None] = [_sections.agreement_section(dataset, runs)]
    if len(runs) > 1:
        built.append(_sections.leaderboard_section(_leaderboard_of(store, request, first, quality, config)))
    if len(runs) == 2:
        built.append(_sections.paired_section(_comparison_of(store, request, quality, config, dataset)))
    charts, chart_bytes = _sections.charts_section(dataset, quality, runs, human_of=human_unit)
    built.append(charts)
    if any(ex.is_adversarial for ex in dataset):
        built.append(_sections.discernment_section(dataset, runs))
    columns, examples = _item_columns(dataset, runs)
    table = item_table(examples, quality, columns)
    built.append(_sections.items_section(len(examples)))
    built.append(_sections.settings_section(dataset, quality, runs, n_boot=request.n_boot, seed=request.seed,
                                            metrics=request.metrics))
    sections = [s for s in built if s is not None]

    names = ", ".join(str(r.id) for r in records)
    title = f"dialjudge report — {dataset.name}"
    subtitle = f"{quality or 'no quality'} · run{'s' if len(records) > 1 else ''} {names}"
    written = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    text = page(title, subtitle, sections, escape.script_json(table),
                footer=f"Written by dialjudge {__version__} on {written}. Self-contained: this file fetches "
                       "nothing; its data, charts and script are inside it.")
    data = text.encode("utf-8")
    path = None if request.output is None else _write(Path(request.output), data)
    return HtmlReportResult(path, len(data), tuple(s.id for s in sections), len(examples), chart_bytes, text)


def _dataset_of(request: HtmlReportRequest, record: RunRecord, config: Config, current: Dataset | None) -> Dataset:
    run_config = record.run_config
    if request.dataset is None:
        return _stored.dataset_of_run(run_config, config, current=current)
    dataset = open_dataset(request.dataset, config, remember=False)
    if dataset.name != run_config.dataset:
        raise ConfigError(f"--dataset {request.dataset} is {dataset.name}, but run {record.id} judged "
                          f"{run_config.dataset}")
    return dataset


def _quality_of(request: HtmlReportRequest, dataset: Dataset, record: RunRecord) -> str | None:
    """The quality asked for (in the dataset's spelling), else the run's, else the dataset's overall one."""
    run_config = record.run_config
    if request.quality is not None:
        quality = resolve_quality(dataset, request.quality)
        if quality not in dataset.qualities:
            raise ConfigError(f"--quality {request.quality}: {dataset.name} has no such quality "
                              f"(qualities: {', '.join(dataset.qualities) or 'none'})")
        return quality
    if run_config.quality in dataset.qualities:
        return run_config.quality
    return infer_quality(dataset, aspect=run_config.aspect, kpi=run_config.kpi)


def _leaderboard_of(store: RunStore, request: HtmlReportRequest, first: RunRecord, quality: str | None,
                    config: Config) -> _leaderboards.Leaderboard | str:
    """The runs ranked (``dialjudge leaderboard``'s table), or why there is none."""
    if quality is None:
        return "no leaderboard: the dataset has no human-rated quality"
    name = request.dataset or first.run_config.dataset_path or first.run_config.dataset
    board_request = LeaderboardRequest(name, quality, request.run_ids, metrics=request.metrics,
                                       n_boot=request.n_boot, seed=request.seed)
    try:
        return _leaderboards.leaderboard(store, board_request, config)
    except DialjudgeError as exc:
        return f"no leaderboard: {exc}"


def _comparison_of(store: RunStore, request: HtmlReportRequest, quality: str | None, config: Config,
                   dataset: Dataset) -> _sections.Comparison:
    run_a, run_b = request.run_ids
    compare_request = CompareRequest(run_a, run_b, qualities=(quality,) if quality else (),
                                     paired_boot=request.n_boot, seed=request.seed)
    try:
        return _comparison.compare(store, compare_request, config, current=dataset)
    except DialjudgeError as exc:
        return f"no paired comparison: {exc}"


def _item_columns(dataset: Dataset, runs: Sequence[_sections.RunPart]) -> tuple[ItemColumns, list[Example]]:
    """The item table's extra columns (judges, metrics, raw answers, flags) and its items: every item
    a run judged, in the dataset's order."""
    several = len(runs) > 1
    judges: dict[str, Mapping[str, float | None]] = {}
    raw: dict[str, dict[str, str]] = {}
    flags: dict[str, list[str]] = {}
    findings: dict[str, list[str]] = {}
    judged: set[str] = set()
    metrics: dict[str, Mapping[str, float | None]] = {}
    for part in runs:
        reports, run_id = part.reports, part.record.id
        if reports.pairwise is not None:
            continue  # pair orders, not items: the pairwise report's own table says how they went
        for name, column in reports.scores.items():
            judges[_label(name, run_id, several)] = column
            judged.update(column)
        for name, by_item in reports.judgments.items():
            raw[_label(name, run_id, several)] = {item: j.raw_output if j.score is not None or not j.error
                                                  else f"{j.raw_output} [{j.error}]".strip()
                                                  for item, j in by_item.items()}
        agreement = reports.agreement
        if agreement is not None and not metrics:
            metrics = {name: column for name, column in agreement.scores.items()
                       if name not in reports.scores and name != POOL}
        for case in part.queue:
            prefix = f"run {run_id}: " if several else ""
            flags.setdefault(case.item_id, []).extend(prefix + r for r in dict.fromkeys(f.kind.label
                                                                                        for f in case.flags))
            findings.setdefault(case.item_id, []).extend(prefix + f.text for f in case.flags)
    examples = [ex for ex in dataset.examples if ex.id in judged]
    columns = ItemColumns(judges=judges, metrics=metrics, raw=raw, flags=flags,
                          findings={item: "\n".join(lines) for item, lines in findings.items()})
    return columns, examples


def _label(name: str, run_id: int, several: bool) -> str:
    return f"run {run_id} · {name}" if several else name


def _write(path: Path, data: bytes) -> Path:
    """Written beside ``path`` and moved there once whole, so a failed write leaves no half report."""
    path = path.expanduser()
    if path.is_dir():
        raise ExportError(f"{path} is a folder; give the report a file name (report.html)")
    partial = path.with_name(path.name + ".part")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial.write_bytes(data)
        partial.replace(path)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise ExportError(f"{path}: cannot write: {exc.strerror}") from None
    return path


# -- the report as one more export format (``runs export --to``, the app's Runs screen) -------------

def export_files(store: RunStore, request: ExportRequest, app_config: Config | None = None, *,
                 current: Dataset | None = None) -> ExportResult:
    """What ``export`` writes, with the HTML report among the formats: the report through
    :func:`report_on_store`, every other format through :func:`.stored.export`."""
    formats = request.formats or tuple(FORMAT_LABELS)
    others = tuple(f for f in formats if f != HTML_FORMAT)
    paths: list[Path] = []
    if others:
        paths += _stored.export(store, dataclasses.replace(request, formats=others), app_config,
                                current=current).paths
    if HTML_FORMAT in formats:
        folder = Path(request.folder).expanduser()
        if folder.exists() and not folder.is_dir():
            raise ExportError(f"{folder} is a file, not a folder")
        report = HtmlReportRequest((request.run_id,), folder / f"run-{request.run_id}-report.html",
                                   metrics=request.metric_scores is not None, n_boot=request.n_boot,
                                   seed=request.seed)
        written = report_on_store(store, report, app_config, current=current).path
        assert written is not None
        paths.append(written)
    return ExportResult(request.run_id, tuple(paths))


__all__ = ["HTML_FORMAT", "HtmlReportRequest", "HtmlReportResult", "export_files", "report_on_store",
           "write_html_report"]
