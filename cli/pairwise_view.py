"""`dialjudge judge --mode pairwise`: the pair options, and the pairwise report at the end."""

from __future__ import annotations

import argparse

from dialjudge.core.api import (
    PairwiseReport,
    RunPlan,
)
from dialjudge.core.api.formatting import (
    BT_SUFFIX,
    SUMMARY_COLUMNS,
    summary_notes,
    summary_rows,
)
from dialjudge.core.api.types import EvaluationReport
from dialjudge.core.format import number_text
from dialjudge.core.model import Dataset

from . import render
from .metrics_cmd import emit
from .preference_view import add_preference_options


def add_pair_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pairs", default=None, metavar="all|N",
                   help="pairwise mode: ask all pairs of each context's candidates (all, the default), or N pairs "
                        "per context drawn with --pair-seed")
    p.add_argument("--pair-seed", type=int, default=0, metavar="S", help="pairwise mode: seed of the pair draw")
    p.add_argument("--one-order", action="store_true",
                   help="pairwise mode: ask each pair once, in a seeded random order, instead of in both orders "
                        "(no position consistency then)")
    add_preference_options(p)
    p.add_argument("--pair-scoring", choices=("generate", "logprob"), default=None,
                   help="pairwise mode: parse the verdict from generated text, or read p(A), p(B), p(tie) in one "
                        "forward pass (default: logprob where the template offers it)")


def pair_options(args: argparse.Namespace) -> tuple[str | None, int, bool, str | None]:
    """The pairs asked for ("all", N or None: not a pairwise run), their seed and orders, and the scoring mode."""
    if args.mode != "pairwise" and args.pairs is None and not args.one_order:
        return None, args.pair_seed, True, args.mode
    mode = args.pair_scoring if args.mode == "pairwise" else args.mode
    return args.pairs or "all", args.pair_seed, not args.one_order, mode


def report_pairwise(args: argparse.Namespace, dataset: Dataset, plan: RunPlan, report: PairwiseReport,
                    agreement: EvaluationReport, run_id: int) -> None:
    """The pairwise summary, then the agreement table of the per-candidate scores with the humans."""
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
    emit(agreement, args, title=f"Pairwise judges (win rate, Bradley-Terry) and metrics vs humans — {dataset.name}",
         dataset=dataset)


def _num(value: object) -> str:
    return number_text(value if isinstance(value, (int, float)) else None)
