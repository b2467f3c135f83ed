"""`dialjudge judge` on pre-paired preference data: the agreement table with the humans' votes."""

from __future__ import annotations

import argparse
from typing import Any

from dialjudge.core.api import (
    PreferenceRequest,
    preference_report_of,
    versus,
)
from dialjudge.core.api.formatting import records_text
from dialjudge.core.api.preferences import (
    AGREEMENT_COLUMNS,
    CATEGORY_COLUMNS,
    VERSUS_COLUMNS,
    agreement_notes,
    agreement_rows,
    category_rows,
    pair_summary_lines,
    versus_notes,
    versus_rows,
)

from . import render


def add_preference_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tie-band", type=float, default=0.0, metavar="D",
                   help="pre-paired data judged one reply at a time: two scores (0-1) at most D apart imply a tie "
                        "(default 0: only equal scores)")
    p.add_argument("--versus-run", type=int, metavar="N",
                   help="pre-paired data: compare this run's agreement with the humans with run N's on the same "
                        "pairs (e.g. pointwise against pairwise): the difference with a paired bootstrap interval "
                        "and an exact McNemar test")


def preference_request(args: argparse.Namespace) -> PreferenceRequest:
    return PreferenceRequest(quality=(args.qualities or [None])[0], tie_band=args.tie_band, n_boot=args.bootstrap,
                             seed=args.seed)


def report_preferences(args: argparse.Namespace, dataset: Any, plan: Any, judgments: Any, run_id: int) -> None:
    """The agreement table (printed, or written in --format to stdout or --output)."""
    request = preference_request(args)
    report = preference_report_of(plan.config, dataset, judgments, request)
    title = f"Judges vs the humans' preferences — {dataset.name}, run {run_id}"
    rows = agreement_rows(report)
    if args.format == "table" and args.output is None:
        con = render.console()
        con.print(render.plain_table(title, AGREEMENT_COLUMNS, rows, right=AGREEMENT_COLUMNS[1:]))
        render.print_notes(con, [f"run {run_id}: template {plan.config.template}, {plan.config.mode.value}",
                                 *agreement_notes(report)])
        by_category = category_rows(report)
        if by_category:
            con.print(render.plain_table(f"By category — {dataset.name}", CATEGORY_COLUMNS, by_category,
                                         right=CATEGORY_COLUMNS[2:]))
        if args.versus_run is not None:
            compared = versus(args.session, report, args.versus_run, dataset, request)
            con.print(render.plain_table(f"Same pairs, two ways of judging — {dataset.name} (ties counted)",
                                         VERSUS_COLUMNS, versus_rows(compared, run_id, args.versus_run),
                                         right=VERSUS_COLUMNS[2:]))
            render.print_notes(con, versus_notes(compared))
        return
    # The first cell names a judge (the user's config): a spreadsheet must not run it as a formula.
    records = [dict(zip(AGREEMENT_COLUMNS, (_inert(row[0]), *row[1:]))) for row in rows]
    notes = agreement_notes(report)
    text = records_text(records, args.format, columns=AGREEMENT_COLUMNS, title=title,
                        meta={"title": title, "notes": notes})
    if args.output is not None:
        render.write_output(args.output, text)
    else:
        print(text, end="" if text.endswith("\n") else "\n")


def _inert(text: str) -> str:
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def print_pair_summary(con: Any, dataset: Any) -> None:
    """`datasets show` on pre-paired data: the pairs, their votes and the humans' agreement."""
    for line in pair_summary_lines(dataset):
        con.print(line, markup=False, highlight=False)
