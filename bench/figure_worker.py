"""Figure 10: one local model, one worker. The app's runs, tuning searches and Prompt lab trials go to one judge
process (core/api/run_worker.py), which keeps the judge it opened: a trial after a run (and a run after a
trial) answers without loading the model again.

With the bundled SmolLM2 judge (llama.cpp), two fresh judge processes, one after the other:

* A: a trial first (the process starts and loads the model: what a first trial costs), then a short run;
* B: a short run first (it loads the model), then the same trial: the first trial after a run.

The figures: how many times A's run and B's trial opened a judge (target 0), and the first trial after a run
against the first trial of a fresh process, as a ratio measured in one run (the same prompt; its item is not
among the run's, so neither trial finds its prompt evaluated already). Each process is ended, and waited
for, before the next starts: two llama.cpp processes computing at once would slow each other.
"""

from __future__ import annotations

import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from .common import Context, Row, at_most, equals

#: Seconds a closed judge process may take to end (it closes its model first) before the figure gives up.
END_WAIT_S = 60.0


def run(ctx: Context) -> list[Row]:
    from dialjudge.core.api import EngineOptions, Session
    from dialjudge.core.api.prompt_lab import PromptSetup, prepare_prompt, trial_request
    from dialjudge.core.api.run_worker import ask_in_worker, close_judge_worker, judge_worker, start_run_in_worker
    from dialjudge.core.api.types import RunStatus
    from dialjudge.core.config import BUNDLED_JUDGE, Config, bundled_judge
    from dialjudge.core.dataset_catalogue import open_dataset
    from dialjudge.core.judges.prompts.templates import shipped_template_dir
    from dialjudge.core.judges.store.run_store import process_is_alive
    from dialjudge.core.planning import plan_run

    judge = bundled_judge()
    config = Config(judges={BUNDLED_JUDGE: judge})
    sample = open_dataset("sample", Config())
    example = sample.examples[0]
    text = (shipped_template_dir() / "likert-1to5.toml").read_text(encoding="utf-8")
    request = trial_request(prepare_prompt(PromptSetup(text, sample, example, aspect="overall")), example.id, judge)
    limit = 3 if ctx.quick else 6
    # The run judges other items than the trial's: a trial after it is not answered from a prompt it evaluated.
    items = tuple(ex.id for ex in sample.examples[1:1 + limit])
    run_config = plan_run(sample, config, template="likert-1to5", judges=[BUNDLED_JUDGE], aspect="overall",
                          item_ids=items).config

    def timed_trial(session: Session) -> tuple[float, Any]:
        started = time.perf_counter()
        answer = ask_in_worker(session, judge, request)
        return time.perf_counter() - started, answer

    def judge_run(session: Session) -> bool:
        """A short run in the session's process; whether it had to open (load) the judge."""
        handle = start_run_in_worker(session, run_config, sample, options=EngineOptions(resume=False))
        summary = handle.run_to_end()
        assert summary.status is RunStatus.FINISHED, summary
        return bool(handle.opened_judge)

    def end_process(session: Session) -> None:
        pid = judge_worker(session).pid
        close_judge_worker(session)
        ended, deadline = threading.Event(), time.monotonic() + END_WAIT_S
        while pid is not None and process_is_alive(pid) and time.monotonic() < deadline:
            ended.wait(0.05)
        if pid is not None and process_is_alive(pid):
            raise RuntimeError(f"the judge process {pid} did not end within {END_WAIT_S:.0f} s of closing")

    with tempfile.TemporaryDirectory() as tmp:
        first = Session(config, store_path=Path(tmp) / "a.sqlite3")
        try:
            fresh_s, fresh = timed_trial(first)  # process start, model load, one answer
            run_after_trial_opened = judge_run(first)
        finally:
            end_process(first)
        second = Session(config, store_path=Path(tmp) / "b.sqlite3")
        try:
            run_first_opened = judge_run(second)
            after_run_s, after_run = timed_trial(second)
        finally:
            end_process(second)
    assert fresh.opened and run_first_opened, "each fresh process loads the model once, for its first job"
    loads_after = int(run_after_trial_opened) + int(after_run.opened)
    ctx.log(f"  fresh process: first trial {fresh_s:.2f} s (process start, model load, answer), then a run of "
            f"{limit} items (model loaded: {run_after_trial_opened}); another fresh process: a run, then the first "
            f"trial after it {after_run_s:.2f} s (model loaded: {after_run.opened}); ratio "
            f"{fresh_s / after_run_s:.1f}x")
    return [
        equals("model loads by a run after a trial and a trial after a run (one worker) [count]", loads_after, 0),
        at_most("Prompt lab first trial after a run, baseline: a trial in a fresh worker (model load) [s]",
                after_run_s, fresh_s, "s", baseline=fresh_s),
    ]
