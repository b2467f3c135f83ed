"""`dialjudge runs protocol judge-bench RUN [RUN ...]`: stored runs in JUDGE-BENCH's table convention."""

from __future__ import annotations

import argparse
from pathlib import Path

from dialjudge.core.api import (
    JudgeBenchTable,
    judge_bench_table,
)
from dialjudge.core.api.protocol_judge_bench import judge_bench_text
from dialjudge.core.api.types import (
    JudgeBenchMetric,
    JudgeBenchSummary,
    TieRule,
)
from dialjudge.core.format import number_text

from . import render

PROTOCOLS = ("judge-bench",)


def register(rsub: argparse._SubParsersAction) -> None:
    p = rsub.add_parser(
        "protocol", help="stored runs as a published paper's table (judge-bench: one run per metric of "
                         "JUDGE-BENCH files; Spearman ρ / Cohen's κ per metric, mean ± sd per dataset)")
    p.add_argument("protocol", choices=PROTOCOLS)
    p.add_argument("runs", type=int, nargs="+", metavar="RUN", help="runs to tabulate, one per metric")
    p.add_argument("--majority-ties", choices=[r.value for r in TieRule], default=TieRule.EXCLUDE.value,
                   help="categorical metrics, a tied human majority: exclude the item, take the first tied label, "
                        "or take the file's published majority (else exclude)")
    p.add_argument("--format", choices=("table", "csv", "json", "markdown", "latex"), default="table")
    p.add_argument("--output", type=Path, help="write the table to this file instead of printing it")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    table = judge_bench_table(args.session, args.runs, args.session.config, tie_rule=args.majority_ties)
    show(table, args, title=f"JUDGE-BENCH protocol — runs {', '.join(map(str, args.runs))}")
    return 0


def show(table: JudgeBenchTable, args: argparse.Namespace, *, title: str) -> None:
    """Print the table, or write it in --format (to --output, else to standard output)."""
    if args.format == "table" and args.output is None:
        _print(table, title)
        return
    text = judge_bench_text(table, "markdown" if args.format == "table" else args.format, title=title)
    if args.output is None:
        print(text, end="")
    else:
        render.write_output(args.output, text)


def _print(table: JudgeBenchTable, title: str) -> None:
    con = render.console()
    con.print(render.plain_table(
        title, ["dataset", "judge", "graded: ρ mean ± sd", "metrics", "categorical: κ mean ± sd", "metrics",
                "unparsed"],
        _summary_rows(table.summaries),
        right=("graded: ρ mean ± sd", "metrics", "categorical: κ mean ± sd", "unparsed")))
    con.print(render.plain_table(
        "Per metric", ["dataset", "metric", "judge", "statistic", "value", "n", "unparsed", "run"],
        [_metric_row(m) for m in table.metrics], right=("value", "n", "unparsed", "run")))
    render.print_notes(con, table.notes)


def _summary_rows(summaries: tuple[JudgeBenchSummary, ...]) -> list[tuple[object, ...]]:
    by_key: dict[tuple[str, str], dict[str, JudgeBenchSummary]] = {}
    for s in summaries:
        by_key.setdefault((s.dataset, s.judge), {})[s.category] = s
    rows: list[tuple[object, ...]] = []
    for (dataset, judge), kinds in by_key.items():
        graded, categorical = kinds.get("graded"), kinds.get("categorical")
        unparsed = sum(s.unparsed for s in kinds.values())
        rows.append((dataset, judge, _mean_sd(graded), _count(graded), _mean_sd(categorical), _count(categorical),
                     unparsed))
    return rows


def _mean_sd(summary: JudgeBenchSummary | None) -> str:
    if summary is None or summary.mean is None:
        return "–"
    return f"{number_text(summary.mean)} ± {number_text(summary.sd)}"


def _count(summary: JudgeBenchSummary | None) -> str:
    if summary is None:
        return "–"
    return str(summary.metrics) + (f" (+{summary.undefined} undefined)" if summary.undefined else "")


def _metric_row(m: JudgeBenchMetric) -> tuple[object, ...]:
    value = number_text(m.value) if m.value is not None else f"– ({m.reason})" if m.reason else "–"
    return (m.dataset, m.metric, m.judge, "Spearman ρ" if m.statistic == "spearman" else "Cohen's κ", value, m.n,
            m.unparsed, m.run_id)
