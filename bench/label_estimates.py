"""Coverage and width of the few-labels intervals on simulated judges of set quality.

    PYTHONPATH=src python -m bench.label_estimates               # the full run (about a minute)
    PYTHONPATH=src python -m bench.label_estimates --replicates 500 --json out.json
    PYTHONPATH=src python -m bench.label_estimates --run 3 --draws 300   # repeated draws on a stored run

For each design, ``replicates`` independent samples of ``n`` labelled and ``N``
judge-only items (core/stats/label_simulation.py); the truth is the population
mean, so coverage is the share of 95% intervals that hold it (nominal 95%; its
Monte-Carlo standard error is printed beside it). The reduced, seeded version of
these checks is tests/core/test_stats_label_estimates.py.

With ``--run N`` it checks a stored run on a fully labelled dataset instead: ``--draws``
draws of ``--labelled`` labels (seeds 0, 1, ...) and how often each interval holds the
mean of every label. That mean is a finite population's (the labelled items are drawn
without replacement and the judge-only items are the rest), so the intervals, built for
a sample from a large population, are conservative there.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dialjudge.core.stats.label_simulation import BinaryJudge, GradedJudge, Judge, coverage

DESIGNS: list[tuple[str, Judge, list[str], int, int]] = [
    ("graded, judge r=0.9", GradedJudge(0.9), ["labels only", "PPI++"], 50, 500),
    ("graded, judge r=0.8", GradedJudge(0.8), ["labels only", "PPI++"], 50, 500),
    ("graded, judge r=0.8, biased +0.7", GradedJudge(0.8, judge_bias=0.7), ["labels only", "PPI++"], 50, 500),
    ("graded, judge r=0.5", GradedJudge(0.5), ["labels only", "PPI++"], 50, 500),
    ("graded, judge r=0 (useless)", GradedJudge(0.0), ["labels only", "PPI++"], 50, 500),
    ("graded, judge r=0.8, 360 items", GradedJudge(0.8), ["labels only", "PPI++"], 50, 310),
    ("pass/fail, sens 0.85 spec 0.8", BinaryJudge(), ["labels only", "PPI++", "Rogan–Gladen"], 50, 500),
    ("pass/fail, sens 0.85 spec 0.8", BinaryJudge(), ["labels only", "PPI++", "Rogan–Gladen"], 100, 1000),
    ("pass/fail, sens 0.95 spec 0.95", BinaryJudge(0.6, 0.95, 0.95), ["labels only", "PPI++", "Rogan–Gladen"], 100,
     1000),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicates", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--run", type=int, help="check a stored run instead of the simulations")
    parser.add_argument("--draws", type=int, default=300)
    parser.add_argument("--labelled", type=int, default=50)
    args = parser.parse_args(argv)
    if args.run is not None:
        return stored_run(args.run, args.draws, args.labelled)
    rows = []
    print(f"{'design':36} {'n':>4} {'N':>5} {'estimator':14} {'coverage':>15} {'mean width':>10}")
    for label, judge, estimators, n, big_n in DESIGNS:
        for r in coverage(judge, estimators, n_labelled=n, n_unlabelled=big_n, replicates=args.replicates,
                          seed=args.seed):
            cov = f"{r.coverage:.3f} ± {r.coverage_se:.3f}"
            print(f"{label:36} {n:>4} {big_n:>5} {r.estimator:14} {cov:>15} {r.mean_width:>10.3f}"
                  + (f"  ({r.undefined} without an interval)" if r.undefined else ""))
            rows.append({"design": label, "n_labelled": n, "n_unlabelled": big_n, **r.to_dict()})
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return 0


def stored_run(run_id: int, draws: int, labelled: int) -> int:
    import numpy as np

    from dialjudge.core.api import labels_estimates as le
    from dialjudge.core.config import load_config
    from dialjudge.core.judges.store.run_store import RunStore

    config = load_config()
    hits: dict[tuple[str, str], list[bool]] = {}
    widths: dict[tuple[str, str], list[float]] = {}
    with RunStore() as store:
        dataset = le.load_run(store, run_id, app_config=config).dataset
        for seed in range(draws):
            for report in le.estimate_for_run(store, run_id, labelled=labelled, seed=seed, n_boot=200,
                                              dataset=dataset, app_config=config):
                assert report.reference is not None
                for e in report.estimates:
                    hits.setdefault((report.judge, e.method), []).append(e.covers(report.reference))
                    widths.setdefault((report.judge, e.method), []).append(e.width)
    for (judge, method), held in hits.items():
        print(f"run {run_id} {judge:12} {method:14} {labelled} labels, {draws} draws: coverage "
              f"{np.mean(held):.3f}, mean width {np.mean(widths[(judge, method)]):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
