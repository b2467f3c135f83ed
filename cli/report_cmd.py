"""`dialjudge report RUN... --output report.html`: one self-contained HTML file of stored runs."""

from __future__ import annotations

import argparse
from pathlib import Path

from dialjudge.core.api.html_report import HtmlReportRequest, write_html_report

from . import render
from .metrics_cmd import _non_negative_int


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report", help="write one self-contained HTML report of stored runs (opens offline, fetches nothing)",
        description="The dataset and run settings with template hashes, the agreement tables with CIs and n beside "
                    "the human ceiling, the leaderboard (several runs), the paired verdict (two runs), discernment on "
                    "adversarial items, a chart per judge against the humans, and every judged item with the review "
                    "queue's flags, searchable and sortable: one HTML file with everything inside it.")
    p.add_argument("runs", nargs="+", type=int, metavar="RUN", help="run ids, all on one dataset")
    p.add_argument("--output", type=Path, required=True, metavar="FILE.html", help="the file to write")
    p.add_argument("--quality", help="the human-rated quality to compare with (default: the first run's, else the "
                                     "dataset's overall quality)")
    p.add_argument("--dataset", help="the dataset's name or path, when the runs' recorded one has moved")
    p.add_argument("--no-metrics", action="store_true", help="leave the reference-based metrics out of the tables")
    p.add_argument("--bootstrap", type=_non_negative_int, default=1000, metavar="N",
                   help="bootstrap resamples for the CIs (the same default as `judge`)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    p.set_defaults(handler=run_report)


def run_report(args: argparse.Namespace) -> int:
    request = HtmlReportRequest(tuple(args.runs), args.output, quality=args.quality, dataset=args.dataset,
                                metrics=not args.no_metrics, n_boot=args.bootstrap, seed=args.seed)
    result = write_html_report(args.session, request)
    render.console(stderr=True).print(
        f"wrote {result.path} ({result.bytes_written / 1e6:.1f} MB, {result.items:,} items; sections: "
        f"{', '.join(result.sections)})", markup=False, highlight=False)
    return 0
