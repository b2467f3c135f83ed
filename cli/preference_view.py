"""`dialjudge judge` on pre-paired preference data: the agreement table with the humans' votes."""

from __future__ import annotations

import argparse
from typing import Any

from rich.markup import escape

from dialjudge.core.errors import ConfigError
from dialjudge.core.judges.post_run.pairwise_report import candidate_items, share_text
from dialjudge.core.judges.post_run.preference_report import (
    AGREEMENT_COLUMNS,
    CATEGORY_COLUMNS,
    PreferenceReport,
    agreement_notes,
    agreement_rows,
    category_rows,
    implied_preference_report,
    is_pointwise_preference_run,
    is_preference_run,
    preference_report,
)
from dialjudge.core.judges.run.pairwise import plan_pairs
from dialjudge.core.report import records_to_latex, records_to_markdown, to_csv, to_json
from dialjudge.core.stats.preference import compare_agreement

from . import render


def add_preference_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tie-band", type=float, default=0.0, metavar="D",
                   help="pre-paired data judged one reply at a time: two scores (0-1) at most D apart imply a tie "
                        "(default 0: only equal scores)")
    p.add_argument("--versus-run", type=int, metavar="N",
                   help="pre-paired data: compare this run's agreement with the humans with run N's on the same "
                        "pairs (e.g. pointwise against pairwise): the difference with a paired bootstrap interval "
                        "and an exact McNemar test")


def print_preference_plan(con: Any, dataset: Any, config: Any) -> None:
    plan = plan_pairs(candidate_items(config, dataset), config.pairs)
    orders = "both orders" if config.pairs.both_orders else f"one order each, drawn with seed {config.pairs.seed}"
    con.print(f"pairwise: {plan.pairs} pre-paired pairs with the humans' votes, {orders}: "
              f"{plan.judgments_per_judge} judgments per judge", markup=False, highlight=False)


def report_pointwise_preferences(args: argparse.Namespace, dataset: Any, plan: Any, judgments: Any,
                                 run_id: int) -> bool:
    """After a pointwise run on pre-paired items, the table of the preferences its scores imply; False
    when the run is not one."""
    if not is_pointwise_preference_run(plan.config, dataset):
        return False
    report_preferences(args, dataset, plan, judgments, run_id)
    return True


def run_report(config: Any, dataset: Any, judgments: Any, args: argparse.Namespace) -> PreferenceReport:
    """The report of a pairwise or a pointwise run on pre-paired items."""
    quality = (args.qualities or [None])[0]
    if config.pairs is not None:
        return preference_report(config, dataset, judgments, quality=quality, n_boot=args.bootstrap, seed=args.seed)
    if args.tie_band < 0:
        raise ConfigError(f"--tie-band must be at least 0, not {args.tie_band}")
    return implied_preference_report(config, dataset, judgments, band=args.tie_band, quality=quality,
                                     n_boot=args.bootstrap, seed=args.seed)


def report_preferences(args: argparse.Namespace, dataset: Any, plan: Any, judgments: Any, run_id: int) -> None:
    """The agreement table (printed, or written in --format to stdout or --output)."""
    report = run_report(plan.config, dataset, judgments, args)
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
            _print_versus(con, args, dataset, report, run_id)
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


def _print_versus(con: Any, args: argparse.Namespace, dataset: Any, report: PreferenceReport, run_id: int) -> None:
    """This run against run N on the same pairs, judge by judge (the same name, else the first of each)."""
    from dialjudge.core.judges.store.run_store import RunStore

    with RunStore() as store:
        other = store.get_run(args.versus_run)
        config = other.run_config
        if not (is_preference_run(config, dataset) or is_pointwise_preference_run(config, dataset)):
            raise ConfigError(f"run {args.versus_run} did not judge the pre-paired items of {dataset.name}")
        theirs = run_report(config, dataset, store.load_judgments(args.versus_run), args)
    how = {True: "pairwise", False: "pointwise"}
    rows = []
    units = "pairs"
    for name, mine in report.judges.items():
        their_name = name if name in theirs.judges else next(iter(theirs.judges), None)
        if their_name is None:
            continue
        paired = compare_agreement(mine.pairs, theirs.judges[their_name].pairs, n_boot=args.bootstrap, seed=args.seed)
        units = paired.unit
        ci = "" if paired.ci is None else f" [{100 * paired.ci[0]:+.1f}, {100 * paired.ci[1]:+.1f}]"
        rows.append((f"{name} (run {run_id}, {how[report.setting is not None]})",
                     f"{their_name} (run {args.versus_run}, {how[theirs.setting is not None]})", str(paired.n),
                     share_text(paired.agree_x, paired.n), share_text(paired.agree_y, paired.n),
                     "–" if paired.difference is None else f"{100 * paired.difference:+.1f}{ci}",
                     f"{paired.only_x} / {paired.only_y}",
                     "–" if paired.p_value is None else f"{paired.p_value:.3g}"))
    columns = ("this run", "versus", "pairs", "agree (this)", "agree (versus)", "difference, points",
               "only this / only versus right", "McNemar p")
    con.print(render.plain_table(f"Same pairs, two ways of judging — {dataset.name} (ties counted)", columns, rows,
                                 right=columns[2:]))
    render.print_notes(con, ["pairs both runs gave a verdict on; difference = this run's agreement minus the other's, "
                             f"95% paired bootstrap interval over {units}; "
                             "McNemar's exact test treats pairs as independent"])


def print_pair_summary(con: Any, dataset: Any, pairwise: int) -> None:
    """`datasets describe` on pre-paired data: the pairs, their votes and the humans' agreement."""
    from dialjudge.core.errors import DataError
    from dialjudge.core.judges.post_run.preference_report import human_side, preference_quality

    con.print(f"{pairwise} pairwise items (a prompt, two responses and the humans' preference): judge them with a "
              "pairwise template (e.g. --template pairwise-plain), or rate each reply alone with a pointwise one",
              markup=False, highlight=False)
    items = [ex for ex in dataset if ex.is_pairwise]
    try:
        humans = human_side(items, preference_quality(items))
    except DataError as exc:
        con.print(f"[yellow]the votes cannot be read as A, B or tie: {escape(str(exc))}[/yellow]")
        return
    agreement = humans.with_ties
    con.print(f"human label = majority of the votes: {humans.voted_ties} pair(s) voted tie, {humans.split_ties} split "
              f"(counted as ties); {humans.several_votes} pair(s) with several votes, whose two votes agree "
              + ("–" if agreement.percent is None else f"{100 * agreement.percent:.1f}%")
              + " of the time (κ " + ("–" if agreement.kappa is None else f"{agreement.kappa:.3f}") + ")",
              markup=False, highlight=False)
