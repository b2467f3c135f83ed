"""`dialjudge judge` on pre-paired preference data: the agreement table with the humans' votes."""

from __future__ import annotations

import argparse
from typing import Any

from dialjudge.core.judges.pairwise import plan_pairs
from dialjudge.core.judges.pairwise_report import candidate_items
from dialjudge.core.judges.preference_report import (
    AGREEMENT_COLUMNS,
    CATEGORY_COLUMNS,
    agreement_notes,
    agreement_rows,
    category_rows,
    preference_report,
)
from dialjudge.core.report import records_to_latex, records_to_markdown, to_csv, to_json

from . import render


def print_preference_plan(con: Any, dataset: Any, config: Any) -> None:
    plan = plan_pairs(candidate_items(config, dataset), config.pairs)
    orders = "both orders" if config.pairs.both_orders else f"one order each, drawn with seed {config.pairs.seed}"
    con.print(f"pairwise: {plan.pairs} pre-paired pairs with the humans' votes, {orders}: "
              f"{plan.judgments_per_judge} judgments per judge", markup=False, highlight=False)


def report_preferences(args: argparse.Namespace, dataset: Any, plan: Any, judgments: Any, run_id: int) -> None:
    """The agreement table (printed, or written in --format to stdout or --output)."""
    report = preference_report(plan.config, dataset, judgments, quality=(args.qualities or [None])[0],
                               n_boot=args.bootstrap, seed=args.seed)
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
        return
    # The first cell names a judge (the user's config): a spreadsheet must not run it as a formula.
    records = [dict(zip(AGREEMENT_COLUMNS, (_inert(row[0]), *row[1:]))) for row in rows]
    notes = agreement_notes(report)
    if args.format == "json":
        text = to_json(records, meta={"title": title, "notes": notes})
    elif args.format == "csv":
        text = to_csv(records)
    elif args.format == "latex":
        text = records_to_latex(records, AGREEMENT_COLUMNS, title=title)
    else:
        text = records_to_markdown(records, AGREEMENT_COLUMNS, title=title)
    if args.output is not None:
        render.write_output(args.output, text)
    else:
        print(text, end="" if text.endswith("\n") else "\n")


def _inert(text: str) -> str:
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text
