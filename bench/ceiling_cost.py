"""What the human ceiling's CI costs on a large dataset, as ratios measured in one run.

    PYTHONPATH=src python -m bench.ceiling_cost                 # 100,000 items in 25,000 contexts
    PYTHONPATH=src python -m bench.ceiling_cost --items 20000

bench/datasets.py's big dataset has one pooled rating per item, so this draws its own: three
annotators on a 1-5 scale (core.simulation, the calibration's design) rating every item, 4
candidates per context. Timed, best of ``--repeats``: the ceiling without a CI (``n_boot=0``), the
ceiling with its CI (1,000 resamples: above ``CEILING_CI_MAX_ITEMS`` items an m-out-of-n bootstrap),
and, for scale, one judge's correlation with its CI on the same items (``correlate``, what a report
computes for every evaluator).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from typing import Any, Callable

from bench.calibration import LABELS, ceiling_examples
from dialjudge.core.simulation import simulate
from dialjudge.core.stats.ceiling import human_ceiling
from dialjudge.core.stats.ceiling_ci import CEILING_CI_MAX_ITEMS
from dialjudge.core.stats.correlation import correlate


def best_of(repeats: int, work: Callable[[], Any]) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ceiling_cost", description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    m = 4
    batch = simulate(replace(LABELS, n_contexts=args.items // m, n_candidates=m), 1, seed=7)
    examples = ceiling_examples(batch, 0)
    groups = [ex.group_id for ex in examples]
    human = batch.human[0].tolist()
    judge = batch.judge_a[0].tolist()
    human_ceiling(examples[:100], "q")  # imports and first-call costs out of the timings
    without = best_of(args.repeats, lambda: human_ceiling(examples, "q", n_boot=0))
    with_ci = best_of(args.repeats, lambda: human_ceiling(examples, "q", n_boot=1000))
    one_judge = best_of(args.repeats, lambda: correlate(judge, human, groups, n_boot=1000))
    ceiling = human_ceiling(examples, "q", n_boot=1000)
    print(f"{len(examples)} items in {len(examples) // m} contexts, 3 annotators; CI above {CEILING_CI_MAX_ITEMS} "
          f"items: {ceiling.interval.method if ceiling.interval else '-'}")
    print(f"ceiling without CI      {without:8.2f} s")
    print(f"ceiling with CI         {with_ci:8.2f} s   the CI adds {with_ci - without:.2f} s "
          f"({(with_ci - without) / without:.2f}x the ceiling alone)")
    print(f"one judge's r/rho/tau + CI {one_judge:5.2f} s   the ceiling's CI costs "
          f"{(with_ci - without) / one_judge:.2f}x one judge's correlation")
    print(f"ceiling: r {ceiling.text('pearson')}, rho {ceiling.text('spearman')}, tau {ceiling.text('kendall')}; "
          f"{ceiling.n_text()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
