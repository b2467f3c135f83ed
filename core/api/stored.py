"""Stored runs: listing, details with cost and latency, judge columns, rescoring, exporting, deleting.

Every function takes an open :class:`RunStore`; the command line opens one per
command, the app one per worker. A run's dataset is opened again from what the
run recorded (:func:`dataset_of_run`) unless the caller already has it open.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import Config
from ..dataset_catalogue import open_dataset
from ..errors import ConfigError, DialjudgeError
from ..judges.post_run.cost import RunUsage, run_usage
from ..judges.post_run.rescore import RescoreResult, RescoreSettings, rescore_run, settings_from_options
from ..judges.run.config import RunConfig
from ..judges.store.run_store import JudgmentPage, RunRecord, RunStore, ScoreColumns
from ..judges.types import Judgment
from ..model import Dataset
from ..run_columns import run_scores
from ..run_export import FORMAT_LABELS, REPORT_FORMAT, ExportResult, export_run, write_judgments
from .requests import ExportRequest, RescoreRequest


def list_runs(store: RunStore, *, dataset: str | None = None) -> list[RunRecord]:
    """Every stored run, newest first (of ``dataset`` only, when given); a ``running`` run whose process is
    gone is marked ``interrupted`` first."""
    store.locks.mark_dead_runs_interrupted()
    runs = store.runs.list_runs()
    if dataset is not None:
        runs = [r for r in runs if r.run_config.dataset == dataset]
    return runs


def dataset_of_run(config: RunConfig, app_config: Config | None = None, *, current: Dataset | None = None
                   ) -> Dataset:
    """The dataset a run judged: ``current`` when it is that one, else opened again (not remembered
    as a recent file: reading a run is not opening a set)."""
    if current is not None and current.name == config.dataset:
        return current
    return open_dataset(config.dataset_path or config.dataset, app_config, remember=False)


@dataclass(frozen=True)
class RunDetails:
    """One stored run: its record and its cost and latency per judge."""

    record: RunRecord
    usage: RunUsage

    @property
    def source_changes(self) -> dict[str, Any]:
        """What a rescoring changed (empty for a run that was judged)."""
        changed = dict(self.record.config.get("rescore") or {})
        return {k: v for k, v in changed.items() if v is not None and k != "source_run"}


def run_details(store: RunStore, run_id: int, app_config: Config) -> RunDetails:
    record = store.runs.get_run(run_id)
    return RunDetails(record, run_usage(store, record, app_config.prices))


def usage_of_run(store: RunStore, run_id: int, app_config: Config) -> RunUsage:
    """A run's tokens, wall time, throughput and estimated cost, per judge."""
    return run_usage(store, run_id, app_config.prices)


def judge_columns(store: RunStore, run_id: int) -> tuple[str, dict[str, dict[str, float | None]]]:
    """A stored run's dataset name and its judges as evaluator columns (0-1 scores; None: failed)."""
    dataset = store.runs.get_run(run_id).run_config.dataset
    scores, _ = run_scores(store, run_id, with_pool=False)
    return dataset, scores


# -- a large run read in parts (what a screen shows, what statistics take) -------------------

def judgment_page(store: RunStore, run_id: int, *, offset: int = 0, limit: int = 100, judge: str | None = None,
                  repeat: int | None = None) -> JudgmentPage:
    """``limit`` of a run's judgments from the ``offset``-th, ordered by item id, judge and repeat,
    with the run's total (narrowed to one judge or one repeat when given). Reads only that page."""
    return store.judgments.judgment_page(run_id, offset=offset, limit=limit, judge=judge, repeat=repeat)


def judgments_of_items(store: RunStore, run_id: int, item_ids: Iterable[str], *, repeat: int | None = 0
                       ) -> dict[str, dict[str, list[Judgment]]]:
    """The judgments of the given items only (the rows on screen), ``{item_id: {judge: [by repeat]}}``;
    ``repeat`` None: every repeat. Items the run has no judgment of are absent."""
    return store.judgments.judgments_for_items(run_id, item_ids, repeat=repeat)


def score_columns(store: RunStore, run_id: int, *, repeat: int = 0) -> dict[str, ScoreColumns]:
    """A run's scores per judge as numpy arrays in item-id order (NaN: failed), for statistics,
    with no Judgment object per row."""
    return store.judgments.score_columns(run_id, repeat=repeat)


def write_judgments_file(store: RunStore, run_id: int, path: Path, fmt: str) -> int:
    """Stream a run's judgments into one CSV (``fmt`` "csv") or JSON Lines ("jsonl") file, the bytes
    ``runs export`` prints; returns how many. No judgment list is held in memory."""
    store.runs.get_run(run_id)
    if not store.judgments.count_judgments(run_id):
        raise DialjudgeError(f"run {run_id} has no judgments")
    return write_judgments(store, run_id, Path(path), fmt)


def rescore_settings(request: RescoreRequest, app_config: Config) -> RescoreSettings:
    """What to change, from what a user typed; a request that changes nothing is refused."""
    if request.empty:
        raise DialjudgeError("say what to change: top-K, mode, template or answer mapping")
    return settings_from_options(top_k=request.top_k, mode=request.mode, template=request.template,
                                 mapping=request.mapping, name=request.name,
                                 template_dirs=app_config.template_dirs)


def rescore(store: RunStore, run_id: int, request: RescoreRequest, app_config: Config, *,
            current: Dataset | None = None) -> tuple[RescoreResult, RescoreSettings]:
    """Score run ``run_id``'s stored answers again into a new run, without calling a model."""
    settings = rescore_settings(request, app_config)
    dataset = dataset_of_run(store.runs.get_run(run_id).run_config, app_config, current=current)
    return rescore_run(store, run_id, dataset, settings), settings


def export(store: RunStore, request: ExportRequest, app_config: Config | None = None, *,
           current: Dataset | None = None) -> ExportResult:
    """Write a run's agreement tables (the human ceiling on the items its judges are compared on)
    and judgments into ``request.folder``."""
    config = store.runs.get_run(request.run_id).run_config
    dataset = dataset_of_run(config, app_config, current=current)
    # The HTML report is written by core/api/html_report.export_files, which calls this for the rest.
    formats = request.formats or tuple(f for f in FORMAT_LABELS if f != REPORT_FORMAT)
    return export_run(store, request.run_id, dataset, request.folder, formats, extra_scores=request.metric_scores,
                      n_boot=request.n_boot, seed=request.seed)


def judgment_rows(store: RunStore, run_id: int) -> tuple[RunRecord, list[dict[str, Any]]]:
    """A run's per-item judgments as flat rows (what ``runs export --format`` writes)."""
    record = store.runs.get_run(run_id)
    rows = store.judgments.export_rows(run_id)
    if not rows:
        raise DialjudgeError(f"run {run_id} has no judgments")
    return record, rows


def delete(store: RunStore, run_id: int) -> None:
    if not store.runs.delete_run(run_id):
        raise DialjudgeError(f"no run {run_id}")


def environment_lines(environment: Mapping[str, Any]) -> dict[str, str]:
    """Where each local model ran, and the library versions, as recorded when the run started."""
    lines = {f"{name} runs on": str(info.get("where", "–"))
             for name, info in dict(environment.get("judges") or {}).items()}
    versions = environment.get("versions") or {}
    if versions:
        lines["versions"] = ", ".join(f"{name} {version}" for name, version in versions.items())
    return lines


def same_dataset(config_a: RunConfig, config_b: RunConfig, run_a: int, run_b: int) -> None:
    if config_a.dataset != config_b.dataset:
        raise ConfigError(f"run {run_a} judged {config_a.dataset} and run {run_b} {config_b.dataset}; "
                          "only runs on the same dataset can be compared")
