"""Retry only the failed judgments of a run: timeouts, backend errors and unparseable answers.

A resume already asks again for failed *requests*; an answer that came back but
could not be read counts as done, and the response cache would hand the same
answer back. A retry therefore marks every judgment without a score as a failed
request, then resumes the run without the response cache: only those judgments
(and any the run never reached) are asked for, every scored judgment stays as it
is, and a new answer replaces the failure in place. The run keeps its id.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

from ...errors import ConfigError
from ...model import Dataset
from ..run.engine import RunEngine
from ..run.events import RunEvent, RunSummary
from ..run.options import EngineOptions
from ..store.run_store import RunStore
from ..types import JudgeBackend


def check_retryable(store: RunStore, run_id: int) -> None:
    """Refuse a run that has no answers of its own to retry (a rescored run)."""
    record = store.runs.get_run(run_id)
    if record.source_run is not None:
        raise ConfigError(f"run {run_id} was rescored from run {record.source_run} without a model; retry run "
                          f"{record.source_run}, then rescore it again")
    if record.kind == "imported":
        source = (record.config.get("imported") or {}).get("file", "a file")
        raise ConfigError(f"run {run_id} was imported from {source}; its judges ran elsewhere and cannot be asked "
                          "again here: score the failed items where they ran and import the file again")


async def retry_run(store: RunStore, run_id: int, dataset: Dataset, backends: Mapping[str, JudgeBackend], *,
                    on_event: Callable[[RunEvent], None] | None = None,
                    options: EngineOptions | None = None) -> RunSummary:
    """Judge again the judgments of run ``run_id`` that have no score, past the response cache (which
    holds the very answers that failed to parse); returns the run's summary."""

    check_retryable(store, run_id)
    config = store.runs.get_run(run_id).run_config
    if config.dataset != dataset.name:
        raise ConfigError(f"run {run_id} judged {config.dataset}, not {dataset.name}")
    store.judgments.mark_failed_for_retry(run_id)
    options = dataclasses.replace(options or EngineOptions(), run_id=run_id, retry_failed=True, use_cache=False)
    engine = RunEngine(config, dataset, backends, store, options)
    if on_event is not None:
        engine.subscribe(on_event)
    return await engine.run()
