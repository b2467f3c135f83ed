"""`dialjudge judge --mode pairwise`: the pair count up front, the pairwise report at the end."""

from __future__ import annotations

import argparse
from typing import Any

from dialjudge.core.errors import ConfigError
from dialjudge.core.evaluation import evaluate
from dialjudge.core.judges.post_run.pairwise_report import (
    BT_SUFFIX,
    SUMMARY_COLUMNS,
    candidate_items,
    pairwise_report,
    summary_notes,
    summary_rows,
)
from dialjudge.core.judges.run.pairwise import PairSetting, plan_pairs
from dialjudge.core.model import Aggregation

from . import render


def add_pair_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pairs", default=None, metavar="all|N",
                   help="pairwise mode: ask all pairs of each context's candidates (all, the default), or N pairs "
                        "per context drawn with --pair-seed")
    p.add_argument("--pair-seed", type=int, default=0, metavar="S", help="pairwise mode: seed of the pair draw")
    p.add_argument("--one-order", action="store_true",
                   help="pairwise mode: ask each pair once, in a seeded random order, instead of in both orders "
                        "(no position consistency then)")
    p.add_argument("--pair-scoring", choices=("generate", "logprob"), default=None,
                   help="pairwise mode: parse the verdict from generated text, or read p(A), p(B), p(tie) in one "
                        "forward pass (default: logprob where the template offers it)")


def pair_setting(args: argparse.Namespace) -> tuple[PairSetting | None, str | None]:
    """The pair setting and the scoring mode the options ask for (None, mode: not a pairwise run)."""
    if args.mode != "pairwise" and args.pairs is None and not args.one_order:
        return None, args.mode
    setting = PairSetting.parse(args.pairs, seed=args.pair_seed, both_orders=not args.one_order)
    if args.stop_when_ci_width is not None or args.baseline_run is not None:
        raise ConfigError("the stop rule watches one score per item; a pairwise run judges pairs of items")
    return setting, args.pair_scoring if args.mode == "pairwise" else args.mode


def print_pair_plan(con: Any, dataset: Any, config: Any) -> None:
    plan = plan_pairs(candidate_items(config, dataset), config.pairs)
    con.print(f"pairwise: {plan.describe(config.pairs)}", markup=False, highlight=False)


def report_pairwise(args: argparse.Namespace, dataset: Any, plan: Any, judgments: Any, run_id: int) -> None:
    """The pairwise summary, then the agreement table of the per-candidate scores with the humans."""
    report = pairwise_report(plan.config, dataset, judgments, aggregation=Aggregation(args.aggregate))
    candidates = dataset.subset(list(report.compared))
    qualities = args.qualities or ([plan.quality] if plan.quality else None)
    agreement = evaluate(candidates, qualities=qualities, aggregation=Aggregation(args.aggregate),
                         extra_scores=report.score_columns(), failures=report.column_failures(),
                         include_metrics=not args.no_metrics, n_boot=args.bootstrap, seed=args.seed)
    agreement.notes.insert(0, f"run {run_id}: template {plan.config.template}, pairwise ({plan.config.pairs.spec} "
                              f"pairs, seed {plan.config.pairs.seed}), {plan.config.mode.value}")
    if args.format == "table" and args.output is None:
        con = render.console()
        con.print(render.plain_table(f"Pairwise verdicts — run {run_id}", SUMMARY_COLUMNS, summary_rows(report),
                                     right=SUMMARY_COLUMNS[1:]))
        render.print_notes(con, summary_notes(report))
        for rec in agreement.records:
            if str(rec["evaluator"]).endswith(BT_SUFFIX) and rec.get("quality") == plan.quality:
                con.print(f"{rec['evaluator']}: Spearman with {plan.quality} ρ = {_num(rec.get('spearman'))} "
                          f"[{_num(rec.get('spearman_lo'))}, {_num(rec.get('spearman_hi'))}] (n={rec.get('n')})",
                          markup=False, highlight=False)
    from .metrics_cmd import emit

    emit(agreement, args, title=f"Pairwise judges (win rate, Bradley-Terry) and metrics vs humans — {dataset.name}",
         dataset=dataset)


def _num(value: Any) -> str:
    from dialjudge.core.format import number_text

    return number_text(value if isinstance(value, (int, float)) else None)
