"""Figure 11: the app's metrics computed while its local judge runs. The app scores metrics in its compute process
and judges in its judge process (core/api/compute_worker.py, core/api/run_worker.py); while the compute process
computes, the judge process's llama.cpp computes with the cores it leaves (``LlamaBackend.share_cores``), since
llama.cpp's threads spin while they wait and two computations on the same cores slow each other many times over.

Measured in one session with the bundled SmolLM2 judge (loaded once, before anything is timed) and 10,000
distinct (candidate, reference) pairs (the sample's, each candidate with a word of its own, so no pair is
scored from another's result): the metrics alone, a judge run alone, and both started together (until both are
done), best of three each, interleaved. Target: together no slower than one after the other (the sum of the
two alone). Logged, not a target: one run together with the sharing switched off (the judge on every core
throughout), to show what the sharing is for.
"""

from __future__ import annotations

import dataclasses
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from .common import Context, Row, at_most

PAIRS, QUICK_PAIRS = 10_000, 2_000
#: Items the judge run judges (about as long as the metrics alone on 2 cores).
JUDGED, QUICK_JUDGED = 24, 6
REPEATS, QUICK_REPEATS = 3, 1


def distinct_pairs(n: int) -> Any:
    """``n`` examples of the bundled sample that have references (the others are not scored), each candidate
    ending in a word of its own."""
    from dialjudge.core.metrics.batch import plan_pairs

    from .datasets import big_dataset

    dataset = big_dataset(2 * n)
    pairs, _skipped = plan_pairs(dataset.examples)
    paired = {pair.example_id for pair in pairs}
    scorable = [ex for ex in dataset.examples if ex.id in paired][:n]
    assert len(scorable) == n, "the sample has too few examples with references"
    examples = [dataclasses.replace(ex, candidate=f"{ex.candidate} (take {i})") for i, ex in enumerate(scorable)]
    return dataclasses.replace(dataset, name=f"pairs-{n}", examples=examples)


def run(ctx: Context) -> list[Row]:
    from dialjudge.core.api import EngineOptions, Session
    from dialjudge.core.api import compute_worker as compute_module
    from dialjudge.core.api.compute_worker import close_compute_worker, score_metrics_in_worker
    from dialjudge.core.api.run_worker import close_judge_worker, start_run_in_worker
    from dialjudge.core.api.types import RunStatus
    from dialjudge.core.config import BUNDLED_JUDGE, Config, bundled_judge
    from dialjudge.core.dataset_catalogue import open_dataset
    from dialjudge.core.planning import plan_run

    n_pairs = QUICK_PAIRS if ctx.quick else PAIRS
    n_judged = QUICK_JUDGED if ctx.quick else JUDGED
    repeats = QUICK_REPEATS if ctx.quick else REPEATS
    config = Config(judges={BUNDLED_JUDGE: bundled_judge()})
    sample = open_dataset("sample", Config())
    pairs = distinct_pairs(n_pairs)
    run_config = plan_run(sample, config, template="likert-1to5", judges=[BUNDLED_JUDGE], aspect="overall",
                          item_ids=tuple(ex.id for ex in sample.examples[:n_judged])).config
    # Every repeat asks the model again: no answer from the response cache, a new run each time.
    options = EngineOptions(resume=False, use_cache=False)

    def metrics(session: Session) -> float:
        started = time.perf_counter()
        scores = score_metrics_in_worker(session, pairs)
        assert scores.n_scored == n_pairs, f"{scores.n_scored} of {n_pairs} pairs scored"
        return time.perf_counter() - started

    def judging(session: Session) -> float:
        started = time.perf_counter()
        summary = start_run_in_worker(session, run_config, sample, options=options).run_to_end()
        assert summary.status is RunStatus.FINISHED and summary.done == n_judged, summary
        return time.perf_counter() - started

    def together(session: Session) -> float:
        started = time.perf_counter()
        judge_thread = threading.Thread(target=judging, args=(session,), name="judge run")
        judge_thread.start()
        metrics(session)
        judge_thread.join()
        return time.perf_counter() - started

    alone_m: list[float] = []
    alone_j: list[float] = []
    both: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        session = Session(config, store_path=Path(tmp) / "runs.sqlite3")
        try:
            # Not timed: the model's load, the dataset's crossing to the compute process, the metrics' imports.
            judging(session)
            metrics(session)
            for _ in range(repeats):
                alone_m.append(metrics(session))
                alone_j.append(judging(session))
                both.append(together(session))
            unshared = None
            if not ctx.quick:
                real = compute_module.share_cores_with_judges
                compute_module.share_cores_with_judges = lambda session, taken: None  # type: ignore[assignment]
                try:
                    unshared = together(session)
                finally:
                    compute_module.share_cores_with_judges = real  # type: ignore[assignment]
        finally:
            close_judge_worker(session)
            close_compute_worker(session)
    best_m, best_j, best_both = min(alone_m), min(alone_j), min(both)
    ctx.log(f"  metrics on {n_pairs:,} pairs alone {', '.join(f'{t:.1f}' for t in alone_m)} s; judge run of "
            f"{n_judged} items alone {', '.join(f'{t:.1f}' for t in alone_j)} s; together "
            f"{', '.join(f'{t:.1f}' for t in both)} s"
            + (f"; together without sharing the cores {unshared:.1f} s" if unshared is not None else ""))
    return [
        at_most(f"metrics on {n_pairs:,} pairs while a {n_judged}-item local judge run goes on, baseline: one "
                "after the other (best of each) [s]", best_both, best_m + best_j, "s", baseline=best_m + best_j),
    ]
