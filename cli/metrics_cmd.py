"""`dialjudge metrics`: reference-based metrics against the humans, as the papers' tables."""

from __future__ import annotations

import argparse
from pathlib import Path

from dialjudge.core.evaluation import EvaluationReport, evaluate
from dialjudge.core.model import Aggregation
from dialjudge.core.registry import DEFAULT_DATASET, open_dataset
from dialjudge.core.report import FORMATS, render as render_records, wide_table

from . import render


def add_table_options(p: argparse.ArgumentParser) -> None:
    """Options shared by every command that prints an agreement table."""
    p.add_argument("--dataset", default=DEFAULT_DATASET, help="name (see `datasets list`) or path")
    p.add_argument("--quality", action="append", dest="qualities", metavar="QUALITY",
                   help="quality to correlate with (repeatable; default: every quality of the level)")
    p.add_argument("--subset", default="all",
                   help="all, open, closed, adversarial, non-adversarial, system:NAME, tag:NAME")
    p.add_argument("--level", choices=("turn", "dialog", "system", "both"), default="turn",
                   help="turn/dialog: per item; system: per-system means; both: item and system")
    p.add_argument("--aggregate", choices=[a.value for a in Aggregation], default="mean",
                   help="how annotators' labels are pooled")
    p.add_argument("--kendall", action="store_true", help="add Kendall tau columns")
    p.add_argument("--bootstrap", type=int, default=1000, metavar="N", help="bootstrap resamples for the CIs")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--format", choices=FORMATS, default="table")
    p.add_argument("--output", type=Path, help="write the table here instead of the terminal")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("metrics", help="correlate reference-based metrics with human ratings")
    add_table_options(p)
    p.add_argument("--metrics", help="comma-separated metric ids (bleu1..bleu4, rouge1, rouge2, rougeL, meteor, chrf++)")
    p.set_defaults(handler=run)


def levels_of(choice: str, dataset_has_dialogs: bool) -> list[str]:
    if choice == "both":
        return ["dialog" if dataset_has_dialogs else "turn", "system"]
    return [choice]


def run(args: argparse.Namespace) -> int:
    dataset = open_dataset(args.dataset)
    only_dialogs = bool(len(dataset)) and all(ex.candidate is None for ex in dataset)
    levels = levels_of(args.level, only_dialogs)
    if args.level == "turn" and only_dialogs:
        levels = ["dialog"]
    report = evaluate(dataset, qualities=args.qualities, subset=args.subset, levels=levels,
                      aggregation=Aggregation(args.aggregate),
                      metric_ids=args.metrics.split(",") if args.metrics else None,
                      n_boot=args.bootstrap, seed=args.seed)
    emit(report, args, title=f"Reference-based metrics vs humans — {dataset.name}")
    return 0


def emit(report: EvaluationReport, args: argparse.Namespace, *, title: str) -> None:
    """Print the report's tables (one per level) or write them in the chosen format."""
    coefficients = ("pearson", "spearman", "kendall") if args.kendall else ("pearson", "spearman")
    subset_title = "" if report.subset == "all" else f" [{report.subset}]"
    if args.format == "table" and args.output is None:
        con = render.console()
        for level in report.levels:
            table = wide_table(report.records, title=f"{title}{subset_title} — {level} level", level=level,
                               subset=report.subset, coefficients=coefficients)
            con.print(render.wide_table(table))
        con.print("[dim]* p < 0.05; brackets: bootstrap 95% CI; excluded: no score or no human label.[/dim]")
        render.print_notes(con, report.notes)
        return
    fmt = "markdown" if args.format == "table" else args.format
    parts = []
    for level in report.levels if fmt in ("markdown", "latex") else report.levels[:1]:
        parts.append(render_records(report.records, fmt, title=f"{title}{subset_title} — {level} level",
                                    level=level, subset=report.subset, coefficients=coefficients,
                                    notes=report.notes, meta={"dataset": report.dataset}))
    text = "\n".join(parts)
    if args.output:
        render.write_output(args.output, text)
        render.console(stderr=True).print(f"wrote {args.output}", markup=False)
    else:
        print(text, end="")
