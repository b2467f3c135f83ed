"""Coverage and width of the few-labels intervals on simulated judges of set quality.

    PYTHONPATH=src python -m bench.label_estimates               # the full run (about a minute)
    PYTHONPATH=src python -m bench.label_estimates --replicates 500 --json out.json

For each design, ``replicates`` independent samples of ``n`` labelled and ``N``
judge-only items (core/stats/label_simulation.py); the truth is the population
mean, so coverage is the share of 95% intervals that hold it (nominal 95%; its
Monte-Carlo standard error is printed beside it). The reduced, seeded version of
these checks is tests/core/test_stats_label_estimates.py.
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
    args = parser.parse_args(argv)
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


if __name__ == "__main__":
    sys.exit(main())
