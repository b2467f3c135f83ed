"""A judge run through a batch engine (the OpenAI Batch API, vLLM's ``run-batch``), as use cases.

:func:`write_batch` plans a run as ``judge`` would and writes its requests instead of sending them (the
run waits, status ``awaiting``); :func:`import_answers` matches an answer file's lines to the run's
judgments and scores them with the engine (core.judges.batch); :func:`retry_batch` writes the run's
failed judgments into a new batch file. Front ends import this module directly (core.api's surface
stays small).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError
from ..judges.batch.requests import (
    BatchFile,
    batch_info,
    plan_batch,
    record_files,
    start_batch_run,
    write_requests,
)
from ..judges.batch.scoring import AnswersImport
from ..judges.batch.scoring import import_answers as _import_answers
from ..judges.run.events import RunEvent, RunStatus
from ..judges.run.stopping import DEFAULT_ORDER_SEED
from ..judges.store.run_store import RunRecord, RunStore
from ..model import Dataset
from ..planning import RunPlan
from .session import Session

__all__ = ["AnswersImport", "BatchExport", "awaiting_run", "batch_lines", "batch_state", "import_answers", "retry_batch",
           "write_batch"]


@dataclass(frozen=True)
class BatchExport:
    """What :func:`write_batch` or :func:`retry_batch` wrote: the run, its files, its request count."""

    run_id: int
    files: tuple[BatchFile, ...]
    requests: int
    total: int
    #: Judgments failed before any request (a prompt longer than the judge's window), as live.
    too_long: int
    #: The run already awaited answers (the same settings written before): its unanswered part was written.
    continued: bool


def awaiting_run(session: Session, plan: RunPlan) -> RunRecord | None:
    """A run of exactly this plan written to a batch file and still awaiting answers (a live ``judge``
    of the same settings says so and continues it only when asked)."""
    with session.store() as store:
        return store.runs.find_awaiting(plan.config.fingerprint)


def batch_state(record: RunRecord) -> str | None:
    """``awaiting N of M answers`` for a batch run still waiting (None for any other run)."""
    if record.status is not RunStatus.AWAITING_ANSWERS:
        return None
    return f"awaiting {max(record.total - record.judgments, 0)} of {record.total} answers"


def write_batch(session: Session, plan: RunPlan, dataset: Dataset, out: Path, *,
                order_seed: int | None = DEFAULT_ORDER_SEED) -> BatchExport:
    """Plan ``plan`` as a live run and write its requests to ``out`` (split at the provider's limits)."""
    backends = session.backends_for(plan.config)
    with session.store() as store:
        record = store.runs.find_awaiting(plan.config.fingerprint)
        if record is not None:
            return _write_pending(store, record, dataset, backends, out, continued=True)
        batch = plan_batch(plan.config, dataset, backends, context_order_seed=order_seed)
        run_id = start_batch_run(store, batch, context_order_seed=order_seed)
        try:
            files = write_requests(batch, run_id, out)
        except BaseException:
            store.runs.delete_run(run_id)
            raise
        record_files(store, store.runs.get_run(run_id), files)
        return BatchExport(run_id, tuple(files), sum(f.requests for f in files), len(batch.wanted),
                           len(batch.too_long), continued=False)


def retry_batch(session: Session, run_id: int, dataset: Dataset, out: Path) -> BatchExport:
    """Write a batch run's failed judgments (and any still unanswered) into a new batch file."""
    with session.store() as store:
        record = store.runs.get_run(run_id)
        if batch_info(record) is None:
            raise ConfigError(f"run {run_id} was not written to a batch file; retry it live (runs retry {run_id})")
        backends = session.backends_for(record.run_config)
        store.judgments.mark_failed_for_retry(run_id)
        store.runs.set_status(run_id, RunStatus.AWAITING_ANSWERS)
        return _write_pending(store, store.runs.get_run(run_id), dataset, backends, out, continued=True)


def _write_pending(store: RunStore, record: RunRecord, dataset: Dataset, backends: dict, out: Path, *,
                   continued: bool) -> BatchExport:
    info = batch_info(record) or {}
    batch = plan_batch(record.run_config, dataset, backends, context_order_seed=info.get("context_order_seed"),
                       pending=lambda wanted: store.judgments.pending(record.id, wanted, retry_failed=True))
    files = write_requests(batch, record.id, out)
    record_files(store, record, files)
    return BatchExport(record.id, tuple(files), sum(f.requests for f in files), len(batch.wanted),
                       len(batch.too_long), continued=continued)


def import_answers(session: Session, run_id: int, paths: Sequence[Path], dataset: Dataset, *,
                   on_event: Callable[[RunEvent], None] | None = None) -> AnswersImport:
    """Import answer files into batch run ``run_id`` (repeatable, any order, partial files)."""
    with session.store() as store:
        record = store.runs.get_run(run_id)
        backends = session.backends_for(record.run_config)
        return _import_answers(store, record, dataset, paths, backends, on_event=on_event)


def batch_lines(record: RunRecord) -> dict[str, str]:
    """A batch run's files and answer imports as labelled lines (``runs show``); empty for other runs."""
    info = batch_info(record)
    if info is None:
        return {}
    files = info.get("files") or []
    lines = {"batch files": "; ".join(f"{f.get('path')} ({f.get('requests')} requests, sha256 "
                                      f"{str(f.get('sha256'))[:12]}…)" for f in files) or "–"}
    for n, entry in enumerate(info.get("imports") or [], start=1):
        models = ", ".join(f"{model} ({count})" for model, count in (entry.get("models") or {}).items()) or "–"
        lines[f"answers {n}"] = (f"{entry.get('file')} ({entry.get('lines')} lines, sha256 "
                                 f"{str(entry.get('sha256'))[:12]}…, provider {entry.get('provider')}, "
                                 f"models {models})")
    return lines
