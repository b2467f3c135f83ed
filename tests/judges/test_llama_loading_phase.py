"""A run of the bundled model says, before anything else can arrive, that its judge is loading."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pytest

from dialjudge.core.api import EngineOptions
from dialjudge.core.api.runs import (
    build_backends,
    execute_run,
)
from dialjudge.core.config import bundled_judge
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.judges.prompts.templates import get_template
from dialjudge.core.judges.run.config import RunConfig
from dialjudge.core.judges.run.events import JudgmentScored, RunFinished, RunPhase, RunStarted
from dialjudge.core.judges.store.run_store import RunStore
from dialjudge.core.judges.types import ScoringMode

pytestmark = pytest.mark.model


def test_the_bundled_judge_reports_its_loading_then_its_first_answer(bundled_model: Path, tmp_path: Path):
    dataset = open_dataset("sample", remember=False)
    judge = dataclasses.replace(bundled_judge(), n_threads=1, n_ctx=1024)
    config = RunConfig.build(dataset, get_template("likert-1to5"), [judge], aspect="overall", quality="overall",
                             mode=ScoringMode.LOGPROB, limit=2)
    seen: list[tuple[float, object]] = []

    class Follow:
        def on_event(self, event: object) -> None:
            seen.append((time.monotonic(), event))

    with RunStore(tmp_path / "runs.sqlite3") as store:
        summary = execute_run(config, dataset, store, build_backends(config), display=Follow(), options=EngineOptions(close_backends=True))
    assert summary.status == "finished"
    events = [event for _, event in seen]
    kinds = [type(event) for event in events]
    loading = kinds.index(RunPhase, 1)  # after "preparing 2 prompts"
    assert events[loading] == RunPhase("loading judge smollm2", judge="smollm2")
    # Nothing arrives while the model loads: the next event is the run's start, after the load.
    assert kinds[loading + 1] is RunStarted
    assert seen[loading + 1][0] > seen[loading][0]
    waiting = events[loading + 2]
    assert waiting == RunPhase("waiting for the first answer of judge smollm2", judge="smollm2")
    assert kinds[loading + 3] is JudgmentScored and kinds[-1] is RunFinished
