"""The gate's options and its printed outcome, shared by `dialjudge check` and `dialjudge eval`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from dialjudge.core.api.gate import GateRequest, GateResult, Rule, RuleOutcome, junit_xml, parse_rules

from . import render

RULES_HELP = ("Rules test the lower bound of a seeded bootstrap 95%% CI (resamples of contexts), so a judge passes "
              "only when the data show it agrees that well; the same store and --seed give the same verdict. Every "
              "judge of each run must pass every rule, unless --judge names one. Exit codes: 0 all rules hold, 1 a "
              "rule fails, 2 bad input or an unfinished run (running, awaiting, interrupted, cancelled, failed).")


def add_rule_options(p: argparse.ArgumentParser) -> None:
    """--quality, --min, --no-worse-than, --coefficient, --max-failures, --judge, the bootstrap's --bootstrap
    and --seed, --majority-ties and --junit."""
    p.add_argument("--quality", help="the human-rated quality (default: each run's own)")
    p.add_argument("--min", action="append", dest="minimums", default=[], metavar="STATISTIC=X",
                   help="the lower CI bound of STATISTIC is at least X: spearman, pearson, kendall (numeric "
                        "qualities) or kappa, agreement (label qualities; agreement as 0.8 or 80%%); repeatable")
    p.add_argument("--no-worse-than", action="append", dest="baselines", default=[], metavar="RUN",
                   help="fail when the paired test of `runs compare` finds the run significantly worse than RUN "
                        "(randomization test over contexts, p < 0.05); repeatable")
    p.add_argument("--coefficient", choices=("spearman", "pearson", "kendall"), default="spearman",
                   help="the coefficient --no-worse-than compares (default spearman)")
    p.add_argument("--max-failures", metavar="SHARE",
                   help="at most this share of a judge's judgments without a score (unparseable answers, failed "
                        "requests): 2%% or 0.02")
    p.add_argument("--judge", dest="gate_judge", metavar="NAME",
                   help="check only this judge of each run (default: every judge must pass)")
    p.add_argument("--bootstrap", type=int, default=None, metavar="N",
                   help="bootstrap resamples of contexts for every CI (default 1000; an experiment's n_boot)")
    p.add_argument("--seed", type=int, default=None, help="bootstrap seed (default 0; an experiment's seed)")
    p.add_argument("--majority-ties", choices=("exclude", "first", "published"), default="exclude",
                   help="label qualities: a tied human majority (as `dialjudge judge`)")
    p.add_argument("--junit", type=Path, metavar="FILE", help="also write the gate's outcome as JUnit XML (one "
                   "testsuite, one testcase per rule × judge × run)")


def typed_rules(args: argparse.Namespace) -> tuple[Rule, ...]:
    """The rules typed on the command line."""
    return parse_rules(args.minimums, no_worse_than=args.baselines, max_failures=args.max_failures,
                       coefficient=args.coefficient)


def gate_request(args: argparse.Namespace) -> GateRequest:
    return GateRequest(typed_rules(args), quality=args.quality, judge=args.gate_judge,
                       n_boot=1000 if args.bootstrap is None else args.bootstrap,
                       seed=0 if args.seed is None else args.seed, tie_rule=args.majority_ties)


def report_gate(args: argparse.Namespace, result: GateResult) -> int:
    """One line per check (ok or FAIL: the rule, the figure with its CI, why), the summary, the JUnit file."""
    for outcome in result.outcomes:
        print(outcome.line)
    print(result.summary)
    if _several_judges(result.outcomes) and not args.gate_judge:
        print("every judge of each run must pass each rule (--judge NAME checks one)")
    if args.junit is not None:
        render.write_output(args.junit, junit_xml(result))
        print(f"wrote {args.junit}", file=sys.stderr)
    return result.exit_code


def _several_judges(outcomes: Sequence[RuleOutcome]) -> bool:
    return len({(o.run_id, o.judge) for o in outcomes}) > len({o.run_id for o in outcomes})
