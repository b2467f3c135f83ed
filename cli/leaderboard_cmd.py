"""`dialjudge leaderboard`: every judge of every run, the reference metrics and the baselines ranked
against the humans, with CIs, significance clusters and a bias card."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from dialjudge.core.api import (
    LeaderboardRequest,
    leaderboard,
)
from dialjudge.core.api.leaderboards import FORMATS, Leaderboard, columns_of, leaderboard_text, table_rows, title_of

from . import render


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("leaderboard", help="rank many judges, metrics and baselines with significance clusters",
                       description="One row per evaluator: every judge of the runs named (all runs on the dataset "
                       "and quality when none is), the reference-based metrics, a response-length and a seeded "
                       "random baseline, and the human ceiling as the reference line.")
    p.add_argument("runs", nargs="*", type=int, metavar="RUN", help="run ids (default: every run on the dataset "
                   "and quality, imported runs included)")
    p.add_argument("--dataset", required=True, help="dataset name or path")
    p.add_argument("--quality", required=True, help="the human-rated quality to agree with")
    p.add_argument("--level", choices=("global", "context", "system"), default="global",
                   help="global: all items; context: responses to one context ranked against each other; "
                   "system: system means (where the data names systems)")
    p.add_argument("--format", choices=FORMATS, default="table")
    p.add_argument("--output", type=Path, help="write the export here instead of printing it")
    p.add_argument("--no-metrics", action="store_true", help="leave out the reference-based metrics")
    p.add_argument("--bootstrap", type=int, default=1000, help="context resamples of each CI (default 1000)")
    p.add_argument("--alpha", type=float, default=0.05, help="family-wise error of the clusters (default 0.05)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jury", action="append", default=[], metavar="RUN,RUN,...",
                   help="rank a jury of these runs' judges too (RUN or RUN:JUDGE, comma-separated; repeatable)")
    p.add_argument("--jury-method", choices=("majority", "mean", "learned"), default="majority",
                   help="how each --jury pools its members (learned: weights cross-fitted on the human ratings)")
    p.set_defaults(handler=run_leaderboard)


def run_leaderboard(args: argparse.Namespace) -> int:
    request = LeaderboardRequest(args.dataset, args.quality, tuple(args.runs), level=args.level,
                                 metrics=not args.no_metrics, n_boot=args.bootstrap, seed=args.seed, alpha=args.alpha,
                                 juries=tuple(tuple(j.split(",")) for j in args.jury), jury_method=args.jury_method)
    board = leaderboard(args.session, request, args.session.config)
    if args.format != "table":
        text = leaderboard_text(board, args.format)
        if args.output:
            render.write_output(args.output, text)
        else:
            print(text, end="")
        return 0
    print_board(render.console(), board)
    return 0


def print_board(con: Console, board: Leaderboard) -> None:
    """The leaderboard table, its method lines and notes, and the runs behind it (also `dialjudge eval`'s)."""
    columns = columns_of(board)
    con.print(render.plain_table(title_of(board), columns, table_rows(board),
                                 right=tuple(c for c in columns if c not in ("evaluator",))))
    render.print_notes(con, board.method_lines())
    render.print_notes(con, board.notes)
    for run in board.runs:
        con.print(f"run {run.run_id} ({run.kind}): template {run.template} #{run.template_hash}; {run.settings}",
                  markup=False, highlight=False)
