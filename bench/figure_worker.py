"""Figure 9: one local model, one worker. The app's runs and Prompt lab trials go to one judge process
(core/api/run_worker.py), which keeps the judge it opened: a trial after a run (and a run after a trial)
answers without loading the model again.

With the bundled SmolLM2 judge: a first trial (the worker starts and loads the model), a short run, and a
trial after it. The figures: how many times the run and the second trial opened a judge (target 0), and the
second trial's seconds against the first's.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from .common import Context, Row, at_most, equals


def run(ctx: Context) -> list[Row]:
    from dialjudge.core.api import (
        EngineOptions,
        Session,
    )
    from dialjudge.core.api.prompt_lab import PromptSetup, prepare_prompt, trial_request
    from dialjudge.core.api.run_worker import ask_in_worker, close_judge_worker, start_run_in_worker
    from dialjudge.core.api.types import RunStatus
    from dialjudge.core.config import BUNDLED_JUDGE, Config, bundled_judge
    from dialjudge.core.dataset_catalogue import open_dataset
    from dialjudge.core.judges.prompts.templates import shipped_template_dir
    from dialjudge.core.planning import plan_run

    judge = bundled_judge()
    config = Config(judges={BUNDLED_JUDGE: judge})
    sample = open_dataset("sample", Config())
    example = sample.examples[0]
    text = (shipped_template_dir() / "likert-1to5.toml").read_text(encoding="utf-8")
    request = trial_request(prepare_prompt(PromptSetup(text, sample, example, aspect="overall")), example.id, judge)
    limit = 3 if ctx.quick else 6
    run_config = plan_run(sample, config, template="likert-1to5", judges=[BUNDLED_JUDGE], aspect="overall",
                          limit=limit).config
    with tempfile.TemporaryDirectory() as tmp:
        session = Session(config, store_path=Path(tmp) / "runs.sqlite3")
        try:
            started = time.perf_counter()
            first = ask_in_worker(session, judge, request)
            first_s = time.perf_counter() - started
            handle = start_run_in_worker(session, run_config, sample, options=EngineOptions(resume=False))
            summary = handle.run_to_end()
            assert summary.status is RunStatus.FINISHED, summary
            started = time.perf_counter()
            second = ask_in_worker(session, judge, request)
            second_s = time.perf_counter() - started
        finally:
            close_judge_worker(session)
    loads_after = int(bool(handle.opened_judge)) + int(second.opened)
    ctx.log(f"  first trial {first_s:.2f} s (model loaded: {first.opened}); run of {limit} items (model loaded: "
            f"{handle.opened_judge}); trial after it {second_s:.2f} s (model loaded: {second.opened})")
    return [
        equals("model loads by a run after a trial and a trial after the run (one worker) [count]", loads_after, 0),
        at_most("Prompt lab trial after a run, baseline: the first trial (model loaded) [s]", second_s, first_s, "s",
                baseline=first_s),
    ]
