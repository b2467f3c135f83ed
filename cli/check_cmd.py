"""`dialjudge check`: a CI gate over stored runs (or an experiment file's runs).

Exit 0 when every rule holds for every judge checked, 1 when one fails (one line per failing rule: the
rule, the figure with its CI, why), 2 on bad input or an unfinished run. ``--junit FILE`` writes the
outcome as JUnit XML for a CI's test report.
"""

from __future__ import annotations

import argparse

from dialjudge.core.api.gate import check_runs
from dialjudge.core.errors import ConfigError

from . import eval_cmd
from .gate_view import RULES_HELP, add_rule_options, gate_request, report_gate


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("check", help="a CI gate: exit 1 when a judge's agreement with the humans is too low",
                       description="Test rules on stored runs. " + RULES_HELP)
    p.add_argument("targets", nargs="+", metavar="RUN|EXPERIMENT",
                   help="run ids, or one experiment file (the runs `dialjudge eval` made of it, and its [gate] "
                        "rules followed by any given here)")
    add_rule_options(p)
    p.set_defaults(handler=run_check)


def run_check(args: argparse.Namespace) -> int:
    if len(args.targets) == 1 and not args.targets[0].strip().isdigit():
        return eval_cmd.check_experiment(args, args.targets[0])
    run_ids = [_run_id(t) for t in args.targets]
    return report_gate(args, check_runs(args.session, run_ids, gate_request(args)))


def _run_id(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ConfigError(f"{text!r} is not a run id; give run ids, or one experiment file") from None
