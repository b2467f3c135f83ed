"""`dialjudge metrics`: reference-based metrics against the humans, as the papers' tables."""

from __future__ import annotations

import argparse
from pathlib import Path

from dialjudge.core.api import (
    AgreementRequest,
    LabelReport,
    metrics_report,
)
from dialjudge.core.api.datasets import DEFAULT_DATASET
from dialjudge.core.api.formatting import (
    FORMATS,
    wide_table,
)
from dialjudge.core.api.formatting import render as render_records
from dialjudge.core.api.profiles import (
    DEFAULT_PROFILE,
    profile_names,
    table_signatures,
)
from dialjudge.core.api.reports import (
    metric_length_bias,
    only_dialogs,
)
from dialjudge.core.api.types import EvaluationReport
from dialjudge.core.format import number_text
from dialjudge.core.model import Aggregation, Dataset

from . import labels_view, render
from .dataset_args import add_column_map_option, open_dataset_of


def add_table_options(p: argparse.ArgumentParser) -> None:
    """Options shared by every command that prints an agreement table."""
    p.add_argument("--dataset", default=DEFAULT_DATASET, help="name (see `datasets list`) or path")
    add_column_map_option(p)
    p.add_argument("--quality", action="append", dest="qualities", metavar="QUALITY",
                   help="quality to correlate with (repeatable; default: every quality of the level)")
    p.add_argument("--subset", default="all",
                   help="all, open, closed, adversarial, non-adversarial, system:NAME, tag:NAME")
    p.add_argument("--level", choices=("turn", "dialog", "system", "both"), default="turn",
                   help="turn/dialog: per item; system: per-system means; both: item and system")
    p.add_argument("--aggregate", choices=[a.value for a in Aggregation], default="mean",
                   help="how annotators' labels are pooled")
    p.add_argument("--kendall", action="store_true", help="add Kendall tau columns")
    p.add_argument("--bootstrap", type=_non_negative_int, default=1000, metavar="N",
                   help="bootstrap resamples for the CIs")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--format", choices=FORMATS, default="table")
    p.add_argument("--output", type=Path, help="write the table here instead of the terminal")
    p.add_argument("--profile", choices=profile_names(), default=DEFAULT_PROFILE,
                   help="which code computes the reference-based metrics: default (sacrebleu, rouge-score, NLTK) "
                        "or nlg-eval (the MS-COCO scorers and METEOR 1.5, as Yeh et al. 2021)")


def _non_negative_int(text: str) -> int:
    # argparse turns this error into a usage message instead of a traceback from the bootstrap.
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("metrics", help="correlate reference-based metrics with human ratings")
    add_table_options(p)
    p.add_argument("--metrics", help="comma-separated metric ids (bleu1..bleu4, rouge1, rouge2, rougeL, meteor, chrf++)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    dataset = open_dataset_of(args, args.dataset)
    request = AgreementRequest(qualities=tuple(args.qualities or ()), level=args.level,
                               aggregation=Aggregation(args.aggregate), n_boot=args.bootstrap, seed=args.seed)
    report = metrics_report(dataset, request, subset=args.subset,
                            metric_ids=args.metrics.split(",") if args.metrics else None, profile=args.profile)
    emit(report, args, title=f"Reference-based metrics vs humans — {dataset.name}", dataset=dataset)
    if args.format == "table" and args.output is None and "system" not in report.levels and not only_dialogs(dataset):
        print_length_bias(dataset, report, report.subset)
    return 0


def print_length_bias(dataset: Dataset, report: EvaluationReport, subset: str) -> None:
    """Verbosity: each metric's Spearman ρ with the response length beside the humans', and its
    agreement with the humans once length is partialled out (core/stats/baselines)."""
    rows = [(b.evaluator, b.quality, b.n, *(number_text(v) for v in (
        b.judge_length_rho, b.human_length_rho, b.judge_human_rho, b.partial_rho)))
        for b in metric_length_bias(dataset, report, subset)]
    if rows:
        right = ("n", "metric~length", "humans~length", "metric~humans", "… length partialled out")
        render.console().print(render.plain_table(
            f"Length bias — {dataset.name}{'' if subset == 'all' else f' [{subset}]'} (Spearman ρ)",
            ["metric", "quality", *right], rows, right=right))


def emit(report: EvaluationReport, args: argparse.Namespace, *, title: str, dataset: Dataset | None = None,
         labels: LabelReport | None = None) -> None:
    """Print the report's tables (one per level and subset) or write them in the chosen format;
    on a set with adversarial candidates, also how well each evaluator tells them apart. ``labels``
    (a binary quality's label comparison) joins a written file: its records follow the correlation
    records (each record's "table" says which), its tables follow in markdown and LaTeX."""
    coefficients = ("pearson", "spearman", "kendall") if args.kendall else ("pearson", "spearman")
    panels = [(level, subset) for subset in report.subsets for level in report.levels]

    def panel_title(level: str, subset: str) -> str:
        return f"{title}{'' if subset == 'all' else f' [{subset}]'} — {level} level"

    if args.format == "table" and args.output is None:
        con = render.console()
        for level, subset in panels:
            table = wide_table(report.records, title=panel_title(level, subset), level=level, subset=subset,
                               coefficients=coefficients)
            con.print(render.wide_table(table))
        con.print("[dim]* p < 0.05; second line: bootstrap 95% CI; excluded: no score or no human label.[/dim]")
        render.print_notes(con, report.notes)
        for signature in table_signatures(report.records):
            con.print(f"signature: {signature}", style="dim", markup=False, highlight=False)
        if dataset is not None and any(ex.is_adversarial for ex in dataset):
            # The same items as the first table: discernment follows --subset.
            render.print_discernment(con, dataset, report.subset, report.scores)
        return
    fmt = "markdown" if args.format == "table" else args.format
    if fmt in ("markdown", "latex"):
        parts = [render_records(report.records, fmt, title=panel_title(level, subset), level=level, subset=subset,
                                coefficients=coefficients, notes=report.notes) for level, subset in panels]
        if labels is not None:
            parts.append(labels_view.render_text(labels, fmt, title=title))
    else:
        records = report.records
        if labels is not None:
            records = [{**r, "table": "correlation"} for r in records] + [
                {**r, "table": "labels"} for r in labels_view.file_records(labels, fmt)]
        parts = [render_records(records, fmt, title=title, coefficients=coefficients, notes=report.notes,
                                meta={"dataset": report.dataset})]
    text = "\n".join(parts)
    if args.output:
        render.write_output(args.output, text)
        render.console(stderr=True).print(f"wrote {args.output}", markup=False)
    else:
        print(text, end="")
