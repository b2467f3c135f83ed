"""`dialjudge eval EXPERIMENT`: run an experiment file's whole matrix, rank it, report it and gate it.

The file (docs/experiments.md) extends a tuning search space with datasets, judges and a gate. Every run
goes through the `judge` use case: a rerun shows finished runs again and resumes the unfinished one, so a
Ctrl+C loses nothing. Exit codes as `dialjudge check`: 0 every run finished and the gate holds (or there
is none), 1 a gate rule fails, 2 bad input or a run that did not finish, 130 interrupted (rerun to resume).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

from rich.console import Console

from dialjudge.core.api.experiments import (
    ExperimentOutcome,
    ExperimentPlan,
    PlannedRun,
    check_stored_runs_of,
    experiment_gate,
    experiment_runs,
    packaged_experiments,
    plan_experiment,
    read_experiment,
    run_experiment,
)
from dialjudge.core.api.formatting import problem_lines
from dialjudge.core.api.types import Part
from dialjudge.core.errors import ConfigError

from . import render
from .gate_view import RULES_HELP, add_rule_options, report_gate, typed_rules
from .leaderboard_cmd import print_board
from .progress import ProgressDisplay
from .signals import sigterm_as_interrupt

#: The experiment shipped with dialjudge that `dialjudge eval --example` runs (prompts/experiments/).
EXAMPLE = "sample"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("eval", help="run an experiment file: datasets × judges × templates, ranked and gated",
                       description="Run every variant of the experiment file on every dataset it declares (with "
                                   "the run store's resume and response cache: a rerun reuses finished runs and "
                                   "continues an unfinished one), print the leaderboard of each dataset, write the "
                                   "report and apply the gate (the file's [gate] and any rules given here). "
                                   + RULES_HELP + " 130: interrupted (Ctrl+C); run the same command to resume.")
    p.add_argument("experiment", nargs="?", metavar="EXPERIMENT",
                   help=f"an experiment file, or one shipped with dialjudge by name ({', '.join(packaged_experiments())})")
    p.add_argument("--example", action="store_true",
                   help=f"run the shipped example ({EXAMPLE}: the bundled sample with the bundled and fake judges)")
    add_rule_options(p)
    p.set_defaults(handler=run_eval)


def run_eval(args: argparse.Namespace) -> int:
    target = _target(args)
    experiment = read_experiment(target)
    plan = plan_experiment(args.session, experiment)  # every key checked before anything is judged
    gate = experiment_gate(experiment, typed_rules(args), judge=args.gate_judge, quality=args.quality,
                           n_boot=args.bootstrap, seed=args.seed, tie_rule=args.majority_ties)
    con = render.console(stderr=True)
    con.print(f"experiment {experiment.settings.name!r}: {len(plan.runs)} runs ({len(plan.datasets)} datasets × "
              f"{len(experiment.variants)} variants)", markup=False, highlight=False)
    try:
        outcome = run_experiment(args.session, plan, display=_progress(con, plan), gate=gate)
    except KeyboardInterrupt:
        con.print(f"interrupted: the run in flight is cancelled and keeps what it stored; run `dialjudge eval "
                  f"{target}` again to resume it (finished runs are reused)", markup=False, highlight=False)
        return 130
    _print_runs(outcome)
    if not outcome.finished:
        last = outcome.summaries[-1]
        for line, part in problem_lines(last):
            con.print(line, style="red" if part is Part.ERROR else "yellow", markup=False, highlight=False)
        con.print(f"run {last.run_id} is {last.status}: the experiment stops there; run `dialjudge eval {target}` "
                  "again to resume it", markup=False, highlight=False)
        return 2
    out = render.console()
    for board in outcome.boards:
        if board.board is not None:
            print_board(out, board.board)
        else:
            out.print(f"no leaderboard of {board.dataset} · {board.quality}: {board.reason}", markup=False,
                      highlight=False)
    if outcome.report is not None:
        con.print(f"wrote {outcome.report}", markup=False, highlight=False)
    elif outcome.report_note:
        con.print(outcome.report_note, style="yellow", markup=False, highlight=False)
    if outcome.gate is None:
        return 0
    return report_gate(args, outcome.gate)


def check_experiment(args: argparse.Namespace, target: str) -> int:
    """`dialjudge check EXPERIMENT`: the file's gate (and the rules typed) on the runs eval made of it."""
    experiment = read_experiment(target)
    plan = plan_experiment(args.session, experiment)
    gate = experiment_gate(experiment, typed_rules(args), judge=args.gate_judge, quality=args.quality,
                           n_boot=args.bootstrap, seed=args.seed, tie_rule=args.majority_ties)
    if gate is None:
        raise ConfigError(f"{experiment.source}: no rules to check: the file has no [gate] and none were given "
                          "(--min, --no-worse-than, --max-failures)")
    run_ids = experiment_runs(args.session, plan)
    return report_gate(args, check_stored_runs_of(args.session, plan, run_ids, gate))


def _target(args: argparse.Namespace) -> str:
    if args.example and args.experiment:
        raise ConfigError("give an experiment file or --example, not both")
    if args.example:
        return EXAMPLE
    if not args.experiment:
        raise ConfigError(f"name an experiment file (or --example; shipped: {', '.join(packaged_experiments())})")
    return str(args.experiment)


def _progress(con: Console, plan: ExperimentPlan) -> Callable[[PlannedRun], AbstractContextManager[ProgressDisplay]]:
    """Each run's line ([2/6] dataset · variant), then its progress bar; SIGTERM stops it as Ctrl+C does."""
    total = len(plan.runs)

    @contextmanager
    def display(run: PlannedRun) -> Iterator[ProgressDisplay]:
        con.print(f"[{run.index + 1}/{total}] {run.label}", markup=False, highlight=False)
        with ProgressDisplay(con, "judging") as shown, sigterm_as_interrupt():
            yield shown

    return display


def _print_runs(outcome: ExperimentOutcome) -> None:
    """Which run each cell of the matrix is, and what this invocation asked of a model."""
    rows = []
    for run, summary in zip(outcome.plan.runs, outcome.summaries):
        how = ("reused (finished before)" if summary.shown_again else
               f"resumed, {summary.backend_calls} asked" if summary.resumed else f"{summary.backend_calls} asked")
        rows.append((run.dataset.name, run.variant.name, summary.run_id, str(summary.status), summary.done,
                     summary.failures, how))
    render.console(stderr=True).print(render.plain_table(
        f"Experiment {outcome.plan.experiment.settings.name}",
        ["dataset", "variant", "run", "status", "judged", "failed", "this time"], rows,
        right=("run", "judged", "failed")))
