"""`dialjudge jury` and `dialjudge cascade`: several stored runs pooled into one judge, and a cheap judge
escalating to a strong one with a guaranteed agreement."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from dialjudge.core.api import cascade as cascade_api
from dialjudge.core.api import jury as jury_api

from . import render


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
                       "(logprob or yesno mode).")
    c.add_argument("cheap", metavar="CHEAP_RUN", help="the cheap judge's run (RUN or RUN:JUDGE)")
    c.add_argument("strong", metavar="STRONG_RUN", help="the strong judge's run (RUN or RUN:JUDGE)")
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
    request = cascade_api.CascadeRequest(args.cheap, args.strong, args.quality, args.labels, args.target, args.delta,
                                         args.calibration, args.seed)
    report = cascade_api.run_cascade(args.session, request, args.session.config)
    if args.format == "json":
        print(json.dumps({**cascade_api.cascade_record(report), "method": cascade_api.cascade_lines(report)},
                         indent=2))
        return 0
    con = render.console()
    con.print(render.plain_table(cascade_api.cascade_title(report), cascade_api.CASCADE_COLUMNS,
                                 cascade_api.cascade_rows(report), right=cascade_api.CASCADE_COLUMNS[1:]))
    render.print_notes(con, cascade_api.cascade_lines(report))
    return 0
