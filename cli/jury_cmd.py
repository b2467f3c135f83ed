"""`dialjudge jury` and `dialjudge cascade`: several stored runs pooled into one judge, and a cheap judge
escalating to a strong one with a guaranteed agreement."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from dialjudge.core.api import cascade as cascade_api
from dialjudge.core.api import cascade_live
from dialjudge.core.api import jury as jury_api
from dialjudge.core.api.runs import RunPlan
from dialjudge.core.errors import ConfigError

from . import render
from .progress import ProgressDisplay
from .signals import sigterm_as_interrupt


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("jury", help="pool the judges of several runs into one (majority, mean or learned weights)",
                       description="A jury of stored runs on one dataset: majority with abstentions (a failed "
                       "judgment does not vote; a tie goes to the middle tied point, else to the first member listed), the mean, "
                       "or weights learned on labelled items cross-fitted by context. Each member's agreement "
                       "with the humans beside the jury's, the panel's cost, and where the jury can be trusted "
                       "alone (its members' agreement as its confidence).")
    p.add_argument("runs", nargs="+", metavar="RUN", help="runs (RUN, or RUN:JUDGE for one judge of a run)")
    p.add_argument("--method", choices=[m.value for m in jury_api.JuryMethod], default="majority")
    p.add_argument("--labels", type=Path, metavar="FILE", help="labels to learn weights and trust on: CSV or JSON "
                   "Lines with item_id and label (default: the dataset's human ratings)")
    p.add_argument("--quality", help="the human-rated quality (default: the first run's)")
    p.add_argument("--folds", type=int, default=jury_api.DEFAULT_FOLDS,
                   help="context folds of the learned weights' cross-fitting (default 5)")
    p.add_argument("--bootstrap", type=int, default=1000, help="context resamples of each CI (default 1000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.set_defaults(handler=run_jury)

    c = sub.add_parser("cascade", help="a cheap judge first, escalating to a strong one, with a guaranteed agreement",
                       description="Trust or Escalate (Jung et al. 2024) from two stored runs: the cheap judge "
                       "decides where its answer probability reaches a threshold, the strong judge where the cheap "
                       "one does not and its own reaches its threshold, the rest abstain. The thresholds keep the "
                       "agreement with people on the decided items at or above --target with probability "
                       "1 - delta (fixed-sequence testing on labelled items). Needs runs with answer probabilities "
                       "(logprob or yesno mode). Live, with --strong-judge instead of STRONG_RUN: the strong judge "
                       "is asked only about the items the cheap judge escalates (one stored, resumable run).")
    c.add_argument("cheap", metavar="CHEAP_RUN", help="the cheap judge's run (RUN or RUN:JUDGE)")
    c.add_argument("strong", metavar="STRONG_RUN", nargs="?",
                   help="the strong judge's run (RUN or RUN:JUDGE); or --strong-judge")
    c.add_argument("--strong-judge", metavar="NAME", help="a live cascade: ask this judge of the config, only "
                   "where the cheap judge is below its threshold (its run is stored and resumable)")
    c.add_argument("--template", help="with --strong-judge: the strong judge's template (default: the cheap run's)")
    c.add_argument("--mode", choices=("logprob", "yesno"),
                   help="with --strong-judge: the strong judge's scoring mode (default: the cheap run's)")
    c.add_argument("--target", type=float, default=cascade_api.DEFAULT_TARGET,
                   help="the agreement with people guaranteed on the items decided (default 0.8)")
    c.add_argument("--delta", type=float, default=cascade_api.DEFAULT_DELTA,
                   help="the chance that the guarantee fails (default 0.1)")
    c.add_argument("--labels", type=Path, metavar="FILE", help="labels that choose the thresholds: CSV or JSON "
                   "Lines with item_id and label (default: the dataset's human ratings of a share of the contexts)")
    c.add_argument("--calibration", type=float, default=cascade_api.DEFAULT_CALIBRATION,
                   help="without --labels: the share of contexts that choose the thresholds (default 0.5)")
    c.add_argument("--quality", help="the human-rated quality (default: the cheap run's)")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--format", choices=("table", "json"), default="table")
    c.set_defaults(handler=run_cascade)


def run_jury(args: argparse.Namespace) -> int:
    request = jury_api.JuryRequest(tuple(args.runs), args.method, args.quality, args.labels, args.bootstrap,
                                   args.seed, args.folds)
    report = jury_api.run_jury(args.session, request, args.session.config)
    if args.format == "json":
        print(json.dumps({"title": jury_api.jury_title(report), "rows": jury_api.jury_records(report),
                          "method": jury_api.jury_lines(report)}, indent=2))
        return 0
    con = render.console()
    con.print(render.plain_table(jury_api.jury_title(report), jury_api.JURY_COLUMNS, jury_api.jury_rows(report),
                                 right=jury_api.JURY_COLUMNS[1:]))
    render.print_notes(con, jury_api.jury_lines(report))
    return 0


def run_cascade(args: argparse.Namespace) -> int:
    if (args.strong is None) == (args.strong_judge is None):
        raise ConfigError("name the strong judge's run (STRONG_RUN) or the strong judge to ask (--strong-judge), "
                          "one of the two")
    if args.strong is not None and (args.template or args.mode):
        raise ConfigError("--template and --mode are the live strong judge's (with --strong-judge)")
    live: cascade_live.LiveCascadeReport | None = None
    if args.strong_judge is not None:
        live = _live_cascade(args)
        report = live.cascade
    else:
        request = cascade_api.CascadeRequest(args.cheap, args.strong, args.quality, args.labels, args.target,
                                             args.delta, args.calibration, args.seed)
        report = cascade_api.run_cascade(args.session, request, args.session.config)
    lines = cascade_api.cascade_lines(report) + (cascade_live.live_lines(live) if live is not None else [])
    if args.format == "json":
        extra = {} if live is None else cascade_live.live_record(live)
        print(json.dumps({**cascade_api.cascade_record(report), **extra, "method": lines}, indent=2))
        return 0
    con = render.console()
    con.print(render.plain_table(cascade_api.cascade_title(report), cascade_api.CASCADE_COLUMNS,
                                 cascade_api.cascade_rows(report), right=cascade_api.CASCADE_COLUMNS[1:]))
    render.print_notes(con, lines)
    return 0


def _live_cascade(args: argparse.Namespace) -> cascade_live.LiveCascadeReport:
    """Ask the strong judge where needed, with a progress bar on stderr."""
    request = cascade_live.LiveCascadeRequest(args.cheap, args.strong_judge, args.template, args.mode, args.quality,
                                              args.labels, args.target, args.delta, args.calibration, args.seed)
    con = render.console(stderr=True)

    @contextmanager
    def progress(plan: RunPlan) -> Iterator[ProgressDisplay]:
        con.print(f"asking {args.strong_judge} about the {len(plan.config.item_ids)} escalated items")
        with ProgressDisplay(con, "judging") as display, sigterm_as_interrupt():
            yield display

    return cascade_live.live_cascade(args.session, request, display=progress)
