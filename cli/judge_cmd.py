"""`dialjudge judge`: run LLM judges, then print them beside the reference-based metrics.

The options become a :class:`RunRequest` (and a stop and an agreement request); core plans
and runs it and decides which reports follow; this module prints what it is handed.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager

from rich.console import Console
from rich.markup import escape

from dialjudge.core.api import (
    AgreementRequest,
    EngineOptions,
    JudgeOutcome,
    RunPlan,
    RunReports,
    RunRequest,
    RunSummary,
    Session,
    StopRequest,
    judge,
    judge_bench_requests,
    judge_bench_table,
    plan_runs,
    run_judgments,
    stop_rule_for,
)
from dialjudge.core.api.formatting import (
    pair_plan_text,
    problem_lines,
)
from dialjudge.core.api.preferences import (
    on_prepaired_items,
    preference_plan_text,
)
from dialjudge.core.api.reports import (
    DrawSpread,
    LengthAndCertainty,
    label_run_note,
    run_finished,
)
from dialjudge.core.api.types import (
    AnswerConstraint,
    InterJudgeMatrix,
    Judgment,
    Part,
    PoolReport,
    RunStatus,
    ScoringMode,
    Stability,
    StopRule,
    TieRule,
)
from dialjudge.core.errors import ConfigError
from dialjudge.core.format import number_text, percent_text
from dialjudge.core.model import Aggregation, Dataset

from . import batch_cmd, labels_view, protocol_cmd, render
from .dataset_args import open_dataset_of
from .metrics_cmd import add_table_options, emit
from .pairwise_view import add_pair_options, pair_options, report_pairwise
from .preference_view import preference_request, report_preferences
from .progress import ProgressDisplay
from .signals import sigterm_as_interrupt


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("judge", help="score a dataset with LLM judges and compare them with humans")
    add_table_options(p)
    p.add_argument("--template", default="adv-0to1", help="judge template (see prompts/templates)")
    p.add_argument("--judge", action="append", dest="judges", metavar="NAME",
                   help="judge from dialjudge.toml (repeatable; default: smollm2, the bundled model)")
    p.add_argument("--mode", choices=[*(m.value for m in ScoringMode), "pairwise"], default=None,
                   help="logprob (the default where the template supports it): probability-weighted score; "
                        "generate: parse the answer; yesno: p(yes)/(p(yes)+p(no)); pairwise: a pairwise template "
                        "compares two candidates of a context (A, B or tie), every pair in both orders "
                        "(see --pairs, --pair-seed, --pair-scoring)")
    p.add_argument("--top-k", type=int, default=0,
                   help="logprob mode: 0 (default) = expected value over every valid score; K > 0 = Huynh et al.'s "
                        "weighting of the K most likely answers")
    p.add_argument("--constrain", action="store_true",
                   help="generate mode (implied): hold every answer to the template's answer format, so that it "
                        "always parses: a llama.cpp grammar on local GGUF judges; on API judges a JSON schema "
                        "(JSON templates) or options.constrain_with = \"grammar\" for llama.cpp servers")
    p.add_argument("--reasoning", action="store_true",
                   help="with --constrain: one line of free reasoning first, then the constrained answer line")
    p.add_argument("--aspect", help="aspect for aspect templates (coherence, relevance, consistency, fluency)")
    p.add_argument("--kpi", help="KPI for KPI templates (follow-up, implicit-understanding, harmful-input)")
    p.add_argument("--persona", action="append", dest="personas", default=[], metavar="NAME",
                   help="persona (repeatable: sweeps the personas; 'none' for no persona)")
    p.add_argument("--fewshot", default="none", help="none, random:K, bm25-context:K, bm25-response:K, bm25-both:K")
    p.add_argument("--fewshot-draws", type=int, default=1, metavar="R",
                   help="with --fewshot random:K, run R random draws (seeds seed..seed+R-1) and report each "
                        "judge's correlation as mean ± std over the draws (as in Huynh et al.)")
    p.add_argument("--limit", type=int, help="judge only the first N items of the subset")
    p.add_argument("--repeats", type=int, default=1, help="repeat every judgment R times with seeds seed..seed+R-1")
    p.add_argument("--name", default="", help="a name for the run")
    p.add_argument("--no-metrics", action="store_true", help="leave the reference-based metrics out of the table")
    p.add_argument("--fresh", action="store_true", help="start a new run instead of resuming an unfinished one "
                   "or showing an identical finished one again")
    p.add_argument("--majority-ties", choices=[r.value for r in TieRule], default=TieRule.EXCLUDE.value,
                   help="label qualities, a tied human majority: exclude the item, take the first tied label "
                        "in the quality's label list, or take the file's published majority (else exclude)")
    p.add_argument("--yes-label", metavar="LABEL",
                   help="two-label qualities: the label a judge's yes (or 1) means, when the label names do not "
                        "say it (recorded with the run)")
    p.add_argument("--stop-when-ci-width", type=float, metavar="W",
                   help="stop once the bootstrap CI of Spearman's ρ with the humans is narrower than W (with "
                        "--baseline-run: once the CI of Δρ excludes 0 or is narrower than W); resume to extend")
    p.add_argument("--baseline-run", type=int, metavar="N",
                   help="stop once the CI of Δρ against run N (paired on shared items) excludes 0, at a "
                        "Bonferroni-over-looks level")
    p.add_argument("--check-every", type=int, default=5, metavar="K",
                   help="the stop rule looks every K completed contexts (from the 10th on)")
    p.add_argument("--order-seed", type=int, default=0, metavar="S",
                   help="seed of the random order in which contexts are judged")
    p.add_argument("--protocol", choices=("judge-bench",),
                   help="judge-bench: on a JUDGE-BENCH file, one run per metric (--quality, repeatable; default "
                        "every metric), scored as the protocol does (generate: the parsed answer) unless --mode "
                        "says otherwise, then JUDGE-BENCH's table: Spearman ρ / Cohen's κ per metric, mean ± sd "
                        "per dataset, with the scoring named (also from stored runs: runs protocol judge-bench RUN ...)")
    p.add_argument("--label-template", default="label-choice", metavar="TEMPLATE",
                   help="with --protocol: the template of categorical metrics (graded ones use --template)")
    add_pair_options(p)
    batch_cmd.add_judge_options(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    preference_request(args)  # a wrong --tie-band is refused before anything is judged
    session: Session = args.session
    dataset = open_dataset_of(args, args.dataset)
    if args.protocol == "judge-bench":
        return _judge_every_metric(args, dataset)
    plans = plan_runs(run_request(args), dataset, session.config)
    if args.batch_out is not None:
        return batch_cmd.write(args, plans, dataset)
    args.continue_run, stop = batch_cmd.awaiting_decision(args, plans)
    if stop:
        return 2
    agreement = agreement_request(args)
    stop_rule = stop_rule_for(session, stop_request(args), plans[0], dataset, aggregation=agreement.aggregation)
    outcome = _judge(args, dataset, plans, stop_rule)
    if on_prepaired_items(plans[0].config, dataset):  # pre-paired data: the humans' votes (issue 21)
        _show_preferences(args, dataset, plans[0], outcome.summaries[0])
        return 0 if outcome.finished else 1
    reports = outcome.reports(agreement, for_file=_writes_file(args))
    _print_outcome(outcome.summaries[0], reports, stop_rule if outcome.stopped else None)
    _show_reports(args, reports)
    return 0 if outcome.finished else 1


def _judge_every_metric(args: argparse.Namespace, dataset: Dataset) -> int:
    """--protocol judge-bench: one run per metric of the file, then JUDGE-BENCH's table of those runs."""
    if args.stop_when_ci_width is not None or args.baseline_run is not None:
        raise ConfigError("a stop rule watches one run; it cannot be combined with --protocol")
    session: Session = args.session
    requests = judge_bench_requests(run_request(args), dataset, tuple(args.qualities or ()),
                                    label_template=args.label_template)
    con = render.console(stderr=True)
    summaries: list[RunSummary] = []
    for request in requests:
        con.print(f"metric {request.quality!r} (template {request.template})", markup=False)
        summary = _judge(args, dataset, plan_runs(request, dataset, session.config)[:1], None).summaries[0]
        _print_failures(con, summary)
        summaries.append(summary)
        if summary.status != RunStatus.FINISHED:
            con.print(f"[yellow]run {summary.run_id} {summary.status}; run the same command again to resume "
                      "it[/yellow]")
            return 1
    run_ids = [s.run_id for s in summaries]
    table = judge_bench_table(session, run_ids, session.config, tie_rule=args.majority_ties)
    protocol_cmd.show(table, args, title=f"JUDGE-BENCH protocol — {dataset.name} (runs "
                                         f"{', '.join(map(str, run_ids))})")
    return 0 if run_finished(summaries, stopped=False) else 1


def run_request(args: argparse.Namespace) -> RunRequest:
    """The run the options ask for."""
    if args.reasoning and not args.constrain:
        raise ConfigError("--reasoning goes with --constrain (free reasoning before a constrained answer)")
    constrain = (AnswerConstraint.OFF if not args.constrain else
                 AnswerConstraint.REASONING if args.reasoning else AnswerConstraint.ANSWER)
    pairs, pair_seed, both_orders, mode = pair_options(args)
    return RunRequest(
        template=args.template, judges=tuple(args.judges or ()), mode=mode, constrain=constrain.value,
        top_k=args.top_k, aspect=args.aspect, kpi=args.kpi, quality=(args.qualities or [None])[0],
        personas=tuple(args.personas), fewshot=args.fewshot, fewshot_draws=args.fewshot_draws,
        subset=None if args.subset == "all" and args.kpi else args.subset, limit=args.limit,
        repeats=args.repeats, name=args.name, yes_label=args.yes_label, pairs=pairs, pair_seed=pair_seed,
        pair_both_orders=both_orders)


def stop_request(args: argparse.Namespace) -> StopRequest:
    return StopRequest(ci_width=args.stop_when_ci_width, baseline_run=args.baseline_run,
                       check_every=args.check_every, seed=args.seed)


def agreement_request(args: argparse.Namespace) -> AgreementRequest:
    return AgreementRequest(qualities=tuple(args.qualities or ()), level=args.level,
                            aggregation=Aggregation(args.aggregate), include_metrics=not args.no_metrics,
                            n_boot=args.bootstrap, seed=args.seed, tie_rule=args.majority_ties,
                            metric_profile=args.profile)


def _writes_file(args: argparse.Namespace) -> bool:
    return args.format != "table" or args.output is not None


def _judge(args: argparse.Namespace, dataset: Dataset, plans: list[RunPlan],
           stop_rule: StopRule | None) -> JudgeOutcome:
    """Run every plan (one per few-shot draw) with a progress bar; stop at the first that does not finish."""
    con = render.console(stderr=True)
    pairs = preference_plan_text(plans[0].config, dataset) or pair_plan_text(plans[0], dataset)
    if pairs is not None:
        con.print(pairs, markup=False, highlight=False)

    @contextmanager
    def progress(plan: RunPlan) -> Iterator[ProgressDisplay]:
        if len(plans) > 1:
            con.print(f"few-shot draw {plan.config.fewshot.spec}")
        with ProgressDisplay(con, "judging") as display, sigterm_as_interrupt():
            yield display

    return judge(args.session, plans, dataset, display=progress, stop_rule=stop_rule, fresh=args.fresh,
                 reuse_finished=not args.fresh and not args.name,
                 options=EngineOptions(context_order_seed=args.order_seed,
                                       run_id=getattr(args, "continue_run", None)))


def _show_preferences(args: argparse.Namespace, dataset: Dataset, plan: RunPlan, summary: RunSummary) -> None:
    """A run on pre-paired items: its counts, then the agreement with the humans' votes."""
    judgments = run_judgments(args.session, summary.run_id)
    con = render.console(stderr=True)
    _print_run_summary(con, judgments, summary)
    _print_failures(con, summary)
    if summary.status != RunStatus.FINISHED:
        con.print(f"[yellow]run {summary.run_id} {summary.status}; run the same command again to resume it[/yellow]")
    for warning in dataset.meta.get("warnings", ()):
        con.print(f"[yellow]warning: {escape(str(warning))}[/yellow]")
    report_preferences(args, dataset, plan, judgments, summary.run_id)


def _print_outcome(summary: RunSummary, reports: RunReports, stopped_by: StopRule | None) -> None:
    """The run's counts, its failures, and why it stopped where it did not finish."""
    con = render.console(stderr=True)
    _print_run_summary(con, reports.judgments, summary)
    _print_failures(con, summary)
    if stopped_by is not None and stopped_by.last is not None:
        state = stopped_by.last
        con.print(f"run {summary.run_id} stopped by the stop rule after {state.n_items} items in "
                  f"{state.n_contexts} contexts: {state.message}", markup=False)
        con.print("[dim]resume without the stop rule (or with a narrower W) to extend it[/dim]")
    elif summary.status != RunStatus.FINISHED:
        con.print(f"[yellow]run {summary.run_id} {summary.status}; run the same command again to resume it[/yellow]")
    elif summary.shown_again:
        con.print(f"run {summary.run_id} had finished with exactly these settings: shown again, nothing asked "
                  "(--fresh judges anew, --name keeps a named copy)", markup=False)
    for warning in reports.dataset.meta.get("warnings", ()):
        con.print(f"[yellow]warning: {escape(str(warning))}[/yellow]")


def _show_reports(args: argparse.Namespace, reports: RunReports) -> None:
    """Print (or write) the reports core chose, in its order."""
    dataset, plan = reports.dataset, reports.plan
    if reports.pairwise is not None and reports.agreement is not None:
        report_pairwise(args, dataset, plan, reports.pairwise, reports.agreement, reports.run_id)
        return
    if reports.inter_judge is not None:
        _print_inter_judge(reports.inter_judge)  # before the pooled column: does pooling make sense?
    if reports.agreement is not None:
        # A binary quality is compared both ways: a written file holds the label comparison too.
        labels = reports.labels if _writes_file(args) else None
        emit(reports.agreement, args, title=f"Judges and metrics vs humans — {dataset.name}", dataset=dataset,
             labels=labels)
    if reports.label_agreement is not None:
        _print_label_agreement(reports.label_agreement)
    if reports.labels is not None and (reports.agreement is None or not _writes_file(args)):
        _report_labels(args, reports)
    if reports.length_and_certainty:
        _print_length_and_certainty(reports.length_and_certainty, str(plan.quality))
    if reports.stability:
        _print_stability(reports.stability, binary=reports.label_quality)
    if reports.draw_spread:
        _print_draw_spread(reports.draw_spread, reports.draw_runs, str(plan.quality))


def _report_labels(args: argparse.Namespace, reports: RunReports) -> None:
    """Judges against the human majority label: printed, or written in --format. A comparison that is
    impossible says why; the judgments are stored all the same."""
    report = reports.labels
    assert report is not None
    dataset, config = reports.dataset, reports.plan.config
    title = f"Judges vs humans — {dataset.name}"
    run_note = label_run_note(config, reports.run_id)
    if not _writes_file(args):
        con = render.console()
        labels_view.print_report(con, report, title=title)
        render.print_notes(con, [run_note])
        return
    fmt = "markdown" if args.format == "table" else args.format
    labels_view.write_report(report, fmt, args.output, title=title,
                             meta={"dataset": dataset.name, "run": reports.run_id, "run_note": run_note})
    if report.reason:
        render.console(stderr=True).print(f"No comparison with the human labels of {report.quality!r}: "
                                          f"{report.reason}", markup=False)


def _print_inter_judge(matrix: InterJudgeMatrix) -> None:
    rows = [(a, *(f"{_num(matrix.values[i][j])} (n={matrix.n[i][j]})" for j in range(len(matrix.judges))))
            for i, a in enumerate(matrix.judges)]
    render.console().print(render.plain_table("Inter-judge agreement (Spearman ρ on items both scored)",
                                              ["judge × judge", *matrix.judges], rows, right=matrix.judges))


def _print_length_and_certainty(rows_in: list[LengthAndCertainty], quality: str) -> None:
    """Verbosity bias and agreement split by human certainty, one row per judge."""
    rows = [(r.judge, r.bias.n, _num(r.bias.judge_length_rho), _num(r.bias.human_length_rho),
             _num(r.bias.judge_human_rho), _num(r.bias.partial_rho),
             f"{_num(r.split.agree.spearman.value)} (n={r.split.agree.n})",
             f"{_num(r.split.disagree.spearman.value)} (n={r.split.disagree.n})") for r in rows_in]
    render.console().print(render.plain_table(
        f"Length bias and human certainty — {quality} (Spearman ρ)",
        ["judge", "n", "judge~length", "humans~length", "judge~humans", "… length partialled out",
         "annotators agree (spread ≤ 1)", "annotators disagree"], rows,
        right=("n", "judge~length", "humans~length", "judge~humans", "… length partialled out",
               "annotators agree (spread ≤ 1)", "annotators disagree")))


def _print_draw_spread(spreads: list[DrawSpread], run_ids: tuple[int, ...], quality: str) -> None:
    rows = []
    for spread in spreads:
        (pm, ps), (sm, ss) = spread.pearson_mean_std, spread.spearman_mean_std
        rows.append((spread.evaluator, len(run_ids), "–" if pm is None else f"{pm:.3f} ± {ps:.3f}",
                     "–" if sm is None else f"{sm:.3f} ± {ss:.3f}",
                     ", ".join(f"{v:.3f}" for v in spread.spearman)))
    render.console().print(render.plain_table(
        f"Random few-shot draws — runs {', '.join(map(str, run_ids))} ({quality})",
        ["judge", "draws", "Pearson mean ± std", "Spearman mean ± std", "Spearman per draw"], rows,
        right=("draws", "Pearson mean ± std", "Spearman mean ± std")))


def _print_failures(con: Console, summary: RunSummary) -> None:
    """Why judgments failed, with counts, and which judges a circuit breaker paused."""
    for line, part in problem_lines(summary):
        if part is not Part.FAILURES:  # the reasons follow as a table
            con.print(line, style="red" if part is Part.ERROR else "yellow", markup=False, highlight=False)
    if summary.failure_reasons:
        con.print(render.plain_table(
            f"Failures of run {summary.run_id}", ["reason", "count"],
            [(reason, count) for reason, count in summary.failure_reasons], right=("count",)))


def _print_run_summary(con: Console, table: Mapping[str, Mapping[str, Judgment]], summary: RunSummary) -> None:
    rows = []
    for judge_name, judgments in table.items():
        values = list(judgments.values())
        # Throughput (this session's judgments / wall time), not 1 / mean latency: with
        # concurrent requests the two differ by the concurrency.
        rate = summary.items_per_s(judge_name)
        rows.append((judge_name, len(values), sum(j.failed for j in values), sum(j.cached for j in values),
                     f"{rate:.2f}" if rate is not None else "–",
                     _mean(j.prompt_tokens for j in values), _mean(j.evaluated_tokens for j in values),
                     _mean(j.completion_tokens for j in values)))
    con.print(render.plain_table(
        f"Run {summary.run_id} ({summary.status}, {summary.elapsed_s:.1f} s)",
        ["judge", "judged", "failed", "cached", "items/s", "prompt tok/item", "evaluated tok/item", "answer tok/item"],
        rows, right=("judged", "failed", "cached", "items/s", "prompt tok/item", "evaluated tok/item",
                     "answer tok/item")))
    con.print("[dim]evaluated: prompt tokens actually run (the rest reused from the previous prompt's cache; an "
              "API server does not report its reuse); answer: generated tokens, or in logprob/yesno mode the "
              "answer tokens scored without sampling[/dim]")


def _print_label_agreement(report: PoolReport) -> None:
    rows = [(name, a.n, _pct(a.percent), _num(a.kappa)) for name, a in report.judges.items()]
    if len(report.judges) > 1:
        rows.append((f"Max-Vote ({len(report.judges)} judges)", report.pool.n, _pct(report.pool.percent),
                     _num(report.pool.kappa)))
    con = render.console()
    con.print(render.plain_table(f"Agreement with max-voted humans — {report.quality}",
                                 ["judge", "n", "% agreement", "Cohen's κ"], rows,
                                 right=("n", "% agreement", "Cohen's κ")))
    con.print(f"[dim]human vote ties: {len(report.human_ties)}; judge vote ties: {len(report.judge_ties)} "
              "(broken towards the smaller label)[/dim]")


def _print_stability(stabilities: Mapping[str, Stability], *, binary: bool) -> None:
    rows = []
    for s in stabilities.values():
        spread = "–" if s.human.mean is None else f"{s.human.mean:.3f} ± {s.human.std or 0:.3f}"
        self_agreement = s.percent_agreement if binary else s.spearman
        rows.append((s.judge, s.repeats, s.items, _num(self_agreement), _num(s.alpha), spread, s.human_measure))
    render.console().print(render.plain_table(
        "Stability over repeats", ["judge", "repeats", "items", "self-agreement", "α", "vs humans (mean ± std)",
                                   "measure"], rows,
        right=("repeats", "items", "self-agreement", "α", "vs humans (mean ± std)")))


def _mean(values: Iterable[int]) -> str:
    vals = list(values)
    return f"{sum(vals) / len(vals):.0f}" if vals else "–"


def _num(x: float | None) -> str:
    return number_text(x)


def _pct(x: float | None) -> str:
    return percent_text(x)
