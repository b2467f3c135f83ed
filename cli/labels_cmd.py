"""`dialjudge runs alt-test` and `runs estimate`: can the judge replace an annotator, and what a few labels buy."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dialjudge.core.api import (
    alt_test_for_run,
    estimate_for_run,
    label_next,
)
from dialjudge.core.api import labels_estimates as le
from dialjudge.core.api.formatting import (
    FORMATS,
    records_text,
)
from dialjudge.core.errors import DialjudgeError

from . import render


def register(rsub: argparse._SubParsersAction) -> None:
    alt = rsub.add_parser(
        "alt-test", help="can the run's judge replace an annotator? (the alternative annotator test)",
        description="Calderon et al. (ACL 2025), \"The Alternative Annotator Test for LLM-as-a-Judge\": leave each "
                    "annotator out; on each item, does the judge or that annotator agree better with the others? "
                    "A one-sided paired t-test with the margin ε per annotator, corrected over annotators; the judge "
                    "passes when it wins against at least half of them. Needs a quality with at least 3 annotators "
                    "and 30 items each.")
    _run_options(alt, "repeatable: the run's judges to test (default: every one)")
    margin = alt.add_mutually_exclusive_group()
    margin.add_argument("--epsilon", type=float, metavar="E",
                        help="the cost-benefit margin ε given to the judge (overrides --annotators)")
    margin.add_argument("--annotators", choices=tuple(le.EPSILON_BY_ANNOTATORS), default=le.DEFAULT_ANNOTATORS,
                        help="who the annotators are, for the paper's ε: expert 0.2, skilled 0.15, crowd 0.1 "
                             "(default crowd, the strictest)")
    alt.add_argument("--fdr", choices=("by", "bh"), default="by",
                     help="correction over annotators: by = Benjamini–Yekutieli (the paper's; any dependence), "
                          "bh = Benjamini–Hochberg")
    alt.add_argument("--q", type=float, default=0.05, help="false discovery rate level")
    alt.add_argument("--round-to-scale", action="store_true",
                     help="round the judge's score to the nearest point of an ordinal scale before comparing (the "
                          "annotators rate whole points; a continuous score can never tie an annotator who matches "
                          "another exactly)")
    _output_options(alt)
    alt.set_defaults(handler=run_alt_test)

    est = rsub.add_parser(
        "estimate", help="the mean human label (or pass rate) from a few labels, with and without the judge",
        description="Judge-assisted estimates of the mean human label of the run's items from a few labels: "
                    "PPI++ (Angelopoulos et al. 2023) beside the labels-only estimate, each with a 95% interval; for "
                    "pass/fail qualities also the Rogan–Gladen corrected pass rate (bootstrap over the labelled and "
                    "the judged items), and where the judge gave answer probabilities the confidence above which it "
                    "can be trusted alone (Jung et al. 2024, \"Trust or Escalate\").")
    _run_options(est, "repeatable: the run's judges (default: every one)")
    est.add_argument("--subset", default="all", help="the items: all, open, closed, system:NAME, tag:NAME, ...")
    source = est.add_mutually_exclusive_group(required=True)
    source.add_argument("--labelled", type=int, metavar="N",
                        help="draw N labelled items at random from a dataset that labels every item (to ask: how "
                             "many labels would I need?)")
    source.add_argument("--labels", type=Path, metavar="FILE",
                        help="human labels: CSV or JSON Lines with item_id and label (on the quality's scale)")
    source.add_argument("--reviews", action="store_true", help="the own ratings entered in the Review screen")
    est.add_argument("--seed", type=int, default=0, help="seed of the --labelled draw and of the bootstrap")
    est.add_argument("--active", action="store_true",
                     help="with --labelled N: also draw N expected labels by the judge's uncertainty (active "
                          "inference, Zrnic and Candès 2024) and show their inverse-probability-weighted estimate")
    est.add_argument("--versus-subset", metavar="SUBSET",
                     help="also estimate the difference from this subset (e.g. system:A vs system:B), with its own "
                          "labelled draw")
    est.add_argument("--bootstrap", type=int, default=2000, metavar="N", help="Rogan–Gladen bootstrap resamples")
    est.add_argument("--alpha", type=float, default=0.1,
                     help="selective evaluation: the disagreement the judge may have on the items it keeps")
    est.add_argument("--delta", type=float, default=0.1,
                     help="selective evaluation: the chance that this guarantee fails")
    est.add_argument("--active-budget", type=int, metavar="B",
                     help="with --labels or --reviews: the labels followed `runs label-next --budget B --seed S`; "
                          "adds that plan's inverse-probability-weighted estimate")
    _output_options(est)
    est.set_defaults(handler=run_estimate)

    nxt = rsub.add_parser(
        "label-next", help="which items to label next: drawn by the judge's uncertainty, with known probabilities",
        description="Active statistical inference (Zrnic and Candès 2024): each item is drawn with a probability "
                    "proportional to the spread of the judge's answer distribution, B items expected. Label the "
                    "drawn items (own ratings in the Review screen, or a labels file), then `runs estimate N "
                    "--reviews --active-budget B --seed S` gives the inverse-probability-weighted estimate.")
    nxt.add_argument("run", type=int)
    nxt.add_argument("--budget", type=int, required=True, metavar="B", help="the expected number of labels")
    nxt.add_argument("--seed", type=int, default=0)
    nxt.add_argument("--quality", help="the human-rated quality (default: the run's)")
    nxt.add_argument("--judge", action="append", dest="judges", metavar="NAME")
    nxt.add_argument("--subset", default="all")
    _output_options(nxt)
    nxt.set_defaults(handler=run_label_next)


def _run_options(parser: argparse.ArgumentParser, judges_help: str) -> None:
    parser.add_argument("run", type=int)
    parser.add_argument("--quality", help="the human-rated quality (default: the run's)")
    parser.add_argument("--judge", action="append", dest="judges", metavar="NAME", help=judges_help)


def _output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=FORMATS, default="table")
    parser.add_argument("--output", type=Path, help="write the table here instead of the terminal")


def run_alt_test(args: argparse.Namespace) -> int:
    reports = alt_test_for_run(args.session, args.run, quality=args.quality, judges=args.judges, epsilon=args.epsilon,
                                  annotators=args.annotators, q=args.q, fdr=args.fdr, app_config=args.session.config,
                               round_to_scale=args.round_to_scale)
    if args.format == "table":
        con = render.console()
        for report in reports:
            con.print(render.plain_table(le.alt_test_title(report), le.ALT_TEST_COLUMNS, le.alt_test_rows(report),
                                         right=le.ALT_TEST_COLUMNS[1:-1]))
            render.print_notes(con, le.alt_test_lines(report))
        return 0
    records = [row for report in reports for row in report.records()]
    summaries = [{**report.summary(), "notes": le.alt_test_lines(report)} for report in reports]
    _write(args, records, le.ALT_TEST_COLUMNS_KEYS, title=f"Alternative annotator test — run {args.run}",
           meta={"run": args.run, "tests": summaries})
    return 0


def run_estimate(args: argparse.Namespace) -> int:
    labels = le.read_labels_file(args.labels) if args.labels is not None else None
    app_config = args.session.config
    options: dict[str, Any] = dict(quality=args.quality, judges=args.judges, labelled=args.labelled,
                                   seed=args.seed, active=args.active, labels=labels,
                                   from_reviews=args.reviews, active_budget=args.active_budget,
                                   n_boot=args.bootstrap, alpha=args.alpha, delta=args.delta,
                                   app_config=app_config)
    reports = estimate_for_run(args.session, args.run, subset=args.subset, **options)
    versus = (estimate_for_run(args.session, args.run, subset=args.versus_subset,
                                  **{**options, "active_budget": None})
              if args.versus_subset else [])
    differences = [(a, b, le.estimate_difference(a, b)) for a, b in zip(reports, versus)]
    if args.format == "table":
        con = render.console()
        for report in [*reports, *versus]:
            con.print(render.plain_table(le.estimate_title(report), le.ESTIMATE_COLUMNS, le.estimate_rows(report),
                                         right=le.ESTIMATE_COLUMNS[1:]))
            render.print_notes(con, le.estimate_lines(report))
        for a, b, diff in differences:
            con.print(render.plain_table(f"Difference — judge {a.judge}, {a.quality}", le.ESTIMATE_COLUMNS,
                                         le.difference_rows(a.subset, b.subset, diff), right=le.ESTIMATE_COLUMNS[1:]))
        return 0
    records = [row for report in [*reports, *versus] for row in report.records()]
    for a, b, diff in differences:
        records.extend({"run": a.run_id, "judge": a.judge, "quality": a.quality,
                        "subset": f"{a.subset} − {b.subset}", "labels": f"{a.source}; {b.source}",
                        **e.to_dict(), "reference": None} for e in diff.values())
    _write(args, records, le.ESTIMATE_COLUMNS_KEYS, title=f"Estimates from a few labels — run {args.run}",
           meta={"run": args.run, "notes": [line for r in [*reports, *versus] for line in le.estimate_lines(r)]})
    return 0


def run_label_next(args: argparse.Namespace) -> int:
    plans = label_next(args.session, args.run, budget=args.budget, seed=args.seed, quality=args.quality,
                          judges=args.judges, subset=args.subset, app_config=args.session.config)
    if args.format == "table":
        con = render.console()
        for plan in plans:
            con.print(render.plain_table(f"Label next — run {plan.run_id}, judge {plan.judge}, {plan.quality}",
                                         le.LABEL_NEXT_COLUMNS, le.label_next_rows(plan),
                                         right=le.LABEL_NEXT_COLUMNS[2:]))
            render.print_notes(con, [plan.note, f"then: dialjudge runs estimate {plan.run_id} --reviews "
                                                f"--active-budget {plan.budget} --seed {plan.seed}"])
        return 0
    records = [row for plan in plans for row in le.label_next_records(plan)]
    _write(args, records, ("judge", "order", "item_id", "probability", "judge_score"),
           title=f"Label next — run {args.run}", meta={"run": args.run, "notes": [p.note for p in plans]})
    return 0


def _write(args: argparse.Namespace, records: Sequence[dict[str, Any]], columns: Sequence[str], *, title: str,
           meta: dict[str, Any]) -> None:
    if not records:
        raise DialjudgeError("nothing to write: no judge could be tested")
    text = records_text(records, args.format, columns=columns, title=title, meta=meta)
    if args.output:
        render.write_output(args.output, text)
        render.console(stderr=True).print(f"wrote {len(records)} rows to {args.output}", markup=False)
    else:
        print(text, end="")
